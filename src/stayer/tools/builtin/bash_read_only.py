"""Which Bash commands only look, and which files a command line reads.

A command line is read-only when the parse sees through all of it (`stayer.exec.shell_syntax`),
no redirection writes a file, and every simple command it runs (wrapped ones too) is in the
table of programs known to change nothing, called within that program's options
(`stayer.exec.readers`). Anything else, an unknown program included, is not.
"""

from __future__ import annotations

import glob as _glob
import os
from pathlib import Path

from stayer.exec.readers import line_judgement
from stayer.exec.shell_syntax import Parsed, SimpleCommand, parse


def is_read_only_command(command_line: str) -> bool:
    """Whether running `command_line` changes nothing: fully parsed, no write redirection, and
    every simple command it runs read-only (`stayer.exec.readers`)."""
    return read_only_reason(command_line) is None


def read_only_reason(command_line: str) -> str | None:
    """Why `command_line` is not read-only, in a few words; None when it is."""
    return line_judgement(parse(command_line))


NOT_FILE_READERS = frozenset(
    {"echo", "printf", "true", "false", "test", "[", "pwd", "which", "type", "date", "expr",
     "seq", "sleep", "basename", "dirname", "whoami", "id", "uname", "hostname", "exit",
     "export", "set", "unset", "read", "wait", "kill", "return", "shift", "ulimit", "umask",
     "nproc"}
)  # fmt: skip
"""Programs that never open their arguments as files, whose words a read rule need not see."""

_CHANGES_FOLDER = frozenset({"cd", "pushd"})


def paths_read(parsed: Parsed, cwd: Path | None = None) -> tuple[str, ...] | None:
    """What a parsed line may read, as written: every word after a program's name that is not
    an option (the value of ``--opt=value``), and every file redirected in, relative to where
    the line has `cd`-ed by then (from `cwd`, the shell's folder, when given); a glob is
    expanded on disk besides. None when one of them is known only when the line runs (an
    expansion), or comes from standard input (`xargs`). Words that are not paths are in it too:
    they can only make a deny rule match more. A folder a recursive search reads whole comes as
    ``folder/**``; a git word `rev:path` also as `path`."""
    if parsed.opaque or any(target.dynamic for target in parsed.reads):
        return None
    words: list[str] = []
    here = str(cwd) if cwd is not None else ""
    for command in parsed.every_command():
        if command.fed:
            return None  # it reads the names it is given on its standard input
        if command.program in NOT_FILE_READERS:
            continue
        named = _named(command, here)
        if named is None:
            return None
        if command.program in _CHANGES_FOLDER:
            here = os.path.join(here, named[0]) if named else str(Path.home())
            continue
        if _searches_trees(command):
            # what it reads is everything under the folders it is given (or the working one)
            named += [folder.rstrip("/") + "/**" for folder in _searched(command) or ["."]]
        words += [os.path.join(here, word) if here else word for word in named]
    return (*words, *(os.path.join(here, t.text) if here else t.text for t in parsed.reads))


def _named(command: SimpleCommand, here: str) -> list[str] | None:
    """The words of a command that may name files (an option's value too, a glob's matches
    too); None when one is known only when the line runs."""
    named: list[str] = []
    for word in command.words[1:]:
        text = word.text.partition("=")[2] if word.text.startswith("-") else word.text
        if word.dynamic:
            if "$" in text or "`" in text:
                return None
            if here:  # a glob: what it matches there, and the pattern itself below
                named += _glob.glob(text, root_dir=here, recursive=True)
        if not text:
            continue
        named.append(text)
        if command.program == "git" and ":" in text:
            named.append(text.partition(":")[2])  # `HEAD:secrets/key`, `:.env`
    return named


_TREE_SEARCHERS = frozenset({"rg", "ag", "ack", "ack-grep"})
_PATTERN_OPTIONS = frozenset({"-e", "--regexp", "-f", "--file"})


def _searched(command: SimpleCommand) -> list[str]:
    """The folders (or files) a search is given: its words after the pattern, which comes
    first unless an option gives it (`-e`, `-f`); `git grep`'s after its subcommand."""
    argv = list(command.argv[2:] if command.program == "git" else command.argv[1:])
    given = any(w in _PATTERN_OPTIONS or w.startswith(("--regexp=", "--file=")) for w in argv)
    words = [w for w in argv if not w.startswith("-")]
    return words if given else words[1:]


_GREPS = frozenset({"grep", "egrep", "fgrep"})


def _searches_trees(command: SimpleCommand) -> bool:
    """Whether the command reads every file under the folders it names: `rg`, `ag` and `ack`
    always, `git grep` too, and `grep` with `-r`/`-R`."""
    program, argv = command.program, command.argv
    if program in _TREE_SEARCHERS or (program == "git" and "grep" in argv[1:2]):
        return True
    if program not in _GREPS:
        return False
    flags = [w for w in argv[1:] if w.startswith("-") and not w.startswith("--")]
    return any(set(flag) & {"r", "R"} for flag in flags) or any(
        w in ("--recursive", "--dereference-recursive") for w in argv[1:]
    )
