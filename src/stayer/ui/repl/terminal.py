"""What the REPL does to the terminal beyond drawing its live tail with prompt_toolkit.

- **Frames.** Every write prompt_toolkit flushes is one frame, bracketed as a synchronized
  update (DEC private mode 2026: a terminal that knows it shows the frame whole, one that does
  not ignores the brackets), and a commit is one frame too, so the live tail is never seen
  erased: no flicker.
- **Commits.** Finished output goes into the terminal's own scrollback exactly once: the live
  tail is erased, the finished lines are written where it was, and the tail is drawn again
  under them, all in one write. Nothing above the tail is ever redrawn, so the conversation
  is the terminal's own history: selectable, searchable, kept after exit.
- **Only colour reaches the terminal.** Everything the REPL writes as styled text (what it
  commits, the live tail, a question's heading, a statusLine) passes `printable` last: colour
  and style sequences (SGR) stay, every other escape sequence and control character goes, C1
  included. A file name, a model's text or a command's output can then never move the cursor,
  set the title, write the clipboard (OSC 52) or hide a link, whatever the layer that should
  have cleaned it missed.
- **Resizes.** A terminal that reflows its lines on a narrower width (tmux, VTE, kitty, iTerm2,
  Windows Terminal) splits every row of the tail longer than the new width, so the tail is
  taller than prompt_toolkit remembers and erasing it from where it thinks it began would leave
  its top rows behind as garbage in the scrollback. So on a terminal known to reflow, the
  erase first goes up by the rows the reflow added, worked out from the rows last drawn. On
  a terminal not known to reflow (xterm truncates instead) it does not: going up too far
  would erase finished lines still on screen, which are in no scrollback yet, and losing
  output is worse than a stray line. `STAYER_TERMINAL_REFLOWS=1` (or `0`) says which it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout.screen import Screen
from prompt_toolkit.output.vt100 import Vt100_Output

SYNC_BEGIN = "\x1b[?2026h"
_SGR = r"\x1b\[[0-9;:]*m"
_UNPRINTABLE = re.compile(
    _SGR + r"|(\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f])"
)
"""An SGR sequence (kept), or anything else a terminal would act on: CSI, OSC, DCS/SOS/PM/APC
strings, other escapes, and C0 (but newline and tab), DEL and C1 characters (removed)."""
SYNC_END = "\x1b[?2026l"


_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Direction overrides and isolates: they reorder what is shown (a file name read backwards)."""

_HIDING = frozenset({5, 6, 8})
"""SGR attributes that hide or distract rather than style: blink (5, 6) and conceal (8)."""


def printable(text: str, *, styled: bool = True) -> str:
    """`text` with only its colour and style sequences left (see the module), and no bidi
    override; with `styled` False, not even those (a terminal that cannot take any, or a
    person who asked for no colour)."""

    def kept(match: re.Match[str]) -> str:
        if match.group(1) or not styled:
            return ""
        return _style(match.group(0))

    return _BIDI.sub("", _UNPRINTABLE.sub(kept, text))


def _style(sgr: str) -> str:
    """An SGR sequence without the attributes that hide text (`_HIDING`); a colour's own
    numbers (`38;2;r;g;b`, `38;5;n`) are kept whatever they are."""
    params = sgr[2:-1].replace(":", ";").split(";")
    out: list[str] = []
    index = 0
    while index < len(params):
        param = params[index]
        if param in ("38", "48", "58") and index + 1 < len(params):
            width = 3 if params[index + 1] == "5" else 5
            out.extend(params[index : index + width])
            index += width
            continue
        if not (param.isdigit() and int(param) in _HIDING):
            out.append(param)
        index += 1
    return f"\x1b[{';'.join(out)}m" if out or not params else ""


