"""A value a program or hook sent, shown in an error line: one line, never too long to read."""

from __future__ import annotations

MOST_SHOWN = 80


def shown(value: object) -> str:
    """`value`'s repr (quotes and line breaks escaped: it stays on one line), cut to
    `MOST_SHOWN` characters."""
    text = repr(value)
    return text if len(text) <= MOST_SHOWN else text[: MOST_SHOWN - 1] + "…"
