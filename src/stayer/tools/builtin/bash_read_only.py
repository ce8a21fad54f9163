"""Which Bash commands only look: the parse of the line (`stayer.exec.shell_syntax`) and a
table of programs known to change nothing, with the options that would make them change things.

A command line is read-only when the parse sees through all of it, no redirection writes a file,
and every simple command it runs (wrapped ones too) is in the table and called within its rules.
Anything else, an unknown program included, is not: the table lists what is known to be safe, in
the manner of Claude Code's read-only validation, rather than what is known to be harmful.
"""

from __future__ import annotations

import glob as _glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stayer.exec.shell_syntax import Parsed, SimpleCommand, Word, parse


@dataclass(frozen=True, slots=True)
class Options:
    """A program that is read-only unless given one of these options.

    `short` letters are refused anywhere in a bundle (``-ro`` holds ``-o``); `long` names also
    in any unambiguous abbreviation (``--out`` for ``--output``), as getopt accepts them; `words`
    only as whole words (find's ``-delete``). A program with any such option refuses arguments
    known only at run time, which could be one. `most_operands` bounds the non-option words
    (``uniq in out`` writes ``out``).
    """

    short: str = ""
    long: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    most_operands: int | None = None

    def allow(self, words: tuple[Word, ...], *, fed: bool) -> bool:
        """Whether a call with these arguments only reads."""
        strict = bool(self.short or self.long or self.words or self.most_operands is not None)
        if strict and (fed or any(word.dynamic for word in words)):
            return False
        operands = 0
        for word in words:
            text = word.text
            if text in self.words or self._long_refused(text) or self._short_refused(text):
                return False
            operands += not text.startswith("-") or text == "-"
        return self.most_operands is None or operands <= self.most_operands

    def _long_refused(self, text: str) -> bool:
        if not text.startswith("--") or text == "--":
            return False
        name = text.split("=", 1)[0]
        return any(refused.startswith(name) for refused in self.long)

    def _short_refused(self, text: str) -> bool:
        if text.startswith("--") or not text.startswith("-"):
            return False
        return any(letter in self.short for letter in text[1:])


Rule = Callable[[tuple[Word, ...], bool], bool]
"""Whether a program called with these arguments (and more if fed) only reads."""


def _options(
    *,
    short: str = "",
    long: tuple[str, ...] = (),
    words: tuple[str, ...] = (),
    most_operands: int | None = None,
) -> Rule:
    options = Options(short, long, words, most_operands)
    return lambda arguments, fed: options.allow(arguments, fed=fed)


_ANY = _options()
_SED_SCRIPT = re.compile(
    r"^(?:(?:\d+|\$|/[^/\n]*/)(?:,(?:\d+|\$|/[^/\n]*/))?)?!?\s*"
    r"(?:[pdq=l]|s(?P<d>[/|#,:])(?:(?!(?P=d)).)*(?P=d)(?:(?!(?P=d)).)*(?P=d)[gpiI0-9]*)?$"
)
"""One sed command that only prints: an optional address, then p, d, q, =, l or an s/// without
the w and e flags (which write a file and run a command)."""


def _sed(words: tuple[Word, ...], fed: bool) -> bool:
    """sed reads when it edits nothing in place and its script only prints and substitutes."""
    if fed or any(word.dynamic for word in words):
        return False
    scripts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(words):
        text = words[index].text
        if text in ("-e", "--expression") and index + 1 < len(words):
            scripts.append(words[index + 1].text)
            index += 2
            continue
        if text.startswith("--expression="):
            scripts.append(text.split("=", 1)[1])
        elif text.startswith("-") and text != "-":
            if not re.fullmatch(r"-[nEsuz]+|--(?:quiet|silent|regexp-extended|debug)", text):
                return False  # -i, -f, --in-place, -e glued to its script, anything unknown
        else:
            operands.append(text)
        index += 1
    if not scripts:
        if not operands:
            return False
        scripts = [operands[0]]
    commands = [part.strip() for script in scripts for part in re.split(r"[;\n]", script)]
    return all(_SED_SCRIPT.match(command) for command in commands)


_GIT_GLOBAL = {"--no-pager": 0, "-P": 0, "--no-optional-locks": 0, "-C": 1}
"""Options before git's subcommand that change nothing (``-c`` could set a pager or a hook)."""

_GIT_OUTPUT = _options(long=("--output",))
_GIT_BRANCH_CHANGES = _options(
    short="dDmMcCfu",
    long=(
        *("--delete", "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream"),
        *("--edit-description", "--track", "--no-track", "--create-reflog"),
    ),
)


