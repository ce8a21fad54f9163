"""The agents claude-agent-sdk sends in `initialize` join the command line's `--agents` and are
the subagents the session runs; a malformed `agents` is one line, and the session never opens."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from claude_agent_sdk import AgentDefinition

from stayer.errors import ConfigError
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.tools.names import AGENT
from stayer.ui.sdk.agents import with_agents
from stayer.ui.sdk.control import ControlChannel
from stayer.ui.sdk.wiring import WIRINGS
from tests.ui.sdk.wire import Wire

CHECKER = AgentDefinition(description="Checks spelling.", prompt="You check spelling.")
LINTER = {"description": "Lints.", "prompt": "You lint."}


def sent(agent: AgentDefinition) -> dict[str, object]:
    """An agent as the SDK puts it in `initialize` (its fields that are set)."""
    return {key: value for key, value in asdict(agent).items() if value is not None}


async def test_the_sdks_agents_join_the_command_lines_and_run(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            tool_call(AGENT, {"description": "check", "prompt": "check README",
                              "subagent_type": "checker", "run_in_background": False}),
            text("all fine"),
            text("done"),
        ]
    )  # fmt: skip
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    options = QueryOptions(
        cwd=tmp_path, provider=model, env=env, persist_session=False,
        agents=json.dumps({"linter": LINTER}),
    )  # fmt: skip
    initialize = {"subtype": "initialize", "agents": {"checker": sent(CHECKER)}}

    options, reply = with_agents(options, initialize, ControlChannel(Wire()))

    assert reply == {}
    assert options.agents == {"linter": LINTER, "checker": sent(CHECKER)}
    async with Session(options) as session:
        _ = [event async for event in session.submit("check the spelling")]
    parent, child, _ = model.requests
    assert "You check spelling." in child.system and "You check spelling." not in parent.system


def test_agents_that_are_not_an_object_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^initialize: agents must be an object"):
        with_agents(QueryOptions(cwd=tmp_path), {"agents": ["checker"]}, ControlChannel(Wire()))


def test_no_agents_leaves_the_options_as_they_were(tmp_path: Path) -> None:
    options = QueryOptions(cwd=tmp_path, agents='{"linter": {}}')
    assert with_agents(options, {"subtype": "initialize"}, ControlChannel(Wire()))[0] is options


def test_initialize_applies_it() -> None:
    assert with_agents in WIRINGS
