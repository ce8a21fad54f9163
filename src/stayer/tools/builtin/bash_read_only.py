"""Which Bash commands only look, and which files a command line reads.

A command line is read-only when the parse sees through all of it (`stayer.exec.shell_syntax`),
no redirection writes a file, and every simple command it runs (wrapped ones too) is in the
table of programs known to change nothing, called within that program's options
(`stayer.exec.readers`). Anything else, an unknown program included, is not.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from stayer.exec.getopt import OptionSpec, read_options
from stayer.exec.git_calls import reads_history, split_git
from stayer.exec.programs import WRAPPERS
from stayer.exec.readers import READERS, line_judgement
from stayer.exec.sed_scripts import sed_call
from stayer.exec.shell_syntax import Parsed, SimpleCommand, parse
from stayer.tools.base import HISTORY_READ
from stayer.tools.builtin.bash_words import Folders, expanded


def is_read_only_command(command_line: str) -> bool:
    """Whether running `command_line` changes nothing: fully parsed, no write redirection, and
    every simple command it runs read-only (`stayer.exec.readers`)."""
    return read_only_reason(command_line) is None


def runs_git(command_line: str) -> bool:
    """Whether the line runs git anywhere."""
    return any(command.program == "git" for command in parse(command_line).every_command())


def read_only_reason(command_line: str) -> str | None:
    """Why `command_line` is not read-only, in a few words; None when it is."""
    return line_judgement(parse(command_line))


NOT_FILE_READERS = frozenset(
    {"echo", "printf", "true", "false", "test", "[", "pwd", "which", "type", "expr",
     "seq", "sleep", "basename", "dirname", "whoami", "id", "uname", "hostname", "exit",
     "export", "set", "unset", "read", "wait", "kill", "return", "shift", "ulimit", "umask",
     "nproc"}
)  # fmt: skip
"""Programs that never open their arguments as files, whose words a read rule need not see."""

_CHANGES_FOLDER = frozenset({"cd", "pushd", "popd"})
_LISTS_FOLDER = frozenset({"ls", "dir", "vdir", "du", "find", "tree"})
"""Programs that read the folder they run in when given none."""


def paths_read(parsed: Parsed, cwd: Path | None = None) -> tuple[str, ...] | None:
    """What a parsed line may read, as written: every word after a program's name that is not
    an option (the value of ``--opt=value``), and every file redirected in, relative to where
    the line has `cd`-ed by then (from `cwd`, the shell's folder, when given). Each word is
    expanded as the shell would first: ``~`` to the home folder, braces (``{a,b}``,
    ``{1..3}``), and globs on disk (the pattern stays too). None when one of them is known only
    when the line runs (an expansion), comes from standard input (`xargs`) or from a file the
    words do not show (``--files0-from``, ``sha256sum -c``, sed's ``r``), or runs code.

    Words that are not paths are in it too: they can only make a deny rule match more. A folder
    a program reads whole (a recursive search, a copy or archive of a tree, ``diff -r``) comes
    as ``folder/**``; a git word `rev:path` also as `path`; a git call that prints what the
    history holds as `HISTORY` followed by the folder it runs in."""
    if parsed.hidden or any(target.dynamic for target in parsed.reads):
        return None
    words: list[str] = []
    shell = Folders(str(cwd) if cwd is not None else "")
    for command in parsed.every_command():
        if command.fed or hides_reads(command) or _moves_elsewhere(command):
            return None  # it reads names it is given elsewhere than its words
        if command.program == "shopt":
            return None  # globs (case, extended, `**`) no longer match as they seem
        if command.program in _CHANGES_FOLDER:
            if not shell.move(command):
                return None
            continue
        if command.program in NOT_FILE_READERS:
            continue
        named = _command_reads(command, shell)
        if named is None:
            return None
        words += [shell.join(word) for word in named]
    redirected = [shell.join(target.text) for target in parsed.reads]
    found = (*words, *redirected)
    if any(_PROCESS_PATH.match(os.path.normpath(path)) for path in found):
        return None  # a process's own view (its folder, its open files): not the shell's
    return found


_PROCESS_PATH = re.compile(r"^/(?:proc/(?:self|thread-self|\d+)(?:/|$)|dev/fd(?:/|$))")


def _command_reads(command: SimpleCommand, shell: Folders) -> list[str] | None:
    """What one command (not a `cd`) may read, relative to the shell's folder."""
    named = _named(command, shell)
    if named is None:
        return None
    if not _operands(command) and command.program in _LISTS_FOLDER:
        named.append(".")
    trees = tree_operands(command)
    if trees is not None:
        named += [folder.rstrip("/") + "/**" for folder in trees or ["."]]
    if command.program == "git" and _git_history(command):
        limited = _pathspecs(command, shell.here)
        if limited is None and _names_its_blobs(command):
            limited = []  # `show REV:path`, `blame path`: its words name what it prints
        named += [HISTORY + (shell.here or ".")] if limited is None else limited
    return named


HISTORY = HISTORY_READ


def _moves_elsewhere(command: SimpleCommand) -> bool:
    """Whether a wrapper runs its command in another folder (``env -C dir``), or git is
    pointed at another repository, so its words are not relative to where the line is."""
    argv = command.argv
    if command.program == "env":
        reading = read_options(WRAPPERS["env"].spec, command.words[1:])
        return reading.problem is not None or reading.has("-C", "--chdir")
    if command.program == "git":
        return any(a.startswith("GIT_") for a in command.assignments) or any(
            w in ("-C", "--git-dir", "--work-tree") or w.startswith(("--git-dir=", "--work-tree="))
            for w in argv[1:]
        )
    return False


def _git_history(command: SimpleCommand) -> bool:
    call = split_git(command.words[1:])
    return call is None or (
        call.subcommand is not None and reads_history(call.subcommand, call.arguments)
    )


def _pathspecs(command: SimpleCommand, here: str) -> list[str] | None:
    """The paths after a git call's `--`: all it can print of the history, each a file or
    the tree of a folder (or of one that is gone now); None when there are none, one is a
    pattern or magic git reads its own way, or `--full-diff` prints whole commits anyway."""
    argv = command.argv
    if "--" not in argv or any(w.startswith("--full-d") for w in argv[: argv.index("--")]):
        return None
    given = argv[argv.index("--") + 1 :]
    if not given or any(c in spec for spec in given for c in "*?[:\\"):
        return None
    return [spec if Path(here, spec).is_file() else spec.rstrip("/") + "/**" for spec in given]


_PLAIN_BLOB = re.compile(r"[\w./~^@-]*:(?!/)[^:{}]+")
"""`REV:path` as it looks when it names one file (not `:/message`, not `REV^{/text}:path`)."""


def _names_its_blobs(command: SimpleCommand) -> bool:
    """Whether a git call prints only files its words name: `git show` or `git cat-file` of
    `REV:path` words alone, `git blame` or `git annotate` of a path."""
    call = split_git(command.words[1:])
    if call is None or call.subcommand is None:
        return False
    operands = [w.text for w in call.arguments if not w.text.startswith("-")]
    if call.subcommand in ("show", "cat-file"):
        named = [o for o in operands if o not in ("blob", "tree", "commit", "tag")]
        return bool(named) and all(_PLAIN_BLOB.fullmatch(o) for o in named)
    if call.subcommand in ("blame", "annotate"):
        return bool(operands) and all(":" not in o for o in operands)
    return False


def _operands(command: SimpleCommand) -> list[str]:
    return [word for word in command.argv[1:] if not word.startswith("-")]


def _named(command: SimpleCommand, shell: Folders) -> list[str] | None:
    """The words of a command that may name files (an option's value too, glued to a short
    option or not), each expanded as the shell would: tilde, braces, globs on disk; None when
    one is known only when the line runs."""
    named: list[str] = []
    known = READERS.get(command.program)
    glued = _glued_values(command, known.spec) if known is not None else None
    for word in command.words[1:]:
        texts = _values(word.text, exact=glued is not None)
        if word.dynamic and word.text.startswith("-") and not word.text.startswith("--"):
            # a reader's glued value known only when it runs could be any file; another
            # program's (`make -j$(nproc)`) is taken for a value, not a file
            texts = [] if glued is None else [word.text[2:]]
        for text in texts:
            found = expanded(text, dynamic=word.dynamic, shell=shell)
            if found is None:
                return None
            named += found
            if command.program == "git":
                # `HEAD:secrets/key`, `:.env`, `HEAD^{/x:y}:key`: after every colon
                named += [item[i + 1 :] for item in found for i, c in enumerate(item) if c == ":"]
    return named + (glued or [])


def _glued_values(command: SimpleCommand, spec: OptionSpec) -> list[str] | None:
    """The values a program of the table takes glued to a short option (``-fFILE``), read
    with its own option list; None when the options cannot be read."""
    reading = read_options(spec, command.words[1:])
    if reading.problem is not None:
        return None
    glued = [w.text[2:] for w in command.words[1:] if w.text.startswith("-") and len(w.text) > 2]
    return [value for _, value in reading.options if value and any(value in g for g in glued)]


def _values(text: str, *, exact: bool = False) -> list[str]:
    """What in a word may be a file's name: the word; for ``--opt=value`` the value; for a
    short option with its value glued on (``-fFILE``, ``-nsFILE``), every tail it could be,
    unless the program's own options say which (`exact`)."""
    if text.startswith("--"):
        value = text.partition("=")[2]
        return [value] if value else []
    if text.startswith("-") and len(text) > 2 and not exact:
        return [text[index:] for index in range(2, min(len(text), 64))] + [text[2:]]
    return [] if text.startswith("-") else [text]


_ALWAYS_TREES = frozenset({"rg", "ag", "ack", "ack-grep", "tar", "bsdtar", "7z", "7za", "7zr"})
_RECURSIVE = {
    **dict.fromkeys(("cp", "scp"), ("rRa", ("--recursive", "--archive"))),
    "rsync": ("ra", ("--recursive", "--archive")),
    "diff": ("r", ("--recursive",)),
    "zip": ("rR", ("--recurse-paths", "--recurse-patterns")),
    **dict.fromkeys(("gzip", "bzip2", "xz", "zstd", "lz4"), ("r", ("--recursive",))),
}
_GREPS = frozenset({"grep", "egrep", "fgrep"})


def tree_operands(command: SimpleCommand) -> list[str] | None:
    """The folders a command reads whole (every file under each), or None when it reads no
    tree: searchers always, `grep -r`, copies and archives of a tree, `diff -r`, `git diff
    --no-index`; [] when that is the folder it runs in."""
    program = command.program
    if program in _GREPS:
        return _grep_trees(command)
    if program == "git":
        call = split_git(command.words[1:])
        if call is None or call.subcommand == "grep":
            return _searched(command)
        no_index = call.subcommand == "diff" and any(w.text == "--no-index" for w in call.arguments)
        return [w.text for w in call.arguments if not w.text.startswith("-")] if no_index else None
    if program in _ALWAYS_TREES:
        return (
            _searched(command) if program in ("rg", "ag", "ack", "ack-grep") else _operands(command)
        )
    recursive = _RECURSIVE.get(program)
    if recursive is None:
        return None
    letters, longs = recursive
    for text in command.argv[1:]:
        if (
            text.startswith("--")
            and any(option.startswith(text.split("=", 1)[0]) for option in longs)
            and len(text) > 2
        ):
            return _operands(command)
        if text.startswith("-") and not text.startswith("--") and set(text[1:]) & set(letters):
            return _operands(command)
    return None


def _grep_trees(command: SimpleCommand) -> list[str] | None:
    reading = read_options(READERS["grep"].spec, command.words[1:])
    if reading.problem is not None:
        return _searched(command)  # unreadable: assume the worst
    recursive = reading.has("-r", "-R", "--recursive", "--dereference-recursive") or any(
        bool(value) and "recurse".startswith(value)
        for value in reading.values("-d", "--directories")
    )
    if not recursive:
        return None
    operands = [word.text for word in reading.operands]
    given = reading.has("-e", "--regexp", "-f", "--file")
    return operands if given else operands[1:]


_NAME_LISTS = {
    "tar": ("T", ("files-from",)),
    "zip": ("@", ("names-stdin",)),
    "rsync": ("", ("files-from",)),
    "cpio": ("", ()),
}
"""Programs that read the names of the files to read from a file or their input."""


def hides_reads(command: SimpleCommand) -> bool:
    """Whether a command reads files named somewhere its words do not show: a list in a file
    (``--files0-from``, ``sha256sum -c``, ``file -f``), a sed script's ``r`` command."""
    program = command.program
    if program == "sed":
        call = sed_call(command.words[1:])
        return call is None or call.files or call.runs
    if program in _NAME_LISTS:
        letters, longs = _NAME_LISTS[program]
        return program == "cpio" or any(
            (w.startswith("--") and any(o.startswith(w[2:].split("=")[0]) for o in longs)
             and len(w) > 2)
            or (w.startswith("-") and not w.startswith("--") and set(w[1:]) & set(letters))
            for w in command.argv[1:]
        )  # fmt: skip
    reader = READERS.get(program)
    if reader is None or not reader.hidden_reads:
        return False
    reading = read_options(reader.spec, command.words[1:])
    return reading.problem is not None or reading.has(*reader.hidden_reads)


_PATTERN_OPTIONS = frozenset({"-e", "--regexp", "-f", "--file"})


def _searched(command: SimpleCommand) -> list[str]:
    """The folders (or files) a search is given: its words after the pattern, which comes
    first unless an option gives it (`-e`, `-f`); `git grep`'s after its subcommand; ripgrep's
    read with its own options (a `-g` glob is no folder)."""
    if command.program == "rg":
        reading = read_options(READERS["rg"].spec, command.words[1:])
        if reading.problem is None:
            operands = [word.text for word in reading.operands]
            given = reading.has("-e", "--regexp", "-f", "--file")
            return operands if given or reading.has("--files") else operands[1:]
    argv = list(command.argv[2:] if command.program == "git" else command.argv[1:])
    given = any(w in _PATTERN_OPTIONS or w.startswith(("--regexp=", "--file=")) for w in argv)
    words = [w for w in argv if not w.startswith("-")]
    return words if given else words[1:]
