"""Rich renderables turned into terminal lines: ANSI text when colour is on, plain text when it
is off, every line at most the given width in cells.

The view builds what it shows from rich objects (Markdown, Text, Syntax) and needs it as lines
it can count: the app prints committed lines once and redraws the live ones, so each line's
height must be exactly one row. Trailing blanks are dropped (they would be copied with the text
from the scrollback, and a line filling the width is the first to be garbled when the terminal
narrows), so code blocks are drawn on the terminal's own background.
"""

from __future__ import annotations

import io
import re
from typing import ClassVar

from rich.color import ColorSystem
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

_SGR = re.compile(r"\x1b\[[0-9;]*m")


class Painter:
    """Renders rich objects to lines for a terminal `width` cells wide, in colour or not."""

    def __init__(self, width: int, *, color: bool, truecolor: bool = True) -> None:
        self.width = max(width, 1)
        self.color = color
        self._system = ColorSystem.TRUECOLOR if truecolor else ColorSystem.STANDARD
        self._console = Console(
            file=io.StringIO(),
            width=self.width,
            force_terminal=color,
            color_system=("truecolor" if truecolor else "standard") if color else None,
            no_color=not color,
            legacy_windows=False,
            highlight=False,
            emoji=False,
            markup=False,
        )

    def lines(self, renderable: RenderableType) -> list[str]:
        """`renderable` as lines (no newlines in them), without blank lines around it."""
        rendered = self._console.render_lines(
            renderable, self._console.options.update_width(self.width), pad=False
        )
        lines = [self._line(segments) for segments in rendered]
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            lines.pop(0)
        return lines

    def _line(self, segments: list[Segment]) -> str:
        kept = [segment for segment in segments if not segment.control]
        while kept and not kept[-1].text.strip():
            kept.pop()
        if kept:
            last = kept[-1]
            kept[-1] = Segment(last.text.rstrip(), last.style)
        if not self.color:
            return "".join(segment.text for segment in kept)
        return "".join(
            segment.style.render(segment.text, color_system=self._system)
            if segment.style
            else segment.text
            for segment in kept
        )


def plain(text: str) -> str:
    """`text` without its colour codes (what a person reads)."""
    return _SGR.sub("", text)


class _LeftHeading(Heading):
    """A heading set flush left, as a terminal reader expects (rich centres the first level)."""

    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class _PlainCodeBlock(CodeBlock):
    """Highlighted code on the terminal's background, indented, with no padding rows."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(
            code,
            self.lexer_name,
            theme=self.theme,
            word_wrap=True,
            background_color="default",
            padding=(0, 0, 0, 2),
        )


class _Markdown(Markdown):
    elements: ClassVar = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _PlainCodeBlock,
        "code_block": _PlainCodeBlock,
    }


def markdown(source: str) -> Markdown:
    """`source` as rich Markdown, links shown as their text and address (no OSC 8 links)."""
    return _Markdown(source, hyperlinks=False)


def hang(prefix: Text, body: RenderableType) -> Table:
    """`body` after `prefix`, its wrapped lines indented by the prefix's width."""
    grid = Table.grid(padding=0)
    grid.add_column(width=prefix.cell_len, no_wrap=True)
    grid.add_column(overflow="fold")  # a word longer than the row is broken, not lost
    grid.add_row(prefix, body)
    return grid
