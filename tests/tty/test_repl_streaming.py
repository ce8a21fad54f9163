"""A person types a prompt and watches the answer arrive: words on screen while the model is
still streaming, the rest when it comes, and the footer saying a run is going meanwhile."""

from __future__ import annotations

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, anthropic_stream
from tests.tty.harness import Pane, idle, needs_tmux, running

pytestmark = [needs_tmux, pytest.mark.timeout(30)]

ANSWER = "First words arrive early, before the rest.\nThe second line comes only later."


def test_words_reach_the_screen_before_the_stream_ends(server: FakeModelServer, pane: Pane) -> None:
    stream = anthropic_stream(Text(ANSWER))
    server.enqueue(stream.paused(stream.index_of("before")))
    pane.submit("tell me something")
    # held in the middle of its first line: what came so far is shown, unfinished line and all
    screen = pane.wait_for("First words arrive early,")
    assert "before the rest" not in screen
    assert running(screen), screen
    server.resume()
    screen = pane.wait_for(lambda s: "The second line comes only later." in s and idle(s))
    assert screen.count("First words arrive early, before the rest.") == 1, screen
    assert "> tell me something" in screen
    [request] = server.requests
    assert request.messages[-1]["content"][0]["text"] == "tell me something"
