"""Large pastes: kept whole beside the input, shown in it as one short placeholder.

A bracketed paste of more than `MAX_LINES` lines or `MAX_CHARS` characters goes into `Pastes`
and the input gets `[pasted N lines]` (`[pasted #2 N lines]` for the second, and so on), so a
100 KB paste neither floods the input box nor slows each keystroke. `Pastes.expand` gives the
text to send: every placeholder still in the input replaced by its paste, exactly as it was
kept, in one pass (a paste that itself contains something like a placeholder is never expanded
again). A placeholder the person edited or deleted no longer matches and is plain text.

Terminals send a pasted line break as CR (some as CRLF); `paste_bindings` turns both into the
LF the input and the model expect before anything is kept.
"""

from __future__ import annotations

import re

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

MAX_LINES = 3
MAX_CHARS = 800
"""A paste longer than either is collapsed (Claude Code collapses at a similar size)."""


class Pastes:
    """The large pastes of the input being written, by placeholder."""

    def __init__(self) -> None:
        self._kept: dict[str, str] = {}
        self._count = 0

    def __len__(self) -> int:
        return len(self._kept)

    def add(self, text: str, *, current: str = "") -> str:
        """Keep `text` and return its placeholder; `current` is the input as it is now, so the
        placeholder is one it does not already hold (a person may have typed one)."""
        lines = line_count(text)
        noun = "line" if lines == 1 else "lines"
        while True:
            self._count += 1
            number = "" if self._count == 1 else f"#{self._count} "
            placeholder = f"[pasted {number}{lines} {noun}]"
            if placeholder not in self._kept and placeholder not in current:
                break
        self._kept[placeholder] = text
        return placeholder

    def expand(self, text: str) -> str:
        """`text` with each placeholder it holds replaced by its paste, byte for byte."""
        if not self._kept:
            return text
        pattern = "|".join(re.escape(placeholder) for placeholder in self._kept)
        return re.sub(pattern, lambda match: self._kept[match.group(0)], text)

    def clear(self) -> None:
        """Forget every paste (the input was sent or dropped); numbering starts again."""
        self._kept.clear()
        self._count = 0


def is_large(text: str) -> bool:
    """Whether a paste is collapsed into a placeholder."""
    return len(text) > MAX_CHARS or line_count(text) > MAX_LINES


def line_count(text: str) -> int:
    """How many lines `text` shows: a final line break starts no new line."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR (what terminals send for a pasted line break) as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paste_bindings(pastes: Pastes) -> KeyBindings:
    """The binding for a bracketed paste: a large one becomes a placeholder, a short one is
    typed in as it is. Merge it after prompt_toolkit's defaults so it takes precedence."""
    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        text = normalise_newlines(event.data)
        buffer = event.current_buffer
        if is_large(text):
            text = pastes.add(text, current=buffer.text)
        buffer.insert_text(text)

    return bindings
