"""A person resizes the terminal while the answer streams (narrower, wider, narrower again):
the terminal's scrollback then holds every streamed line exactly once, in order, and nothing
of the live tail is left behind in it.

Each streamed line is a paragraph of its own, longer than the narrow widths. Where the REPL
wraps a paragraph itself (to the width at the time), the words of a line are on several rows;
so lines are compared with their whitespace run together, which neither a wrap by the REPL nor
a reflow by the terminal changes."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, anthropic_stream
from tests.tty.harness import OpenPane, Pane, idle, needs_tmux

pytestmark = [needs_tmux, pytest.mark.timeout(30)]

LINES = 60
NUMBERED = re.compile(r"Line (\d\d) of 60: ")


def _sentence(n: int) -> str:
    return f"Line {n:02d} of 60: a steady sentence that is long enough to wrap when narrow."


def _answer() -> str:
    # paragraphs (blank lines between), each longer than the narrow widths
    return "".join(f"{_sentence(n)}\n\n" for n in range(1, LINES + 1))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _reached(number: int) -> object:
    def check(screen: str) -> bool:
        return any(int(found) >= number for found in NUMBERED.findall(_flat(screen)))

    check.__doc__ = f"line {number} or later"
    return check


def _resize_at(pane: Pane, number: int, cols: int) -> None:
    check = _reached(number)
    assert callable(check)
    pane.wait_for(check)
    pane.resize(cols, 20)


def _streamed_through_resizes(server: FakeModelServer, open_pane: OpenPane) -> str:
    """The scrollback after 60 long lines streamed while the pane went 100, 50, 120 and 60
    columns wide."""
    stream = anthropic_stream(Text(_answer()))
    # paced (a dozen frames a line), so the resizes land mid-stream
    server.enqueue(replace(stream, event_delay=0.004))
    with open_pane(cols=100, rows=20) as pane:
        pane.wait_idle()
        pane.submit("count sixty lines")
        _resize_at(pane, 12, 50)
        _resize_at(pane, 28, 120)
        _resize_at(pane, 44, 60)
        pane.wait_for(lambda s: _sentence(LINES) in _flat(s) and idle(s), timeout=15)
        return pane.scrollback()


def test_the_scrollback_holds_every_line_once(server: FakeModelServer, open_pane: OpenPane) -> None:
    history = _streamed_through_resizes(server, open_pane)
    numbers = [int(found) for found in NUMBERED.findall(_flat(history))]
    assert numbers == list(range(1, LINES + 1)), history
    flat = _flat(history)
    for n in range(1, LINES + 1):
        assert flat.count(_sentence(n)) == 1, (n, history)
    assert history.count("> count sixty lines") == 1, history


def test_a_resize_leaves_nothing_of_the_tail_behind(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    history = _streamed_through_resizes(server, open_pane)
    # the live tail's two rules (over and under the input box) are the only ones
    rules = [line for line in history.splitlines() if line and set(line) == {"─"}]
    assert len(rules) == 2, history
