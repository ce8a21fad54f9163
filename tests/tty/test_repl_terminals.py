"""Terminals as people have them, and keys typed at the wrong moment: a question that appears
while someone types takes none of their keys as an answer; NO_COLOR writes no colour;
TERM=dumb writes no escape sequence at all; 40 columns wrap cleanly."""

from __future__ import annotations

import re

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, anthropic_text, reply
from tests.tty.harness import OpenPane, Pane, asking, idle, needs_tmux, running

pytestmark = [needs_tmux, pytest.mark.timeout(40)]

_SGR = re.compile(rb"\x1b\[([0-9;:]*)m")


def _colours(raw: bytes) -> list[bytes]:
    """The SGR sequences in `raw` that set a colour (30-49, 90-107, 38/48 extended)."""
    found = []
    for match in _SGR.finditer(raw):
        params = [p for p in re.split(rb"[;:]", match.group(1)) if p]
        if any(30 <= int(p) <= 49 or 90 <= int(p) <= 107 for p in params if p.isdigit()):
            found.append(match.group(0))
    return found


def test_keys_typed_as_a_question_appears_do_not_answer_it(
    server: FakeModelServer, pane: Pane
) -> None:
    """Someone typing "2" (and Enter) just as the question comes up is writing a message,
    not choosing "don't ask again": the keys go to the input box, the call waits."""
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})))
    pane.submit("make a file")
    while "Do you want to" not in pane.screen():
        pane.type("2")
    pane.type("2")  # right after it is drawn, before it takes answers
    screen = pane.wait_for(asking)

    assert not (pane.repo / "made.txt").exists()
    assert not (pane.repo / ".stayer" / "settings.local.json").exists()
    box = screen.splitlines()[
        [i for i, line in enumerate(screen.splitlines()) if "─" * 10 in line][-2] + 1
    ]
    assert box.startswith("> 2")  # the keys are in the input box, kept

    server.enqueue(reply("All right, I will not."))
    pane.send("Escape")  # now Escape says no
    pane.wait_for(lambda s: "All right, I will not." in s and idle(s))
    assert not (pane.repo / "made.txt").exists()
    assert server.requests[-1].messages[-1]["content"][0]["is_error"] is True


def test_no_color_writes_no_colour(server: FakeModelServer, open_pane: OpenPane) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo hi"})),
        reply("Some **bold** words and `code`:\n\n```python\nprint('x')\n```\n\n- a list item"),
    )
    with open_pane("--permission-mode", "acceptEdits", env={"NO_COLOR": "1"}) as pane:
        raw = pane.record()
        pane.wait_idle()
        pane.submit("show me colours")
        pane.wait_for(lambda s: "a list item" in s and idle(s))
        pane.send("BTab")  # the mode shown in the footer, which is coloured otherwise
        pane.wait_for("plan mode on")
        written = raw.read_bytes()

    assert b"a list item" in written
    assert _colours(written) == []


def test_a_dumb_terminal_gets_no_escape_sequence(
    server: FakeModelServer, open_pane: OpenPane
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})),
        reply("Done: **made** the file."),
    )
    with open_pane(env={"TERM": "dumb"}) as pane:
        raw = pane.record()
        pane.wait_for(lambda s: s.endswith(">"))
        pane.submit("make a file")
        pane.wait_for("Answer 1-3:")
        pane.submit("1")
        pane.wait_for("Done: made the file.")
        pane.send("C-d")
        assert pane.wait_exit().status == 0
        written = raw.read_bytes()

    assert (pane.repo / "made.txt").exists()
    assert b"Do you want to proceed?" in written
    assert b"\x1b" not in written and not re.search(
        rb"[\x80-\x9f]", written.decode().encode("latin-1", "ignore")
    )


