"""sed's command line read as sed reads it: its options and every command of its script.

GNU sed can do more than print: ``w``/``W`` and the ``w`` flag of ``s`` write files, ``r``/``R``
read other files into the output, and the ``e`` command and flag run shell commands. Judging a
sed call needs its script read command by command (addresses, ``s`` and ``y`` with their
delimiters, text to the end of a line for ``a``/``i``/``c`` and file names); a script that does
not parse is taken as able to do anything.
"""

from __future__ import annotations

import re

from msgspec import Struct

from .getopt import options, read_options
from .shell_words import SimpleCommand, Word

_SED_ADDRESS = re.compile(
    r"(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/\\\n])*/[IM]*|\\(?P<d>[^\n])(?:\\.|(?!(?P=d))[^\n])*(?P=d)[IM]*)"
)
_SED_SIMPLE = frozenset("pdDnNgGhHxlqQzP=F{}y")
_SED_TO_LINE_END = frozenset("aicrRwW#e")
_SED_LABELS = frozenset("btT:")
_SED_OPTIONS = options(
    "ne:f:i::l:Ersuz",
    "quiet silent debug expression= file= follow-symlinks in-place[=] line-length= posix "
    "regexp-extended separate sandbox unbuffered null-data zero-terminated help version",
)


class SedCall(Struct, frozen=True):
    """What a sed call does, read from its options and script."""

    in_place: bool
    commands: tuple[tuple[str, str], ...]
    """Each script command: its letter, and its text (an s command's flags, a file name)."""

    @property
    def runs(self) -> bool:
        """Whether it can run a shell command (the ``e`` command, or the ``e`` flag of s)."""
        return any(
            letter == "e" or (letter == "s" and "e" in text.split(" ", 1)[0])
            for letter, text in self.commands
        )

    @property
    def writes(self) -> tuple[str, ...]:
        """The files its script writes (w, W, and s///w)."""
        return tuple(text for letter, text in self.commands if letter in "wW") + tuple(
            text.split(None, 1)[1] for letter, text in self.commands
            if letter == "s" and " " in text
        )  # fmt: skip

    @property
    def files(self) -> bool:
        """Whether its script reads or writes files of its own (r, R, w, W, or s///w)."""
        return any(
            letter in "rRwW" or (letter == "s" and "w" in text.split(" ", 1)[0])
            for letter, text in self.commands
        )


def sed_call(words: tuple[Word, ...]) -> SedCall | None:
    """How sed reads these arguments; None when that cannot be told (an option it does not
    take, a script in a file or known only at run time, a script that does not parse)."""
    reading = read_options(_SED_OPTIONS, words)
    if reading.problem is not None or reading.dynamic or reading.has("-f", "--file"):
        return None
    scripts = list(reading.values("-e", "--expression"))
    if not scripts:
        if not reading.operands:
            return None
        scripts = [reading.operands[0].text]
    commands: list[tuple[str, str]] = []
    for script in scripts:
        parsed = _sed_commands(script)
        if parsed is None:
            return None
        commands += parsed
    return SedCall(reading.has("-i", "--in-place"), tuple(commands))


def _sed_commands(script: str) -> list[tuple[str, str]] | None:
    """The commands of one script, each its letter and its text; None if it does not parse."""
    found: list[tuple[str, str]] = []
    index = 0
    while True:
        index = _skip(script, index, " \t\n;")
        if index >= len(script):
            return found
        after = _address(script, index)
        if after is None or after >= len(script):
            return None
        index = after
        letter = script[index]
        if letter == "s" or letter == "y":
            end = _delimited(script, index + 1, 2)
            if end is None:
                return None
            flags_end = _skip(script, end, "gpiImMew0123456789")
            text = script[end:flags_end]
            if "w" in text:  # the rest of the line is the file it writes
                name_end = _line_end(script, flags_end)
                text += " " + script[flags_end:name_end].strip()
                flags_end = name_end
            found.append((letter, text))
            index = flags_end
        elif letter in _SED_LABELS or letter in _SED_TO_LINE_END:
            # a label ends at `;` or a newline, as GNU sed reads it; text and names at the
            # end of the line
            end = _line_end(script, index + 1, labels=letter in _SED_LABELS)
            found.append((letter, script[index + 1 : end].strip()))
            index = end
            if letter in _SED_LABELS:
                continue  # GNU sed reads the next command right after a label
        elif letter in _SED_SIMPLE or letter in "lLqQ":
            index = _skip(script, index + 1, "0123456789 ")
            found.append((letter, ""))
            if letter == "{":
                continue  # a block's first command follows at once
        else:
            return None
        index = _skip(script, index, " \t")
        if index < len(script) and script[index] not in ";\n}":
            return None


def _skip(text: str, index: int, chars: str) -> int:
    while index < len(text) and text[index] in chars:
        index += 1
    return index


def _line_end(text: str, index: int, *, labels: bool = False) -> int:
    """Where a command's text that starts at `index` ends: at the end of the line; for a
    label, at `;` or whitespace after it, as GNU sed reads one (``:a e cmd`` is a label, then
    an `e` command)."""
    if labels:
        index = _skip(text, index, " \t")
        while index < len(text) and text[index] not in "; \t\n":
            index += 1
        return index
    end = text.find("\n", index)
    return len(text) if end == -1 else end


def _address(script: str, index: int) -> int | None:
    """The index after an optional address (one or a range) and `!`; None if malformed."""
    match = _SED_ADDRESS.match(script, index)
    if match is not None:
        index = match.end()
        if index < len(script) and script[index] == ",":
            following = _SED_ADDRESS.match(script, index + 1)
            step = re.compile(r"[+~]\d+").match(script, index + 1)
            chosen = following or step
            if chosen is None:
                return None
            index = chosen.end()
    index = _skip(script, index, " \t")
    if index < len(script) and script[index] == "!":
        index = _skip(script, index + 1, " \t")
    return index


def _delimited(script: str, index: int, parts: int) -> int | None:
    """The index after `parts` more delimiters, the first one at `index` (s/a/b/ → after the
    last /); None if the text ends first."""
    if index >= len(script) or script[index] in "\\\n":
        return None
    delimiter = script[index]
    index += 1
    while parts:
        if index >= len(script):
            return None
        if script[index] == "\\":
            index += 2
            continue
        if script[index] == delimiter:
            parts -= 1
        index += 1
    return index


def sed_runs_code(command: SimpleCommand) -> bool:
    """Whether a sed call could run a shell command, or that cannot be told."""
    call = sed_call(command.words[1:])
    return call is None or call.runs
