"""Where a value put into a shell command stands, and the value quoted for that place: inside
double quotes it is escaped for them (``\\``, ``$``, `````, ``"`` backslashed), inside single
quotes the quote is closed, an escaped quote given and the quote reopened, and bare it is
`shlex.quote`'d. Either way the shell reads the value as one piece of literal text: it can
neither end a quote, nor start a command, nor be expanded.

The scan is a small reading of bash's quoting: quotes, backslashes, ``$( )`` and ``( )``
nesting, ``${name}`` and comments. Where bash reads text in ways that scan does not follow
(backquotes, here-documents, ``$'…'``, arithmetic, ``case``, a ``${…}`` with more than a name
in it) everything after is "unknown": a value with only plain characters goes in as it is
(the same text in any of them), anything else is refused with `Unquotable`, so a misread
never lets a value loose.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Literal

Place = Literal["bare", "single", "double", "unknown"]

_PLAIN = re.compile(r"[\w./:@%+,-]*", re.ASCII)
"""No `=`: arithmetic, one of those places, would read `NAME=1` as setting a variable."""
_INERT_BRACE = re.compile(r"\$\{[\w#@*?!-]*\}", re.ASCII)
_WORD_START = " \t\n;&|()<>"
_HARD_BARE = ("`", "<<", "$'", "$((", "((")
_HARD_QUOTED = ("`", "$((")
_CASE = re.compile(r"case(?=[ \t\n])")


class Unquotable(ValueError):
    """A value that cannot go into a command where it stands."""


class _Scan:
    """One pass over a command, noting the place of each span (a placeholder, `spans` in
    order, not overlapping) as it is passed."""

    def __init__(self, command: str, spans: Sequence[tuple[int, int]]) -> None:
        self.text = command
        self.starts = dict(spans)
        self.places: dict[int, Place] = {}
        self.stack: list[str] = []  # "(" or '"'
        self.at = 0

    def run(self) -> dict[int, Place]:
        while self.at < len(self.text):
            if self.at in self.starts:
                self.places[self.at] = "double" if self._quoted() else "bare"
                self.at = self.starts[self.at]
            elif not self._step():
                self._rest("unknown")
                break
        return self.places

    def _quoted(self) -> bool:
        return bool(self.stack) and self.stack[-1] == '"'

    def _rest(self, place: Place) -> None:
        for start in self.starts:
            if start >= self.at:
                self.places.setdefault(start, place)

    def _step(self) -> bool:
        """Pass one piece of syntax; False where the scan stops following bash."""
        text, at = self.text, self.at
        hard = _HARD_QUOTED if self._quoted() else _HARD_BARE
        if text.startswith(hard, at):
            return False
        if text[at] == "\\":
            self.at += 2
        elif text.startswith("${", at):
            brace = _INERT_BRACE.match(text, at)
            if brace is None or any(at <= start < brace.end() for start in self.starts):
                return False
            self.at = brace.end()
        elif self._quoted():
            self._in_double()
        else:
            return self._in_bare()
        return True

    def _in_double(self) -> None:
        if self.text.startswith("$(", self.at):
            self.stack.append("(")
            self.at += 2
            return
        if self.text[self.at] == '"':
            self.stack.pop()
        self.at += 1

    def _in_bare(self) -> bool:
        text, at = self.text, self.at
        char = text[at]
        word_start = at == 0 or text[at - 1] in _WORD_START
        if char == "'":
            return self._single()
        if char == "#" and word_start:
            end = text.find("\n", at)
            self.at = len(text) if end < 0 else end
            return not any(at <= start < self.at for start in self.starts)
        if word_start and _CASE.match(text, at):
            return False
        if char == ")":
            if not self.stack:
                return False
            self.stack.pop()
        elif char in '"(':
            self.stack.append(char)
        elif text.startswith("$(", at):
            self.stack.append("(")
            self.at += 1
        self.at += 1
        return True

    def _single(self) -> bool:
        end = self.text.find("'", self.at + 1)
        if end < 0:
            return False
        for start in self.starts:
            if self.at < start < end:
                self.places[start] = "single"
        self.at = end + 1
        return True


def places(command: str, spans: Sequence[tuple[int, int]]) -> list[Place]:
    """The place of each span (start, end) in `command`, in the spans' order."""
    found = _Scan(command, spans).run()
    return [found.get(start, "unknown") for start, _ in spans]


def quoted(value: str, place: Place) -> str:
    """`value` as literal text where it stands; raises `Unquotable` for an unknown place and
    a value with more than plain characters in it."""
    if place == "double":
        return re.sub(r'([\\$`"])', r"\\\1", value)
    if place == "single":
        return value.replace("'", "'\\''")
    if place == "bare":
        return shlex.quote(value)
    if _PLAIN.fullmatch(value):
        return value
    raise Unquotable(f"cannot tell how to quote {value[:40]!r} there")
