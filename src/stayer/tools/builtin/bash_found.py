"""What a Bash command line writes, gathered as its words are read (`bash_writes`): paths
joined to every folder the line may be in, and words known only at run time read as far as
they can be (ANSI-C quoting, `$HOME`, braces, globs on the disk), the rest kept as unknown.
"""

from __future__ import annotations

import codecs
import glob as _glob
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

from msgspec import Struct, field

from stayer.exec.shell_syntax import SimpleCommand, Word
from stayer.tools.builtin.bash_words import brace_expansion

UNKNOWN = "\u2026"
"""Stands for names known only when the line runs (`dir/…`: files written into `dir`)."""

_GLOB_CHARS = re.compile(r"[*?\[]")
_BRACES = re.compile(r"\{([^{}]*(?:,|\.\.)[^{}]*)\}")
_ANSI_C = re.compile(r"\$'((?:\\.|[^'\\])*)'")
_HOME = re.compile(r"\$(?:HOME\b|\{HOME\})")
_PIECES = re.compile(r"[\s'\"`(){}\[\],;=<>|&:$]+")
_MOST_EXPANSIONS = 256
_MOST_TREE_ENTRIES = 2_000


class Found(Struct):
    """What a line writes, gathered as its commands are read."""

    bases: list[str]
    """Every folder the line may be in (absolute), the one it starts in first."""
    moved: list[str] = field(default_factory=list[str])
    """Folders a `cd` goes to that are known only when it runs, as written."""
    paths: list[str] = field(default_factory=list[str])
    unknown: list[str] = field(default_factory=list[str])
    mentioned: list[str] = field(default_factory=list[str])
    """Paths named by the words of a program that may write anything: judged as written, but
    not taken for parts of a git directory being made (`git push origin HEAD`)."""

    def path(self, text: str) -> None:
        """A path known now: absolute as it is, relative from every folder of the line."""
        if not text:
            return
        if text.startswith(("~+", "~-")) or re.match(r"~\d", text):
            # the folder (`~+`), the one before, pushd's stack: from every folder it may be
            rest = text.partition("/")[2]
            self.paths += [os.path.normpath(os.path.join(b, rest)) for b in self.bases]
            self.unknown += [os.path.join(moved, rest) for moved in self.moved] + [text]
            return
        if text == "~" or text.startswith("~"):
            text = home(text)
        if text.startswith("/"):
            self.paths.append(os.path.normpath(text))
            return
        self.paths += [os.path.normpath(os.path.join(base, text)) for base in self.bases]
        self.unknown += [os.path.join(moved, text) for moved in self.moved]

    def word(self, word: Word) -> None:
        """A word a command writes: read as far as it can be, the rest reported unknown."""
        if not word.dynamic:
            self.path(word.text)
            return
        for text in _expanded(word.text):
            if "$" in text or "`" in text or _BRACES.search(text):
                self.later(text)
            elif _GLOB_CHARS.search(text):
                self.matches(text)
            else:
                self.path(text)

    def later(self, text: str) -> None:
        """A destination known only when the line runs, joined to each folder it may be in."""
        if text.startswith("~"):
            text = home(text)
        if text.startswith("/"):
            self.unknown.append(text)
            return
        while text.startswith("./"):
            text = text[2:]
        self.unknown += [os.path.join(base, text) for base in (*self.bases, *self.moved)]

    def matches(self, pattern: str) -> None:
        """A glob: the pattern, and what it matches now, from each folder of the line."""
        self.path(pattern)
        roots = ["/"] if pattern.startswith("/") else self.bases
        for root in roots:
            found = _glob.iglob(pattern, root_dir=root, recursive=True)
            matched = list(itertools.islice(found, _MOST_EXPANSIONS + 1))
            if len(matched) > _MOST_EXPANSIONS:
                self.later(os.path.join(root, pattern))  # more than can be judged one by one
                continue
            for match in matched:
                self.path(os.path.join(root, match))

    def pieces(self, word: Word) -> None:
        """A word given to a program that may write what it names: the word and each
        path-like piece of it (code handed to an interpreter, `--opt=path`, `"$d/.git/x"`)."""
        start = len(self.paths)
        self._pieces(word)
        self.mentioned += self.paths[start:]
        del self.paths[start:]

    def _pieces(self, word: Word) -> None:
        for text in _expanded(word.text) if word.dynamic else [word.text]:
            if "$" not in text and "`" not in text:
                if _GLOB_CHARS.search(text):
                    self.matches(text)
                else:
                    self.path(text)
            for piece in _PIECES.split(text):
                pathlike = piece.startswith(("/", ".", "~")) or "/" in piece
                if piece and piece != text and pathlike and not _GLOB_CHARS.search(piece):
                    self.path(piece)

    def into(self, folder: Word, names: Iterator[str]) -> None:
        """Names written inside `folder` (a copy's destination)."""
        if folder.dynamic:
            self.word(folder)
            return
        for name in names:
            inside = name if name.startswith(("/", "~")) else os.path.join(folder.text, name)
            if UNKNOWN in name:
                self.later(inside)
            else:
                self.path(inside)

    def every_word(self, command: SimpleCommand) -> None:
        """A program that may write whatever its words name."""
        for word in command.words[1:]:
            self.pieces(word)

    def fed(self) -> None:
        """A writer given more names when it runs (by `xargs`, `find -exec`)."""
        self.later(UNKNOWN)


def home(text: str) -> str:
    """`~` and `~user` expanded; a user that does not exist stays as written."""
    try:
        return str(Path(text).expanduser()) + ("/" if text.endswith("/") else "")
    except RuntimeError:
        return text


def _expanded(text: str) -> list[str]:
    """A word as written, read as far as the shell's quoting and braces allow: ANSI-C
    strings decoded, `$HOME` replaced, quotes removed, braces expanded."""
    text = _ANSI_C.sub(lambda m: _ansi_c(m.group(1)), text)
    text = _HOME.sub(str(Path.home()).replace("\\", "\\\\"), text)
    text = text.replace('"', "").replace("'", "")
    expanded = brace_expansion(text)  # too many words to judge: it stays braced, unknown
    return [text] if expanded is None else expanded


def _ansi_c(body: str) -> str:
    """The value of a `$'…'` string (its escapes, as bash reads them); as written when it
    holds one Python does not know, which leaves it unknown (it keeps its `$`)."""
    body = body.replace("\\e", "\\x1b").replace("\\E", "\\x1b").replace("\\?", "?")
    try:
        return codecs.decode(body, "unicode_escape")
    except UnicodeDecodeError:
        return "$'" + body + "'"


def tree(folder: str, bases: list[str]) -> Iterator[str]:
    """The names inside a folder a command copies (relative to it, from each folder of the
    line), at most a bounded number; an `UNKNOWN` name when there are more."""
    count = 0
    for base in bases:
        root = os.path.join(base, home(folder))
        if not os.path.isdir(root):
            continue
        for here, folders, files in os.walk(root):
            for name in (*folders, *files):
                count += 1
                if count > _MOST_TREE_ENTRIES:
                    yield UNKNOWN
                    return
                yield os.path.relpath(os.path.join(here, name), root)
