"""Key states of the REPL as a person sees them, kept as text in `screens/` and compared whole
(volatile parts as placeholders): the footer while a run streams, a permission question, and a
run with a tool call once it has finished. A change to what the REPL draws shows up here as a
diff to review; `STAYER_UPDATE_SCREENS=1` keeps the new screens."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, ToolCall, anthropic_stream, reply
from tests.tty.harness import (
    OpenPane,
    Pane,
    asking,
    assert_screen,
    idle,
    make_repo,
    needs_tmux,
    opened,
    running,
)

pytestmark = [
    needs_tmux,
    pytest.mark.timeout(30),
]

COLS, ROWS = 80, 16


@pytest.fixture
def open_pane(server: FakeModelServer, tmp_path: Path) -> Iterator[OpenPane]:
    """Panes on a repository at a short path (`/tmp/stayer-screen-*/repo`), so the welcome
    line naming it fits the pane on one row, as the kept screens have it."""
    with tempfile.TemporaryDirectory(prefix="stayer-screen-") as short:
        repo = make_repo(Path(short) / "repo")

        def start(*args: str, **options: Any) -> AbstractContextManager[Pane]:
            return opened(tmp_path, server, *args, repo=repo, **options)

        yield start


def test_running(server: FakeModelServer, open_pane: OpenPane) -> None:
    stream = anthropic_stream(Text("Reading the question first.\nThen the answer, slowly."))
    server.enqueue(stream.paused(stream.index_of("answer")))
    with open_pane(cols=COLS, rows=ROWS, plain=True) as pane:
        pane.wait_idle()
        pane.submit("take your time")
        pane.wait_for(lambda s: "Then the" in s and running(s))
        assert_screen("running", pane)
        server.resume()
        pane.wait_for(lambda s: "slowly." in s and idle(s))


def test_permission_prompt(server: FakeModelServer, open_pane: OpenPane) -> None:
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})), reply("Ok."))
    with open_pane(cols=COLS, rows=ROWS, plain=True) as pane:
        pane.wait_idle()
        pane.submit("make a file")
        pane.wait_for(asking)
        assert_screen("permission_prompt", pane)
        pane.send("1")
        pane.wait_for(lambda s: "Ok." in s and idle(s))


def test_finished_run_with_a_tool_call(server: FakeModelServer, open_pane: OpenPane) -> None:
    server.enqueue(
        reply("Let me look.", ToolCall("toolu_1", "Bash", {"command": "echo one two three"})),
        reply("The command printed three words."),
    )
    with open_pane("--dangerously-skip-permissions", cols=COLS, rows=ROWS, plain=True) as pane:
        pane.wait_idle()
        pane.submit("run a command")
        pane.wait_for(lambda s: "printed three words." in s and idle(s))
        assert_screen("finished_with_tool", pane)