class FramedOutput(Vt100_Output):
    """prompt_toolkit's terminal output, each flush one synchronized frame; `frame()` holds
    every flush inside it back into one."""

    _held = 0
    frames = 0
    """How many frames were written: the redraw count the flicker benchmark reads."""

    gone = False
    """The terminal went away (a hangup): what is written after is dropped, not an error."""

    def flush(self) -> None:
        if self._held or not self._buffer:
            return
        if self.gone:
            self._buffer.clear()
            return
        self._buffer.insert(0, SYNC_BEGIN)
        self._buffer.append(SYNC_END)
        self.frames += 1
        try:
            super().flush()
        except OSError:  # EIO or EPIPE: nobody is there to see it
            self.gone = True
            self._buffer.clear()

    @contextmanager
    def frame(self) -> Iterator[None]:
        """Everything written inside, prompt_toolkit's own flushes included, as one write."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held:
                self.flush()


def framed_output(stdout: TextIO, env: Mapping[str, str]) -> FramedOutput:
    """The terminal output for `stdout` (a terminal)."""
    output = FramedOutput.from_pty(stdout, term=env.get("TERM"))
    assert isinstance(output, FramedOutput)
    return output


def commit(app: Application[Any], output: FramedOutput, text: str, *, styled: bool = True) -> None:
    """Write `text` (whole lines, each ending in a newline) into the scrollback above the live
    tail, once, and draw the tail again under it: one frame."""
    text = printable(text, styled=styled)
    if not text:
        return
    if not app.is_running or app._running_in_terminal:
        output.write_raw(text.replace("\n", "\r\n"))
        output.flush()
        return
    with output.frame():
        app.renderer.erase(leave_alternate_screen=False)
        output.write_raw(text.replace("\n", "\r\n"))
        app.renderer.reset(leave_alternate_screen=False)
        app._redraw()


_REFLOWING_TERMS = ("xterm-kitty", "xterm-ghostty", "alacritty", "wezterm", "foot", "tmux")
_REFLOWING_PROGRAMS = ("iTerm.app", "WezTerm", "vscode", "ghostty", "Apple_Terminal", "Hyper")
_REFLOWING_MARKS = ("TMUX", "VTE_VERSION", "KITTY_WINDOW_ID", "WT_SESSION", "ALACRITTY_WINDOW_ID")


def terminal_reflows(env: Mapping[str, str]) -> bool:
    """Whether this terminal splits long lines when it gets narrower (most do; xterm does
    not); unknown ones are taken not to (see the module)."""
    said = env.get("STAYER_TERMINAL_REFLOWS")
    if said in ("0", "1"):
        return said == "1"
    if any(env.get(mark) for mark in _REFLOWING_MARKS):
        return True
    term = env.get("TERM", "")
    return term.startswith(_REFLOWING_TERMS) or env.get("TERM_PROGRAM") in _REFLOWING_PROGRAMS


def reflowed_rows(screen: Screen, cursor: Point, width: int) -> int:
    """How many rows above the cursor the tail drawn as `screen` takes up once a reflowing
    terminal has split it to `width` columns (the cursor's own row included, when the
    cursor is past the new width): what the erase must go up by."""
    rows = 0
    for y in range(cursor.y):
        line = screen.data_buffer[y]
        used = 1 + max((x for x, cell in line.items() if cell.char != " " or cell.style), default=0)
        rows += max(1, -(-used // width))
    return rows + cursor.x // max(width, 1)


class InlineApplication(Application[None]):
    """prompt_toolkit's application, its resize erasing the whole tail on a terminal that
    reflows (see the module)."""

    reflows = False

    def _on_resize(self) -> None:
        renderer = self.renderer
        screen = renderer._last_screen
        output = self.output
        with _framed(output):
            if self.reflows and screen is not None:
                cursor = renderer._cursor_pos
                extra = reflowed_rows(screen, cursor, output.get_size().columns) - cursor.y
                if extra > 0:
                    output.cursor_up(extra)
            super()._on_resize()


@contextmanager
def _framed(output: object) -> Iterator[None]:
    if isinstance(output, FramedOutput):
        with output.frame():
            yield
    else:
        yield
