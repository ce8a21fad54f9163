"""A shell line's words as the shell expands them, and the folders the line moves through.

`Folders` follows `cd`, `pushd`, `popd` and the tildes that name them (``~+``, ``~-``);
`expanded` does what bash does to a word before a program sees it: tilde, braces (``{a,b}``,
``{1..3}``), globs matched on disk (bracket expressions loosened, so nothing bash would match
is missed). What cannot be told (an expansion, a glob past a thousand matches) is None, and
the caller fails closed.
"""

from __future__ import annotations

import glob as _glob
import os
import re
from pathlib import Path

from msgspec import Struct, field

from stayer.exec.shell_words import SimpleCommand
from stayer.tools.base import HISTORY_READ as HISTORY


class Folders(Struct):
    """Where the shell is as a line runs: the folder, the one before (`cd -`, `~-`), and
    pushd's stack."""

    here: str
    previous: str | None = None
    stack: list[str] = field(default_factory=list[str])

    def join(self, word: str) -> str:
        if not self.here or word.startswith(HISTORY):
            return word
        return os.path.join(self.here, word)

    def move(self, command: SimpleCommand) -> bool:
        """Follow a `cd`, `pushd` or `popd`; False when where it goes cannot be told."""
        operands = [w for w in command.words[1:] if not (w.text.startswith("-") and w.text != "-")]
        if any(word.dynamic for word in operands) or len(operands) > 1:
            return False
        target = operands[0].text if operands else None
        if command.program == "popd":
            if target is not None or not self.stack:
                return False
            return self._go(self.stack.pop())
        if target is not None and target.startswith(("+", "-")) and target != "-":
            return False  # a place in the stack by number
        if command.program == "pushd":
            if target is None:
                return False  # swaps the top two: follow no further
            self.stack.append(self.here)
        if target == "-":
            return self.previous is not None and self._go(self.previous)
        expanded = str(Path.home()) if target is None else self.tilde(target)
        return expanded is not None and self._go(os.path.join(self.here, expanded))

    def _go(self, folder: str) -> bool:
        self.previous, self.here = self.here, folder
        return True

    def tilde(self, text: str) -> str | None:
        """`text` with a leading tilde expanded as bash does (``~``, ``~user``, ``~+`` the
        folder, ``~-`` the one before); None for one the line cannot tell (``~2``)."""
        if not text.startswith("~"):
            return text
        head, slash, rest = text.partition("/")
        if head == "~+":
            return self.here + slash + rest
        if head == "~-":
            return None if self.previous is None else self.previous + slash + rest
        if re.fullmatch(r"~[+-]?\d+", head):
            return None
        try:
            return os.path.expanduser(text)
        except (KeyError, RuntimeError):
            return text


_MOST_EXPANSIONS = 1_000


def expanded(text: str, *, dynamic: bool, shell: Folders) -> list[str] | None:
    """What one word names once the shell has expanded it (the word itself too); None when
    that is known only when the line runs, or is too large to follow."""
    if dynamic and ("$" in text or "`" in text or "'" in text or '"' in text or "\\" in text):
        return None
    found = brace_expansion(text) if dynamic else [text]
    if found is None:
        return None
    tilded = [shell.tilde(item) for item in found]
    if None in tilded:
        return None
    found = [item for item in tilded if item is not None] + ([text] if dynamic else [])
    if text.startswith("~") and not dynamic:
        found.append(text)  # a program given `~` unexpanded (``--opt=~/x``) opens it as is
    if dynamic and shell.here:
        for pattern in list(found):
            found += _glob.glob(_loosened(pattern), root_dir=shell.here, recursive=True)
            if len(found) > _MOST_EXPANSIONS:
                return None
    return list(dict.fromkeys(found))


def _loosened(pattern: str) -> str:
    """A glob whose bracket expressions (``[[:alpha:]]``, ``[^x]``, which Python's glob reads
    otherwise than bash) each match any one character: it finds every file bash's would."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern[index] == "[":
            end = index + 1
            if end < len(pattern) and pattern[end] in "!^":
                end += 1
            if end < len(pattern) and pattern[end] == "]":
                end += 1
            while end < len(pattern) and pattern[end] != "]":
                if pattern.startswith("[:", end):
                    close = pattern.find(":]", end + 2)
                    end = close + 2 if close != -1 else end + 1
                else:
                    end += 1
            if end < len(pattern):
                out.append("?")
                index = end + 1
                continue
        out.append(pattern[index])
        index += 1
    return "".join(out)


_BRACE_RANGE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def brace_expansion(text: str) -> list[str] | None:
    """`text` with its brace expansions done as bash does them (``a{b,c}d``, ``{1..3}``,
    ``{a..c}``, nested ones); None past `_MOST_EXPANSIONS` words."""
    start = _brace_start(text, 0)
    found: tuple[int, list[str]] | None = None
    while start is not None and found is None:  # the first braces that expand (not `{a}`)
        end, items = _brace_items(text, start)
        if items is None:
            return None  # a range too large to follow
        if end is not None:
            found = end, items
        else:
            start = _brace_start(text, start + 1)
    if start is None or found is None:
        return [text]
    end, items = found
    results: list[str] = []
    for item in items:
        expanded = brace_expansion(text[:start] + item + text[end + 1 :])
        if expanded is None:
            return None
        results += expanded
        if len(results) > _MOST_EXPANSIONS:
            return None
    return results


def _brace_start(text: str, after: int) -> int | None:
    index = text.find("{", after)
    while index != -1:
        if not (index and text[index - 1] == "$"):
            return index
        index = text.find("{", index + 1)
    return None


def _brace_items(text: str, start: int) -> tuple[int | None, list[str] | None]:
    """Where the brace opened at `start` closes, and its items (a list or a range); None
    for the place when it is no brace expansion, and None for the items when it is a range
    too large to follow."""
    depth, current = 0, ""
    items: list[str] = []
    for index in range(start + 1, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "}":
            if items:
                return index, [*items, current]
            if not _BRACE_RANGE.match(current):
                return None, []
            return index, _brace_range(current)
        elif char == "," and not depth:
            items.append(current)
            current = ""
            continue
        current += char
    return None, []


def _brace_range(body: str) -> list[str] | None:
    match = _BRACE_RANGE.match(body)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        low, high = int(first), int(last)
        width = len(first) if first.startswith("0") and len(first) > 1 else 0
        values = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
        if len(values) > _MOST_EXPANSIONS:
            return None
        return [str(value).zfill(width) for value in values]
    if first.isdigit() or last.isdigit():
        return None
    low, high = ord(first), ord(last)
    return [chr(code) for code in range(low, high + (1 if high >= low else -1),
                                         step if high >= low else -step)]  # fmt: skip
