"""How a person opens stayer: with a prompt (`stayer "..."`, sent at once), on the last
conversation (`--continue`, its history shown and sent on), and, when the output is not a
terminal, as `-p` runs (no REPL, plain text out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.tty.harness import OpenPane, idle, make_repo, needs_tmux

pytestmark = pytest.mark.timeout(30)


@needs_tmux
def test_a_prompt_given_is_sent_at_once(server: FakeModelServer, open_pane: OpenPane) -> None:
    server.enqueue(reply("Hello, you asked at start."))
    with open_pane("greet me from the command line") as pane:
        screen = pane.wait_for(lambda s: "Hello, you asked at start." in s and idle(s))
        assert "> greet me from the command line" in screen
    [request] = server.requests
    assert request.messages[-1]["content"][0]["text"] == "greet me from the command line"


def _first_conversation(server: FakeModelServer, open_pane: OpenPane) -> None:
    server.enqueue(reply("Noted: the word is pelican."))
    with open_pane() as pane:
        pane.wait_idle()
        pane.submit("remember the word pelican")
        pane.wait_for(lambda s: "the word is pelican" in s and idle(s))
        pane.send("C-d")
        assert pane.wait_exit().status == 0


@needs_tmux
def test_continue_sends_the_last_conversation_on(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    _first_conversation(server, open_pane)
    server.enqueue(reply("The word was pelican."))
    with open_pane("--continue") as pane:
        pane.wait_idle()
        pane.submit("which word was it")
        pane.wait_for(lambda s: "The word was pelican." in s and idle(s))
    texts = [str(message["content"]) for message in server.requests[-1].messages]
    assert len(texts) == 3
    assert "remember the word pelican" in texts[0]
    assert "Noted: the word is pelican." in texts[1]


@needs_tmux
def test_continue_shows_the_last_conversation(server: FakeModelServer, open_pane: OpenPane) -> None:
    _first_conversation(server, open_pane)
    with open_pane("--continue") as pane:
        screen = pane.wait_idle()
        pane.wait_for(lambda s: "remember the word pelican" in s and "the word is pelican" in s)
        assert idle(screen)


def test_output_not_a_terminal_runs_as_print(server: FakeModelServer, tmp_path: Path) -> None:
    """`stayer "prompt" | less` at a terminal: the keyboard is a terminal, the output is not;
    stayer answers as `-p` does, plain text and no REPL."""
    server.enqueue(reply("Plain answer for a pipe."))
    repo = make_repo(tmp_path / "repo")
    keyboard, terminal_side = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "stayer", "answer into a pipe"],
            cwd=repo,
            env=clean_env(server.env()),
            stdin=terminal_side,
            capture_output=True,
            timeout=20,
        )
    finally:
        os.close(keyboard)
        os.close(terminal_side)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"Plain answer for a pipe.\n"
    assert b"\x1b" not in done.stdout
