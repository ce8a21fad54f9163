"""What a Bash command line writes: the paths its redirections and programs write, for the
protected-path check (`stayer.permissions.protected`), which judges them as it judges a file
tool's path.

The line is read by the shell parse (`stayer.exec.shell_syntax`). Redirections write their
targets. Each simple command it runs (wrapped ones too) is one of three kinds:

* a program that only looks (`bash_read_only`'s table, within its rules) writes nothing;
* a program known to write only some of its words (`bash_writers` for file utilities,
  `bash_download_writes`, `bash_config_writes`, `bash_git_writes`: `cp`'s destination, `sed
  -i`'s files, `curl -o`'s file, `tar -x`'s folder, …) writes those, and the places it writes
  of its own accord (`git config --global`, `crontab`, `git init`'s git directory);
* any other program may write whatever its words name, so every word it is given counts, and
  every path-like piece of a word (`python -c "open('.git/config', 'a')"`, `--out=~/.ssh/x`):
  `node w.js .git/hooks/pre-commit` writes, as far as anyone can tell, `.git/hooks/pre-commit`
  (reported apart, in `Written.mentioned`: `git push origin HEAD` makes no `HEAD` file).
  Builtins that touch no file (`export`, `cd`, `source`, …) are left out.

A relative path is joined to every folder the line may be in when it runs: where it starts
and each folder a `cd`, `pushd`, `git -C`, `tar -C` or `env -C` goes to. The parse does not
tie a redirection to its place among the `cd`s, and judging too many places only asks more.

A word known only at run time is read as far as it can be: `~`, `$HOME` and ANSI-C quoting
(`$'\\x2egit'`) are replaced by their values, braces are expanded, and a glob is matched on the
disk (the pattern itself counts too). What is still unknown (a variable, `$(…)`, the names
`xargs` or `find -exec` feed, a line that runs code its words do not show) is reported in
`Written.unknown`, and the permission layer asks only when it could be a protected place: when
its fixed part names one or ends in part of git's layout (`"$d/config"`), or when the line
names a protected place anywhere, which a variable could carry (`f=.git/config; … >> "$f"`).
Otherwise the mode decides, and bypassPermissions allows it. Asking for every such
destination would make every loop over files (`for f in *.py; do sed -i … "$f"; done`) and
every temporary file ask in every mode, while what such a value can hold is what the line
shows. A value read at run time (from a file, a program's output) can still hold a protected
name, as a script the line runs can write anywhere: `--sandbox` keeps a command's writes
inside the working directories, and nothing but the words keeps them out of `.git/` there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from stayer.exec.programs import WRAPPERS, interpreter_runs_code
from stayer.exec.readers import command_judgement
from stayer.exec.shell_syntax import Parsed, SimpleCommand, Word
from stayer.tools.base import Written
from stayer.tools.builtin.bash_found import UNKNOWN, Found, home
from stayer.tools.builtin.bash_read_only import NOT_FILE_READERS
from stayer.tools.builtin.bash_writers import WRITERS

_MOVES = frozenset({"cd", "pushd"})
_CHDIR_OPTIONS = {
    "git": frozenset({"-C"}),
    "tar": frozenset({"-C", "--directory"}),
    "env": frozenset({"-C", "--chdir"}),
    "sudo": frozenset({"-D", "--chdir"}),
}
_TOUCH_NOTHING = NOT_FILE_READERS | frozenset(
    {"cd", "pushd", "popd", "source", ".", "declare", "typeset", "local", "readonly", "hash",
     "alias", "unalias", "shopt", "let", "break", "continue", "jobs", "fg", "bg", "disown",
     "times", "getopts", "complete"}
)  # fmt: skip
"""Builtins that open no file of their own. `source` runs one, as `python x.py` does: what a
script writes is not in the line's words."""


def written(parsed: Parsed, cwd: Path) -> Written:
    """The paths a parsed line, run from `cwd` (the shell's folder now), writes."""
    found = Found(bases=[str(cwd)])
    _visit_folders(parsed, found)
    for target in parsed.writes:
        found.word(Word(target, dynamic=bool(re.search(r"[$`*?\[{'\"]", target))))
    for command in parsed.every_command():
        _command(found, command)
    return Written(
        tuple(dict.fromkeys(found.paths)),
        tuple(dict.fromkeys(found.unknown)),
        tuple(dict.fromkeys(found.mentioned)),
    )


def _command(found: Found, command: SimpleCommand) -> None:
    """What one simple command (not what it wraps) writes."""
    program = command.program
    if not command.words or program in _TOUCH_NOTHING:
        return
    if _runs_code(command) and all(
        word.text.startswith("-") and not word.dynamic for word in command.words[1:]
    ):
        found.later(UNKNOWN)  # code from its input: a pipe, a here-document
    if command_judgement(command) is None and (program not in WRAPPERS or command.runs):
        return
    writer = WRITERS.get(program)
    if writer is not None:
        writer(found, command)
        if command.fed:
            found.fed()
    elif not command.runs:  # a wrapper's command is judged on its own
        found.every_word(command)


_RUNS_TEXT = frozenset({"eval", "trap", "watch"})


def _runs_code(command: SimpleCommand) -> bool:
    """Whether a program runs code (a shell, an interpreter, `eval`): given no file or code in
    its words, the code comes from its input, and what it writes only the line's text shows.
    A wrapper whose command the parse could not tell (`env -S "…"`) is judged as any
    program: every word it is given."""
    return command.program in _RUNS_TEXT or interpreter_runs_code(command) is not None


def _visit_folders(parsed: Parsed, found: Found) -> None:
    """Every folder the line may be in: where it starts, and where each `cd` (and `-C`
    option) goes, each from the folder before it."""
    here = found.bases[0]
    for command in parsed.every_command():
        words = command.words[1:]
        if command.program in _MOVES:
            operands = [w for w in words if not w.text.startswith("-") or w.text == "-"]
            target = operands[0] if operands else Word("~")
            if target.text == "-":
                continue
            if target.dynamic:
                found.moved.append(target.text)
                continue
            here = os.path.normpath(os.path.join(here, home(target.text)))
            found.bases.append(here)
        for value in option_values(words, _CHDIR_OPTIONS.get(command.program, frozenset())):
            if value.dynamic:
                found.moved.append(value.text)
            else:
                found.bases.append(os.path.normpath(os.path.join(here, home(value.text))))
    found.bases[:] = list(dict.fromkeys(found.bases))


def option_values(words: tuple[Word, ...], names: frozenset[str]) -> list[Word]:
    """The values of the options `names` among `words` (`-C dir`, `-Cdir`, `--dir=x`)."""
    values: list[Word] = []
    for index, word in enumerate(words):
        text = word.text
        if text == "--":
            break
        if text in names and index + 1 < len(words):
            values.append(words[index + 1])
        elif text.startswith("--") and text.split("=", 1)[0] in names and "=" in text:
            values.append(Word(text.split("=", 1)[1], word.dynamic))
        elif not text.startswith("--") and text[:2] in names and len(text) > 2:
            values.append(Word(text[2:], word.dynamic))
    return values
