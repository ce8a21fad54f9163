"""A person looks up the agent types and the project's commands at the prompt: /agents lists
the agent types (an --agents one with its model and tools, the built-in general-purpose) and
`/ag` completes to it; a `.claude/commands/` file is in /help (one a built-in's name hides is
said to be not offered), completes with its argument hint, and `/greet Ada` goes to the model.
Real `stayer`, the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.tty.harness import OpenPane, idle, make_repo, needs_tmux

pytestmark = [needs_tmux, pytest.mark.timeout(30)]

AGENTS = {
    "reviewer": {
        "description": "Reviews a diff for bugs",
        "prompt": "You review diffs.",
        "tools": ["Read", "Grep"],
        "model": "haiku",
    }
}


def test_agents_lists_the_agent_types(server: FakeModelServer, open_pane: OpenPane) -> None:
    with open_pane("--agents", json.dumps(AGENTS)) as pane:
        pane.wait_idle()
        pane.submit("/agents")
        screen = pane.wait_for(lambda s: "general-purpose" in s and idle(s))
        rows = [" ".join(line.split()) for line in screen.splitlines()]
        assert "reviewer --agents · model: haiku · tools: Read, Grep" in rows
        assert "Reviews a diff for bugs" in rows
        assert "general-purpose built-in · model: inherit · tools: all" in rows

        pane.submit("/help")
        pane.wait_for(lambda s: "Keys:" in s and idle(s))
        pane.type("/ag")
        menu = pane.wait_for("the agent types subagents may be started as")
        assert "/agents" in menu
    assert server.requests == []


def _command(repo: Path, name: str, text: str) -> None:
    folder = repo / ".claude" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


def test_a_project_command_is_listed_completed_and_sent(
    tmp_path: Path, server: FakeModelServer, open_pane: OpenPane
) -> None:
    repo = make_repo(tmp_path / "repo")
    greet = (
        "---\ndescription: Greet someone warmly\nargument-hint: <name>\n---\nGreet $ARGUMENTS.\n"
    )
    _command(repo, "greet", greet)
    _command(repo, "clear", "---\ndescription: My own clear\n---\nClear it.\n")
    with open_pane(repo=repo) as pane:
        start = pane.wait_idle()
        assert "`/clear` is one of stayer's own commands; this one is left out" in start
        pane.submit("/help")
        screen = pane.wait_for(lambda s: "Keys:" in s and idle(s))
        rows = [" ".join(line.split()) for line in screen.splitlines()]
        assert "/greet <name> Greet someone warmly (the project's command)" in rows
        assert not any("My own clear" in row for row in rows)

        pane.type("/gre")
        menu = pane.wait_for("Greet someone warmly")
        assert "/greet <name>" in menu
        pane.send("C-u")
        server.enqueue(reply("Hello, Ada!"))
        pane.submit("/greet Ada")
        pane.wait_for(lambda s: "Hello, Ada!" in s and idle(s))
    [request] = server.requests
    assert "Ada" in str(request.messages[-1])  # the session sent the command, expanded
