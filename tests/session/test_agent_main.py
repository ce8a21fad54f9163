"""A main session run as an agent (`--agent`, or settings' `agent`): the agent's prompt,
tools, model, turns and mode, never more than the flags and settings allow
(`session.agent_options`, applied as the session resolves)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stayer.agents.model import AgentDefinition
from stayer.errors import ConfigError
from stayer.events import Event, SessionStarted
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.agent_options import as_agent
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.fakes.tools import Echo, Silent

BUILTINS = ("Bash", "Read", "Grep", "Glob", "Edit", "Write")


def agent(**fields: Any) -> AgentDefinition:
    given: dict[str, Any] = {
        "name": "reviewer",
        "description": "Reviews a change.",
        "prompt": "You review code and report problems.",
        "scope": "project",
        "source": "/p/.claude/agents/reviewer.md",
    }
    return AgentDefinition(**{**given, **fields})


def folded(definition: AgentDefinition, settled: QueryOptions, flags: QueryOptions) -> Any:
    return as_agent(definition, settled, flags=flags, builtins=BUILTINS)


def test_the_agent_fills_in_what_the_flags_left_out() -> None:
    definition = agent(
        tools=("Read", "Grep", "Agent(worker)"),
        disallowed_tools=("Bash(rm *)",),
        model="haiku",
        max_turns=4,
        permission_mode="plan",
    )
    settled = QueryOptions(permission_mode="default", disallowed_tools=("Write",))

    options, notes = folded(definition, settled, QueryOptions(system_prompt=""))

    assert options.system_prompt == "You review code and report problems."
    assert options.tools == ["Read", "Grep"]
    assert options.disallowed_tools == ("Write", "Bash(rm *)")
    assert (options.model, options.max_turns, options.permission_mode) == ("haiku", 4, "plan")
    assert notes == (
        "agent reviewer: tools entry Agent(worker) names only some of Agent's calls, which the "
        "tools list cannot hold a session to; Agent is left out (list it bare to give all of it)",
    )


def test_a_tools_entry_with_a_specifier_gives_none_of_the_tool() -> None:
    definition = agent(tools=("Read", "Bash(git log:*)", "Echo(x)"))
    settled = QueryOptions(extra_tools=(Echo(),))
    options, notes = folded(definition, settled, QueryOptions())
    assert (options.tools, tuple(options.extra_tools)) == (["Read"], ())
    assert [note.split(" names ")[0] for note in notes] == [
        "agent reviewer: tools entry Bash(git log:*)",
        "agent reviewer: tools entry Echo(x)",
    ]


def test_the_flags_win_and_the_agent_never_adds_a_tool_they_left_out() -> None:
    definition = agent(tools=("Read", "Bash"), model="haiku", max_turns=4, permission_mode="plan")
    flags = QueryOptions(
        system_prompt="Mine.",
        tools="Read,Grep",
        model="opus",
        max_turns=9,
        permission_mode="dontAsk",
    )
    options, notes = folded(definition, flags, flags)  # no settings: the flags as settled

    assert options.system_prompt == "Mine."
    assert options.tools == ["Read"]
    assert (options.model, options.max_turns, options.permission_mode) == ("opus", 9, "dontAsk")
    assert notes == ()


def test_the_callers_own_tools_are_picked_by_the_agents_tools_too() -> None:
    kept, dropped = Echo(), Silent()
    settled = QueryOptions(extra_tools=(kept, dropped))

    options, notes = folded(agent(tools=("Read", "Echo")), settled, QueryOptions())
    assert (options.tools, tuple(options.extra_tools), notes) == (["Read"], (kept,), ())

    unlimited, _ = folded(agent(), settled, QueryOptions())
    assert tuple(unlimited.extra_tools) == (kept, dropped)


def test_mcp_servers_the_agents_tools_do_not_name_are_denied_whole() -> None:
    definition = agent(tools=("Read", "mcp__kitchen", "mcp__clock__now", "mcp__all__*"))
    servers = ("kitchen", "clock", "all", "other", "plugin_tidy_kitchen")

    options, notes = as_agent(
        definition, QueryOptions(), flags=QueryOptions(), builtins=BUILTINS, servers=servers
    )

    assert options.disallowed_tools == ("mcp__other", "mcp__plugin_tidy_kitchen")
    assert notes == ()
    unlimited, _ = as_agent(
        agent(), QueryOptions(), flags=QueryOptions(), builtins=BUILTINS, servers=servers
    )
    assert unlimited.disallowed_tools == ()


@pytest.mark.parametrize(
    ("start", "wanted", "runs_in"),
    [
        ("default", "acceptEdits", "default"),
        ("default", "bypassPermissions", "default"),
        ("plan", "default", "plan"),
        ("acceptEdits", "default", "default"),
        ("bypassPermissions", "acceptEdits", "acceptEdits"),
    ],
)
def test_the_agents_mode_never_allows_more_than_the_settings_start_in(
    start: str, wanted: str, runs_in: str
) -> None:
    options, notes = folded(
        agent(permission_mode=wanted), QueryOptions(permission_mode=start), QueryOptions()
    )
    assert options.permission_mode == runs_in
    if runs_in != wanted:
        assert notes == (
            f"agent reviewer: permissionMode {wanted} would allow more than {start}, the mode "
            f"the settings start in; running in {start} (set it with --permission-mode)",
        )


def test_an_agent_with_a_mode_stayer_does_not_know_stops_the_session_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"^agent reviewer \(/p/.claude/agents/reviewer.md\): "):
        folded(agent(permission_mode="sometimes"), QueryOptions(), QueryOptions())


AGENTS = {
    "reviewer": {
        "description": "Reviews a change.",
        "prompt": "You review code and report problems.",
        "tools": ["Read", "Grep"],
        "model": "reviewer-model",
    }
}


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {
        "STAYER_CONFIG_DIR": str(tmp_path / "config"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "HOME": str(tmp_path / "home"),
    }
    return QueryOptions(cwd=tmp_path, provider=model, env=env, agents=AGENTS, **more)


async def run(session: Session, prompt: str) -> list[Event]:
    return [event async for event in session.submit(prompt)]


async def test_the_session_runs_as_the_agent_with_its_prompt_tools_and_model(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("Looks fine.")])
    async with Session(options(tmp_path, model, agent="reviewer")) as session:
        events = await run(session, "review the last commit")

    started = events[0]
    assert isinstance(started, SessionStarted)
    assert started.agent == "reviewer"
    assert "reviewer" in started.agents and "general-purpose" in started.agents
    (request,) = model.requests
    assert request.system.startswith("You review code and report problems.\n")
    assert sorted(tool.name for tool in request.tools) == ["Grep", "Read"]
    assert request.model == "reviewer-model"


async def test_the_settings_agent_counts_and_a_session_without_one_names_none(
    tmp_path: Path,
) -> None:
    (tmp_path / ".stayer").mkdir()
    (tmp_path / ".stayer" / "settings.json").write_text(json.dumps({"agent": "reviewer"}))
    model = ScriptedProvider([text("ok"), text("ok")])
    async with Session(options(tmp_path, model)) as session:
        (started, *_) = await run(session, "hi")
    assert isinstance(started, SessionStarted) and started.agent == "reviewer"

    (tmp_path / ".stayer" / "settings.json").write_text("{}")
    async with Session(options(tmp_path, model)) as session:
        (started, *_) = await run(session, "hi")
    assert isinstance(started, SessionStarted) and started.agent is None
    assert not model.requests[1].system.startswith("You review code")


def test_an_unknown_agent_named_by_the_settings_stops_the_session_saying_so(
    tmp_path: Path,
) -> None:
    (tmp_path / ".stayer").mkdir()
    (tmp_path / ".stayer" / "settings.json").write_text(json.dumps({"agent": "nobody"}))
    with pytest.raises(ConfigError) as caught:
        Session(options(tmp_path, ScriptedProvider([])))
    assert str(caught.value).startswith('settings\' "agent": nobody: no such agent; the agents')


def test_an_unknown_agent_stops_the_session_listing_the_agents(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        Session(options(tmp_path, ScriptedProvider([]), agent="nobody"))
    assert str(caught.value).startswith("--agent nobody: no such agent; the agents are: ")
    assert "general-purpose, reviewer" in str(caught.value)


def test_an_agent_naming_task_gets_the_agent_tool() -> None:
    options, notes = as_agent(
        agent(tools=("Read", "Task")),
        QueryOptions(),
        flags=QueryOptions(),
        builtins=(*BUILTINS, "Agent"),
    )
    assert options.tools == ["Read", "Agent"]
    assert notes == ()