def test_forty_columns_wrap_cleanly(server: FakeModelServer, open_pane: OpenPane) -> None:
    """At 40 columns every line stayer writes fits: nothing is left to the terminal to wrap
    (which would break a line mid-word and garble it on a resize)."""
    words = " ".join(f"word{i}" for i in range(60))
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo " + "x" * 90})),
        reply(f"# A heading that is rather long for forty columns\n\n{words}\n\n- {words}"),
    )
    with open_pane("--dangerously-skip-permissions", cols=40, rows=24) as pane:
        pane.wait_idle()
        pane.submit("wrap it")
        pane.wait_for(lambda s: idle(s) and pane.scrollback().count("word59") == 2)
        joined, rows = pane.scrollback().splitlines(), pane.scrollback_unjoined().splitlines()
        shown = pane.scrollback()
    assert [line for line in joined if line not in rows] == []

    assert all(f"word{i}" in shown.split() or f"word{i}" in shown for i in range(60))


def test_alt_enter_adds_a_line_and_a_lone_escape_interrupts(
    server: FakeModelServer, pane: Pane
) -> None:
    """Alt+Enter arrives as Escape and Enter together: it adds a line to the message being
    typed, even while a run goes; a lone Escape interrupts that run, at once."""
    held = anthropic_text("Thinking it over at some length. " * 20).paused(at=6)
    server.enqueue(held)
    pane.submit("a question")
    pane.wait_for("Thinking it over")
    pane.type("first line")
    pane.send("M-Enter")
    pane.type("second line")
    screen = pane.wait_for("second line")
    assert "first line" in screen and running(screen)  # still going: Alt+Enter did not stop it
    lines = screen.splitlines()
    top_rule = [i for i, line in enumerate(lines) if line.startswith("─" * 10)][-2]
    assert lines[top_rule + 1 : top_rule + 3] == ["> first line", "  second line"]

    pane.send("Escape")
    pane.wait_for(lambda s: not running(s))
    server.resume()


def test_a_question_waits_while_the_input_box_has_text(server: FakeModelServer, pane: Pane) -> None:
    """A message half-typed when the question comes is set aside and comes back after; keys
    typed into the box while the question is open are a message too: no number, Enter or
    arrow answers until the box is empty again."""
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "touch made.txt"})))
    pane.submit("make a file")
    pane.type("and then fix step")  # before the question is drawn, or as it is
    pane.wait_for("Do you want to proceed?")
    pane.type(" 2")
    screen = pane.wait_for("clear the input box (Ctrl+U)")  # armed, but the box has text
    pane.send("Enter")
    pane.send("Up", "Up", "Enter")
    pane.type("1")
    screen = pane.wait_for("Do you want to proceed?")
    assert not (pane.repo / "made.txt").exists()
    assert not (pane.repo / ".stayer").exists(), list((pane.repo / ".stayer").rglob("*"))

    server.enqueue(reply("Made it."))
    pane.send("C-u")
    pane.wait_for(asking)  # empty box: the question takes its answer
    pane.type("1")
    screen = pane.wait_for(lambda s: "Made it." in s and idle(s))
    assert (pane.repo / "made.txt").exists()
    lines = screen.splitlines()
    top_rule = [i for i, line in enumerate(lines) if line.startswith("─" * 10)][-2]
    assert lines[top_rule + 1].startswith("> ")  # what was set aside is back in the box
    assert "and then fix step" in "\n".join(lines[top_rule + 1 :])


def test_alt_editing_during_a_run_does_not_interrupt_it(
    server: FakeModelServer, pane: Pane
) -> None:
    held = anthropic_text("Working through it slowly. " * 20)
    server.enqueue(held.paused(at=held.index_of("slowly")))
    pane.submit("a question")
    pane.wait_for("Working through")
    pane.type("two words")
    pane.send("M-b")  # back a word
    pane.send("M-BSpace")  # delete the word before
    screen = pane.wait_for(lambda s: running(s) and "> words" in s)
    assert running(screen)
    server.resume()
    pane.wait_for(lambda s: idle(s))
