"""What the REPL does to the terminal beyond prompt_toolkit: one synchronized frame per write,
commits into the scrollback, and a resize that erases the whole tail after a reflow."""

from __future__ import annotations

import io

import pytest
from prompt_toolkit.data_structures import Point, Size
from prompt_toolkit.layout.screen import Char, Screen

from stayer.ui.repl.terminal import (
    SYNC_BEGIN,
    SYNC_END,
    FramedOutput,
    reflowed_rows,
    terminal_reflows,
)


def _output() -> tuple[FramedOutput, io.StringIO]:
    stdout = io.StringIO()
    return FramedOutput(stdout, lambda: Size(rows=24, columns=80), term="xterm"), stdout


def test_each_flush_is_one_synchronized_frame() -> None:
    output, stdout = _output()
    output.write("one")
    output.flush()
    output.write("two")
    output.flush()
    output.flush()  # nothing written: no empty frame

    assert stdout.getvalue() == f"{SYNC_BEGIN}one{SYNC_END}{SYNC_BEGIN}two{SYNC_END}"
    assert output.frames == 2


def test_flushes_inside_a_frame_are_held_into_one_write() -> None:
    output, stdout = _output()
    with output.frame():
        output.write("erase")
        output.flush()
        with output.frame():
            output.write(" print")
            output.flush()
        assert stdout.getvalue() == ""  # nothing reaches the terminal half-done
        output.write(" redraw")
        output.flush()

    assert stdout.getvalue() == f"{SYNC_BEGIN}erase print redraw{SYNC_END}"
    assert output.frames == 1


def _screen(*rows: str) -> Screen:
    screen = Screen()
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            screen.data_buffer[y][x] = Char(char, "")
    return screen


def test_rows_a_narrower_reflowing_terminal_splits_are_counted() -> None:
    screen = _screen("─" * 100, "> some typed text", "─" * 100, "  footer")
    cursor = Point(x=17, y=1)  # on the input line, after the text

    assert reflowed_rows(screen, cursor, 100) == 1  # no reflow: as prompt_toolkit thinks
    # at 40 columns the first rule takes 3 rows; the cursor stays on its (short) row
    assert reflowed_rows(screen, cursor, 40) == 3
    # at 10, the rule is 10 rows and the cursor is pushed one row down by its own row's split
    assert reflowed_rows(screen, cursor, 10) == 11


def test_blank_and_styled_cells_count_as_a_terminal_counts_them() -> None:
    screen = _screen("ab", "", "x")
    screen.data_buffer[1][30] = Char(" ", "class:rule")  # a styled blank is written
    assert reflowed_rows(screen, Point(x=0, y=2), 20) == 1 + 2


@pytest.mark.parametrize(
    ("env", "reflows"),
    [
        ({"TMUX": "/tmp/tmux-1/default,1,0", "TERM": "screen"}, True),
        ({"VTE_VERSION": "7600", "TERM": "xterm-256color"}, True),
        ({"TERM": "xterm-kitty"}, True),
        ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, True),
        ({"TERM": "xterm-256color"}, False),  # plain xterm truncates
        ({"TERM": "xterm-256color", "STAYER_TERMINAL_REFLOWS": "1"}, True),
        ({"TMUX": "x", "STAYER_TERMINAL_REFLOWS": "0"}, False),
    ],
)
def test_which_terminals_are_taken_to_reflow(env: dict[str, str], reflows: bool) -> None:
    assert terminal_reflows(env) is reflows


def test_only_colour_and_style_reach_the_terminal() -> None:
    """A file name, model text or command output cannot move the cursor, set the title, write
    the clipboard or open a link: every escape but SGR goes, C1 and \\x01/\\x02 included."""
    from stayer.ui.repl.terminal import printable

    hostile = (
        "a\x1b[1;31mred\x1b[0m b\x01\x1b]2;PWNED\x1b\\\x02c \x9d2;C1TITLE\x9c d\x9b2J "
        "e\x1b]52;c;aGk=\x07f\x1b[2Jg\x1b7h\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ "
        "i\tj\nk\x1bPdcs\x1b\\l\x7fm"
    )
    assert printable(hostile) == "a\x1b[1;31mred\x1b[0m bc 2;C1TITLE d2J efghlink i\tj\nklm"
    assert printable(hostile, styled=False) == "ared bc 2;C1TITLE d2J efghlink i\tj\nklm"


def test_style_that_hides_text_and_bidi_overrides_do_not_reach_the_terminal() -> None:
    from stayer.ui.repl.terminal import printable

    named = "x\x1b[8mHIDDEN\x1b[0m \x1b[1;8;31mbold red\x1b[m \x1b[5mblink\x1b[m \u202eevil.txt"
    assert printable(named) == "xHIDDEN\x1b[0m \x1b[1;31mbold red\x1b[m blink\x1b[m evil.txt"
    # a colour's own numbers are kept, whatever they are (8 and 5 here are not attributes)
    assert printable("\x1b[38;2;8;5;6mc\x1b[48;5;8md") == "\x1b[38;2;8;5;6mc\x1b[48;5;8md"


def test_a_tall_question_shows_its_start_and_its_end() -> None:
    from stayer.ui.repl.layout import _fitted

    heading = "\n".join([*(f"line {n}" for n in range(60)), "Do you want to proceed?"])
    shown = _fitted(heading, 10).split("\n")
    assert len(shown) == 10
    assert shown[:4] == ["line 0", "line 1", "line 2", "line 3"]
    assert shown[4] == "  … 52 lines not shown: ctrl+o prints the whole call above"
    assert shown[-1] == "Do you want to proceed?" and shown[-2] == "line 59"
    assert _fitted("short\nquestion?", 10) == "short\nquestion?"
