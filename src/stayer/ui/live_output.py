"""The latest output lines of the tool calls running now, as the live view draws them.

Claude Code shows a running Bash command's last few lines under the call and replaces them with
the result when it ends; `RunningOutput` keeps those lines per call and lays them out as rows
that each fit the terminal's width, so the view can erase exactly the rows it drew. Output is
made safe to draw first: escape sequences and control characters a command printed could move
the cursor or recolour the screen, and would break that count.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque

from msgspec import Struct, field

from stayer.events import ToolCallProgress

SHOWN_LINES = 5
"""How many of a running call's latest lines are on screen."""

PREFIX = "  ⎿  "
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C1 too: 8-bit CSI and OSC


class _Call(Struct):
    label: str
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=SHOWN_LINES))


class RunningOutput:
    """What each running call printed last, in the order the calls started."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}

    def start(self, tool_use_id: str, label: str) -> None:
        """A call began; `label` names it when several calls show output at once."""
        self._calls[tool_use_id] = _Call(label)

    def add(self, event: ToolCallProgress) -> bool:
        """Take a call's new lines; whether there was anything to show."""
        call = self._calls.get(event.tool_use_id)
        if call is None or not event.text:
            return False
        call.lines.extend(safe(line) for line in event.text.splitlines())
        return True

    def finish(self, tool_use_id: str) -> None:
        """A call ended: its result takes the place of its lines."""
        self._calls.pop(tool_use_id, None)

    def clear(self) -> None:
        """No call is running any more."""
        self._calls.clear()

    def rows(self, width: int) -> list[str]:
        """The rows to draw, none wider than `width` cells, so none wraps."""
        showing = [call for call in self._calls.values() if call.lines]
        rows: list[str] = []
        for call in showing:
            if len(showing) > 1:
                rows.append("  " + call.label)
            indent = PREFIX
            for line in call.lines:
                rows.append(indent + line)
                indent = " " * len(PREFIX)
        return [fit(row, width - 1) for row in rows]  # the last column would wrap on some


def safe(line: str) -> str:
    """`line` without escape sequences and control characters, tabs as spaces."""
    return _CONTROLS.sub("", _ESCAPES.sub("", line).expandtabs(4))


def fit(text: str, cells: int) -> str:
    """`text` cut to at most `cells` terminal cells (wide characters take two), with an
    ellipsis where it was cut."""
    used = 0
    for index, char in enumerate(text):
        used += _cells(char)
        if used > cells:
            kept = text[:index]
            while kept and sum(map(_cells, kept)) > cells - 1:
                kept = kept[:-1]
            return kept + "…"
    return text


def _cells(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
