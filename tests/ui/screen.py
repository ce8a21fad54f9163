"""A small terminal for tests: what is on screen after the live view's writes.

It knows what the live view writes: text, newlines, colours (ignored), "cursor to the start of
the row N up" (CSI N F) and "clear to the end of the screen" (CSI J). Anything else is a test
failure, so the view cannot start relying on a sequence this screen would misread.
"""

from __future__ import annotations

import io
import re

_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])")


class Screen(io.StringIO):
    """Rows of text and a cursor, fed with what was written."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = [""]
        self.row = 0
        self.column = 0

    def write(self, text: str, /) -> int:
        """Apply `text` as a terminal would (the TextIO protocol's write)."""
        position = 0
        for match in _SEQUENCE.finditer(text):
            self._put(text[position : match.start()])
            self._control(match.group(1), match.group(2))
            position = match.end()
        self._put(text[position:])
        return len(text)

    def isatty(self) -> bool:
        """A terminal, as far as the view can tell."""
        return True

    @property
    def shown(self) -> list[str]:
        """The rows on screen, without the empty one the cursor waits on."""
        rows = list(self.rows)
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def _put(self, text: str) -> None:
        assert "\x1b" not in text and "\r" not in text, repr(text)
        for char in text:
            if char == "\n":
                self.row += 1
                self.column = 0
                if self.row == len(self.rows):
                    self.rows.append("")
                continue
            line = self.rows[self.row].ljust(self.column)
            self.rows[self.row] = line[: self.column] + char + line[self.column + 1 :]
            self.column += 1

    def _control(self, argument: str, command: str) -> None:
        if command == "m":
            return
        if command == "F":
            self.row = max(0, self.row - int(argument or "1"))
            self.column = 0
        elif command == "J" and argument in ("", "0"):
            self.rows[self.row] = self.rows[self.row][: self.column]
            del self.rows[self.row + 1 :]
        else:
            raise AssertionError(f"the test screen does not know CSI {argument}{command}")
