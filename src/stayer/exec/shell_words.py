"""The words of a shell command line once parsed: one word, and one simple command.

Data only, shared by the parse (`shell_syntax`), the option reader (`getopt`) and the tables of
what programs do (`programs`, `readers`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from msgspec import Struct


class Word(Struct, frozen=True):
    """One word of a command: its value after quote removal, or as written when `dynamic`."""

    text: str
    dynamic: bool = False


class SimpleCommand(Struct, frozen=True):
    """One program run with its words (the program first) and leading ``NAME=value`` words."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    runs: tuple[SimpleCommand, ...] = ()
    """The commands this one runs as a wrapper (``nice ls`` runs ``ls``; ``find -exec`` too)."""
    transparent: bool = False
    """Whether, as a wrapper, it changes only how `runs` run (priority, time limit), not what
    runs or as whom, so a rule for the wrapped command may stand for it."""
    fed: bool = False
    """Whether the command gets more arguments when it runs (those ``xargs`` reads)."""

    @property
    def argv(self) -> tuple[str, ...]:
        """The words as text."""
        return tuple(word.text for word in self.words)

    @property
    def program(self) -> str:
        """The program's name without its directory ('' for none)."""
        return os.path.basename(self.words[0].text) if self.words else ""

    @property
    def line(self) -> str:
        """The command as one line: assignments, then the words, joined by spaces."""
        return " ".join((*self.assignments, *self.argv))

    def flattened(self) -> Iterator[SimpleCommand]:
        """This command and every command it runs, wrapped ones after their wrapper."""
        yield self
        for inner in self.runs:
            yield from inner.flattened()
