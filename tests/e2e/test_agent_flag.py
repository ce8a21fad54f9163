"""`--agent NAME` over the real CLI, the fake model server on the wire: the main session runs
as the agent (its prompt, only its tools, its model), an unknown name or bad `--agents` stops
the run in one line, and an agent file that cannot be used is said, not skipped."""

from __future__ import annotations

import json
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = ROOT / "tests" / "mcp_servers" / "kitchen.py"
STREAM = ("--output-format", "stream-json", "--verbose")
AGENTS = json.dumps(
    {
        "reviewer": {
            "description": "Reviews a change and reports problems.",
            "prompt": "You are the reviewer. Read the change and list its problems.",
            "tools": ["Read", "Grep"],
        }
    }
)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """User folders of the test's own, so no real settings, agents or plugins apply."""
    folder = tmp_path / "home"
    folder.mkdir()
    return {"HOME": str(folder), "STAYER_CONFIG_DIR": str(folder / ".stayer"),
            "CLAUDE_CONFIG_DIR": str(folder / ".claude")}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def init_line(stdout: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return next(line for line in lines if line.get("subtype") == "init")


def system_text(request: RecordedRequest) -> str:
    body = request.body
    assert isinstance(body, dict)
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


def tool_names(request: RecordedRequest) -> list[str]:
    body = request.body
    assert isinstance(body, dict)
    return sorted(tool["name"] for tool in body.get("tools", []))


def test_the_session_runs_as_the_agent_named(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(reply("No problems found."))
    done = stayer("-p", "review it", "--agents", AGENTS, "--agent", "reviewer", *STREAM,
                  cwd=project, env={**server.env(), **home})  # fmt: skip

    assert done.status == 0, done.stderr
    (request,) = server.requests
    system = system_text(request)
    assert system.startswith("You are the reviewer. Read the change and list its problems.")
    assert str(project) in system  # stayer's facts about where it runs still follow
    assert tool_names(request) == ["Grep", "Read"]
    init = init_line(done.stdout)
    assert {"reviewer", "general-purpose"} <= set(init["agents"])
    assert sorted(init["tools"]) == ["Grep", "Read"]


def test_the_agent_gets_only_the_mcp_servers_its_tools_name(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    kitchen = {"command": sys.executable, "args": [str(KITCHEN)]}
    config = json.dumps({"mcpServers": {"kitchen": kitchen, "pantry": kitchen}})
    agents = json.loads(AGENTS)
    agents["reviewer"]["tools"] = ["Read", "mcp__kitchen"]
    server.enqueue(reply("ok"))
    done = stayer("-p", "hi", "--agents", json.dumps(agents), "--agent", "reviewer",
                  "--mcp-config", config, cwd=project,
                  env={**server.env(), **home, "MCP_CONNECTION_NONBLOCKING": "0"})  # fmt: skip

    assert done.status == 0, done.stderr
    names = tool_names(server.requests[0])
    assert "Read" in names and "mcp__kitchen__add" in names
    assert not [name for name in names if name.startswith("mcp__pantry")]


def test_without_agent_the_session_is_its_own(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(reply("hi"))
    done = stayer("-p", "hi", "--agents", AGENTS, *STREAM, cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 0, done.stderr
    assert not system_text(server.requests[0]).startswith("You are the reviewer")
    assert "Bash" in tool_names(server.requests[0])


def test_an_unknown_agent_stops_the_run_in_one_line_listing_the_agents(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    done = stayer("-p", "hi", "--agents", AGENTS, "--agent", "nobody", cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 2
    assert done.stderr.startswith("stayer: --agent nobody: no such agent; the agents are: ")
    assert "reviewer" in done.stderr and done.stderr.count("\n") == 1
    assert server.requests == []


def test_bad_agents_json_stops_the_run_in_one_line(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    done = stayer("-p", "hi", "--agents", "{not json", cwd=project, env={**server.env(), **home})

    assert done.status == 2
    assert done.stderr.startswith("stayer: --agents: not ") and "JSON" in done.stderr
    assert done.stderr.count("\n") == 1
    assert server.requests == []


READERS = pytest.mark.skipif(
    find_spec("stayer.agents.plugins") is None,
    reason="needs the agents package's file readers",
)


@READERS
def test_an_agent_file_sets_prompt_tools_model_turns_and_a_stricter_mode(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change.\ntools: Read, Grep, Bash\n"
        "disallowedTools: Bash\nmodel: haiku\nmaxTurns: 1\npermissionMode: plan\n---\n"
        "You are the file's reviewer.\n"
    )
    server.enqueue(reply(ToolCall("toolu_1", "Read", {"file_path": str(agents)})))
    done = stayer("-p", "review it", "--agent", "reviewer", *STREAM, cwd=project,
                  env={**server.env(), **home})  # fmt: skip

    assert done.status == 1, done.stderr  # one turn, and the model wanted another
    (request,) = server.requests
    assert system_text(request).startswith("You are the file's reviewer.")
    assert tool_names(request) == ["Grep", "Read"]
    assert "haiku" in request.model
    assert init_line(done.stdout)["permissionMode"] == "plan"
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["subtype"] == "error_max_turns"


@READERS
def test_an_agent_without_memory_leaves_the_memory_files_out(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    (project / "CLAUDE.md").write_text("Always answer in French.\n")
    server.enqueue(reply("ok"), reply("ok"))

    own = stayer("-p", "hi", cwd=project, env={**server.env(), **home})
    explore = stayer("-p", "hi", "--agent", "Explore", cwd=project, env={**server.env(), **home})

    assert (own.status, explore.status) == (0, 0), explore.stderr
    assert "Always answer in French." in system_text(server.requests[0])
    assert "Always answer in French." not in system_text(server.requests[1])
