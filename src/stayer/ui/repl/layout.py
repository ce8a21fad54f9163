"""What the REPL's live tail is made of, top to bottom: the view's live text (the streaming
block, running tools), the prompts queued meanwhile, then either the input box (between two
rules, `>` before its first line, completions under it) or the question being asked, and the
footer. Everything above the tail is the terminal's own scrollback; this is all that is ever
drawn again.
"""

from __future__ import annotations

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import SearchToolbar

from .controls import Controls
from .terminal import printable

NOTE_HINT = "What should the model do instead? (Enter to send, Esc to go back)"

INPUT_ROWS = 12
"""The input box grows with what is typed up to this many rows, then scrolls."""


def build_layout(repl: Controls) -> Layout:
    asking = Condition(lambda: repl.dialog is not None)
    noting = Condition(lambda: repl.dialog is not None and repl.dialog.noting)
    search = SearchToolbar(ignore_case=True)
    live = Window(
        FormattedTextControl(lambda: ANSI(repl.live_text)),
        dont_extend_height=True,
        wrap_lines=False,
    )
    queued = Window(FormattedTextControl(lambda: _queued(repl)), dont_extend_height=True)
    typing = Window(
        BufferControl(repl.buffer, search_buffer_control=search.control, preview_search=True),
        get_line_prefix=lambda line, wrapped: [
            ("class:prompt", "> " if line == 0 and not wrapped else "  ")
        ],
        wrap_lines=True,
        height=Dimension(min=1, max=INPUT_ROWS),
        dont_extend_height=True,
    )
    question = Window(
        FormattedTextControl(lambda: _question(repl), focusable=True),
        dont_extend_height=True,
        wrap_lines=True,
    )
    note = Window(
        BufferControl(repl.note),
        get_line_prefix=lambda line, wrapped: [("class:prompt", "   > ")],
        height=1,
    )
    footer = Window(FormattedTextControl(repl.footer_text), height=1, style="class:footer")
    rule = Window(char="─", height=1, style="class:rule")
    body = HSplit(
        [
            ConditionalContainer(live, Condition(lambda: bool(repl.live_text))),
            ConditionalContainer(queued, Condition(lambda: bool(repl.queued_texts))),
            ConditionalContainer(HSplit([question, ConditionalContainer(note, noting)]), asking),
            rule,
            HSplit([typing, search, CompletionsMenu(max_height=8)]),
            rule,
            footer,
        ]
    )
    return Layout(body, focused_element=typing)


def _prompt_prefix(line: int, wrapped: int) -> StyleAndTextTuples:
    """`>` before the input's first line, as Claude Code's; its other lines under the text."""
    return [("class:prompt", "> " if line == 0 and not wrapped else "  ")]


def _queued(repl: Controls) -> StyleAndTextTuples:
    lines: StyleAndTextTuples = []
    for text in repl.queued_texts:
        first = text.strip().splitlines()[0] if text.strip() else ""
        lines.append(("class:queued", f"  ⎿ queued: {first}\n"))
    lines.append(("class:queued.hint", "    esc to take back and stop the run"))
    return lines


def _question(repl: Controls) -> StyleAndTextTuples:
    dialog = repl.dialog
    if dialog is None:
        return []
    rows = get_app().output.get_size().rows
    shown = _fitted(dialog.heading.rstrip("\n"), max(rows - len(dialog.options) - 8, 6))
    heading = ANSI(printable(shown) + "\n")
    lines: StyleAndTextTuples = [*heading.__pt_formatted_text__()]
    for selected, label in dialog.option_lines():
        style = "class:option.selected" if selected else "class:option"
        lines.append((style, f"{'❯' if selected else ' '} {label}\n"))
    if dialog.noting:
        lines.append(
            ("class:hint", "  What should the model do instead? (Enter to send, Esc to go back)")
        )
    elif repl.dialog_hint:  # shown once a key would answer it
        lines.append(("class:hint", f"  {repl.dialog_hint}"))
    return lines


def _fitted(heading: str, rows: int) -> str:
    """`heading` in at most `rows` lines: its start and its end (the question is its last
    line), the middle left out and said so. The whole of it is one key away (Ctrl+O prints
    it above), so nothing is approved unseen."""
    lines = heading.split("\n")
    if len(lines) <= rows:
        return heading
    tail = rows // 2
    head = rows - tail - 1
    left_out = len(lines) - head - tail
    note = f"  … {left_out} lines not shown: ctrl+o prints the whole call above"
    return "\n".join([*lines[:head], note, *lines[-tail:]])


def build_style() -> Style:
    return Style.from_dict(
        {
            "prompt": "bold",
            "rule": "#606060",
            "footer": "#8a8a8a",
            "queued": "#8a8a8a italic",
            "queued.hint": "#606060",
            "option": "",
            "option.selected": "#5fafff bold",
            "hint": "#8a8a8a",
            "footer.hint": "#8a8a8a",
            "footer.separator": "#606060",
            "footer.model": "#8a8a8a",
            "footer.cost": "#8a8a8a",
            "footer.tokens": "#8a8a8a",
            "footer.context": "#8a8a8a",
            "footer.context.full": "#d7875f",
            "footer.queued": "#d7af5f",
            "footer.mode.acceptedits": "#af87ff",
            "footer.mode.plan": "#5fafaf",
            "footer.mode.bypasspermissions": "#ff5f5f bold",
            "footer.mode.dontask": "#d7875f",
        }
    )
