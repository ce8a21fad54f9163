"""A person looks up the agent types at the prompt: /agents lists them (an --agents one with its
model and tools, the built-in general-purpose), /help names /agents, and typing `/ag` offers it
in the completion menu. Real `stayer`, the fake model server; no model call is made."""

from __future__ import annotations

import json

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.tty.harness import OpenPane, idle, needs_tmux

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
