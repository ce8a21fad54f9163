"""A person leaves: Ctrl+C twice or Ctrl+D on an empty prompt, /exit, a hangup (SIGHUP) or a
kill (SIGTERM), or the terminal window closed under it. Each way, stayer ends quietly; where a
terminal is left, it is handed back as stayer found it: the shell after it reads lines and
echoes typing (`stty` says `icanon` and `echo`), and what was said stays in the terminal's
scrollback (no alternate screen)."""

from __future__ import annotations

import os
import signal

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.tty.harness import Pane, idle, needs_tmux

pytestmark = [needs_tmux, pytest.mark.timeout(30)]


def _chat(server: FakeModelServer, pane: Pane) -> None:
    server.enqueue(reply("A short answer worth keeping."))
    pane.submit("say something")
    pane.wait_for(lambda s: "A short answer worth keeping." in s and idle(s))
    assert pane.show("#{alternate_on}") == "0"  # inline: the conversation is the scrollback


def test_ctrl_c_twice_on_an_empty_prompt_exits(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    pane.send("C-c")
    pane.wait_for("Press Ctrl-C again to exit")
    pane.send("C-c")
    exited = pane.wait_exit()
    assert exited.status == 0 and exited.restored, exited
    assert "A short answer worth keeping." in pane.scrollback()


def test_ctrl_c_once_with_text_clears_it_and_stays(pane: Pane) -> None:
    pane.type("half a thought")
    pane.wait_for("> half a thought")
    pane.send("C-c")
    screen = pane.wait_for(lambda s: idle(s) and "half a thought" not in s)
    assert "EXITED" not in screen


def test_ctrl_d_on_an_empty_prompt_exits(server: FakeModelServer, pane: Pane) -> None:
    _chat(server, pane)
    pane.send("C-d")
    exited = pane.wait_exit()
    assert exited.status == 0 and exited.restored, exited
    assert "A short answer worth keeping." in pane.scrollback()


def test_slash_exit_leaves(pane: Pane) -> None:
    pane.submit("/exit")
    exited = pane.wait_exit()
    assert exited.status == 0 and exited.restored, exited


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_restores_the_terminal(
    server: FakeModelServer, pane: Pane, number: signal.Signals
) -> None:
    _chat(server, pane)
    os.kill(pane.pid, number)
    exited = pane.wait_exit()
    assert exited.restored, exited
    assert exited.status in (0, 128 + number), exited


def test_closing_the_terminal_ends_stayer_quietly(server: FakeModelServer, pane: Pane) -> None:
    """The window closed under stayer: it ends, and says nothing of it on standard error."""
    _chat(server, pane)
    pane.close()
    assert pane.wait_gone(), "stayer still runs after its terminal went away"
    assert "Traceback" not in pane.stderr, pane.stderr