def _git_branch(words: tuple[Word, ...], fed: bool) -> bool:
    """``git branch`` only lists: no option that changes a branch, and names only with --list
    (without it, a name creates that branch)."""
    if not _GIT_BRANCH_CHANGES(words, fed):
        return False
    texts = [word.text for word in words]
    listing = "--list" in texts or "-l" in texts
    return listing or all(text.startswith("-") for text in texts)


def _date(words: tuple[Word, ...], fed: bool) -> bool:
    """date reads unless told to set the clock (``-s``, or an operand other than +FORMAT)."""
    operands_are_formats = all(
        word.text.startswith(("+", "-")) for word in words if not word.dynamic
    )
    return operands_are_formats and _DATE_OPTIONS(words, fed)


_DATE_OPTIONS = _options(short="s", long=("--set",))


_GIT_SUBCOMMANDS: dict[str, Rule] = {
    "status": _ANY,
    "diff": _GIT_OUTPUT,
    "log": _GIT_OUTPUT,
    "show": _GIT_OUTPUT,
    "branch": _git_branch,
    "rev-parse": _ANY,
    "ls-files": _ANY,
    "ls-tree": _ANY,
    "blame": _ANY,
    "describe": _ANY,
    "cat-file": _ANY,
    "merge-base": _ANY,
    "grep": _options(short="O", long=("--open-files-in-pager",)),
}


def _git(words: tuple[Word, ...], fed: bool) -> bool:
    """git reads when its subcommand is one that only looks, within that subcommand's rules."""
    if any(word.dynamic for word in words):
        return False
    index = 0
    while index < len(words) and words[index].text in _GIT_GLOBAL:
        index += 1 + _GIT_GLOBAL[words[index].text]
    if index >= len(words):
        return False
    rule = _GIT_SUBCOMMANDS.get(words[index].text)
    return rule is not None and rule(words[index + 1 :], fed)


READ_ONLY_PROGRAMS: dict[str, Rule] = {
    **dict.fromkeys(
        (
            *("ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "true", "false", ":"),
            *("which", "type", "whoami", "id", "uname", "basename", "dirname", "realpath"),
            *("readlink", "stat", "du", "df", "grep", "egrep", "fgrep", "cut", "tr", "nl"),
            *("diff", "cmp", "comm", "column", "fold", "paste", "rev", "tac", "od", "hexdump"),
            *("md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "jq", "test", "["),
            *("printenv", "seq", "sleep", "nproc", "uptime", "ps", "expand", "unexpand"),
        ),
        _ANY,
    ),
    "rg": _options(long=("--pre", "--pre-glob")),
    "sort": _options(short="o", long=("--output", "--compress-program")),
    "uniq": _options(most_operands=1),
    "xxd": _options(most_operands=1),
    "base64": _options(short="o", long=("--output",)),
    "tree": _options(short="o"),
    "file": _options(short="C", long=("--compile",)),
    "date": _date,
    "find": _options(
        words=(
            *("-exec", "-execdir", "-ok", "-okdir", "-delete"),
            *("-fprint", "-fprint0", "-fprintf", "-fls"),
        )
    ),
    "sed": _sed,
    "git": _git,
    # Wrappers: they read when what they run does, and that is judged on its own.
    **dict.fromkeys(("env", "command", "nice", "timeout", "stdbuf", "xargs"), _ANY),
    "time": _options(short="oa", long=("--output", "--append")),
}

_HARMLESS_ASSIGNMENTS = re.compile(r"^(?:LANG|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|TERM)=")
"""Variables a read-only command may be given: locale, time zone and display only (others,
such as GIT_EXTERNAL_DIFF or LD_PRELOAD, can make a program run something else)."""


def command_is_read_only(command: SimpleCommand) -> bool:
    """Whether one simple command (not what it wraps) only reads."""
    if not all(_HARMLESS_ASSIGNMENTS.match(assignment) for assignment in command.assignments):
        return False
    if not command.words:
        return True
    rule = READ_ONLY_PROGRAMS.get(command.words[0].text)
    return rule is not None and rule(command.words[1:], command.fed)


def is_read_only_command(command_line: str) -> bool:
    """Whether running `command_line` changes nothing: fully parsed, no write redirection, and
    every simple command it runs read-only."""
    parsed = parse(command_line)
    if parsed.opaque or parsed.writes:
        return False
    return all(command_is_read_only(command) for command in parsed.every_command())


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
