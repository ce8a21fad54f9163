"""A person pastes a large text (100 KB, tabs and non-ASCII letters in it) into the prompt: it
is shown collapsed, and the model receives all of it, byte for byte."""

from __future__ import annotations

import pytest

from stayer.session.listings import is_listing
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.tty.harness import Pane, idle, needs_tmux

pytestmark = [needs_tmux, pytest.mark.timeout(30)]


def _large_text() -> str:
    lines = [
        f"{n:05d}\tcafé, naïve, 東京 — pasted line {n} of the log, kept exactly as it was"
        for n in range(1, 1300)
    ]
    text = "\n".join(lines)
    assert len(text.encode()) > 100_000
    return text


def test_a_100_kb_paste_arrives_whole(server: FakeModelServer, pane: Pane) -> None:
    text = _large_text()
    server.enqueue(reply("Got the whole log."))
    pane.paste(text)
    screen = pane.wait_for("[pasted")
    assert "pasted line 1299" not in screen  # collapsed, not spread over the screen
    pane.send("Enter")
    pane.wait_for(lambda s: "Got the whole log." in s and idle(s), timeout=15)
    [request] = server.requests
    [block] = [b for b in request.messages[-1]["content"] if not is_listing(b["text"])]
    assert block["text"] == text
