"""A person meets MCP servers in the REPL: /mcp shows each server and its state; a server's
prompt is a slash command once the server is up, and sends its text to the model; a project's
.mcp.json servers are asked about as the REPL opens, and approved ones start at once (their
tools in the next request) while "Not now" starts nothing. Real `stayer`, the fake model
server, the real test server over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.tty.harness import OpenPane, idle, make_repo, needs_tmux, tail

pytestmark = [needs_tmux, pytest.mark.timeout(60)]

KITCHEN = Path(__file__).resolve().parents[1] / "mcp_servers" / "kitchen.py"
KITCHEN_ENTRY: dict[str, Any] = {"command": sys.executable, "args": [str(KITCHEN)]}
QUESTION = "This project's .mcp.json asks to start MCP servers"
WAIT_FOR_SERVERS = {"MCP_CONNECTION_NONBLOCKING": "0"}


def mcp_config(**servers: dict[str, Any]) -> str:
    return json.dumps({"mcpServers": servers})


def tool_names(server: FakeModelServer) -> list[str]:
    body = server.requests[-1].body
    assert isinstance(body, dict)
    return [tool["name"] for tool in body.get("tools", [])]


def below_rules(screen: str) -> str:
    """What the question or input box area shows."""
    box, _ = tail(screen)
    return "\n".join(box)


def test_mcp_shows_each_server_and_its_state(
    server: FakeModelServer, open_pane: OpenPane, tmp_path: Path
) -> None:
    config = mcp_config(kitchen=KITCHEN_ENTRY, broken={"command": str(tmp_path / "nope")})
    with open_pane("--mcp-config", config, env=WAIT_FOR_SERVERS) as pane:
        pane.wait_for("MCP server broken failed: command not found")  # before any prompt
        server.enqueue(reply("Hello."))
        pane.submit("hi")  # the run waits for the servers first
        pane.wait_for(lambda s: "Hello." in s and idle(s), 40)
        pane.submit("/mcp")
        pane.wait_for(lambda s: "MCP servers:" in s and idle(s))
        everything = " ".join(pane.scrollback().split())  # long lines are wrapped
    listed = everything[everything.rindex("MCP servers:") :]
    assert "kitchen connected · 12 tools · --mcp-config" in listed
    assert f"broken failed: command not found: {tmp_path / 'nope'} · --mcp-config" in listed
    assert everything.count("MCP server broken failed") == 1  # not again as the run began
    assert "Logs (each server's stderr):" in listed and "/mcp-logs/" in listed.replace(" ", "")
    assert "mcp__kitchen__echo" in tool_names(server)


def test_a_prompt_command_appears_and_sends_its_text(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    with open_pane("--mcp-config", mcp_config(kitchen=KITCHEN_ENTRY)) as pane:
        pane.wait_idle()
        pane.type("/mcp__")  # nothing to complete until the server is up: then the menu has it
        pane.wait_for("mcp__kitchen__review", 30)
        pane.send("C-u")
        server.enqueue(reply("Looks fine to me."))
        pane.submit("/mcp__kitchen__review 'x = 1'")
        pane.wait_for(lambda s: "Looks fine to me." in s and idle(s), 20)
    assert "Please review: x = 1" in json.dumps(server.requests[-1].messages)


def _project(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text(mcp_config(kitchen=KITCHEN_ENTRY))
    return repo


def test_approving_a_project_server_starts_it_for_the_next_request(
    server: FakeModelServer, open_pane: OpenPane, tmp_path: Path
) -> None:
    repo = _project(tmp_path)
    with open_pane(repo=repo) as pane:
        screen = pane.wait_for(lambda s: QUESTION in s and "Esc to cancel" in s)
        # the REPL wraps a long command line itself (not the terminal), wherever the checkout is
        shown = "".join(pane.screen().split())
        assert "".join(f"kitchen: {sys.executable} {KITCHEN}".split()) in shown
        assert "1. Use these servers (remember for this project)" in screen
        pane.send("1")
        pane.wait_for("Approved for this project; starting kitchen")
        pane.wait_for("MCP server kitchen connected: 12 tools", 30)
        server.enqueue(reply("Hello."))
        pane.submit("hi")
        pane.wait_for(lambda s: "Hello." in s and idle(s))
    assert "mcp__kitchen__echo" in tool_names(server)
    written = json.loads((repo / ".stayer" / "settings.local.json").read_text())
    assert written["enabledMcpjsonServers"] == ["kitchen"]


def test_not_now_starts_nothing(
    server: FakeModelServer, open_pane: OpenPane, tmp_path: Path
) -> None:
    repo = _project(tmp_path)
    with open_pane(repo=repo) as pane:
        pane.wait_for(lambda s: QUESTION in s and "Esc to cancel" in s)
        pane.send("2")
        pane.wait_for(lambda s: "Not started; /mcp approve starts them later" in s and idle(s))
        pane.submit("/mcp")
        pane.wait_for("kitchen  needs approval: /mcp approve kitchen")
        server.enqueue(reply("Hello."))
        pane.submit("hi")
        pane.wait_for(lambda s: "Hello." in s and idle(s))
    assert not any(name.startswith("mcp__") for name in tool_names(server))
    assert not (repo / ".stayer").exists()


def test_an_approval_git_would_ship_is_refused_in_one_line(
    open_pane: OpenPane, tmp_path: Path
) -> None:
    repo = _project(tmp_path)
    local = repo / ".stayer" / "settings.local.json"
    local.parent.mkdir()
    local.write_text("{}\n")
    subprocess.run(["git", "-C", str(repo), "add", str(local)], check=True)
    with open_pane(repo=repo) as pane:
        pane.wait_for(lambda s: QUESTION in s and "Esc to cancel" in s)
        pane.send("1")
        pane.wait_for(lambda s: "The servers were not started: git tracks" in s and idle(s))
        pane.submit("/mcp")
        pane.wait_for("kitchen  needs approval: /mcp approve kitchen")
    assert local.read_text() == "{}\n"


def test_a_dumb_terminal_is_asked_in_plain_lines(
    server: FakeModelServer, open_pane: OpenPane, tmp_path: Path
) -> None:
    repo = _project(tmp_path)
    with open_pane(repo=repo, env={"TERM": "dumb"}) as pane:
        pane.wait_for(lambda s: QUESTION in s and "Choose 1-2" in s)
        pane.submit("1")
        pane.wait_for("MCP server kitchen connected: 12 tools", 30)
        server.enqueue(reply("Hello."))
        pane.submit("hi")
        pane.wait_for("Hello.")
    assert "mcp__kitchen__echo" in tool_names(server)


def test_a_crashed_server_is_told_and_back_again(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    server.enqueue(reply(ToolCall("toolu_1", "mcp__kitchen__crash", {})), reply("It went away."))
    args = ("--mcp-config", mcp_config(kitchen=KITCHEN_ENTRY), "--allowedTools", "mcp__kitchen")
    with open_pane(*args, env=WAIT_FOR_SERVERS) as pane:
        pane.wait_idle()
        pane.submit("crash it")
        pane.wait_for(lambda s: "It went away." in s and idle(s), 30)
        pane.wait_for("MCP server kitchen is restarting after a crash", 20)
        pane.wait_for("MCP server kitchen connected: 12 tools", 20)  # between runs
