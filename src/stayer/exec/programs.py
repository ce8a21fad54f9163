"""What programs do with the commands and code they are given: wrappers, shells, interpreters.

A command line can run a program without naming it where a command stands: behind a wrapper
(``timeout 5 curl …``, ``setsid curl …``, ``env -S'curl …'``), as code handed to a shell or an
interpreter (``sh -c``, ``python -c``, an awk program), or as text some builtin runs later
(``eval``, ``trap``). This module is the table of such programs and what each runs:

- A *wrapper* runs the command its operands make, after its own options and any leading
  operands (``timeout``'s duration, ``flock``'s lock file). Its options are read as the
  program reads them (`getopt`): an abbreviated long option resolves to the one it names, a
  bundle of short options is split, an option that takes a value takes it. An option the
  table does not know, or an ambiguous one, means the command cannot be found: the line is
  opaque, and callers fail closed.
- A *shell* or *interpreter* given code (``-c``, ``-e``, a program text, its standard input)
  runs what its words do not show: opaque. Given a script file, it is a program like any
  other, unless the same line writes files (then the script may be what it just wrote).
- A *text runner* (``eval``, ``source``, ``script``, ``su``, ``at``, ``parallel`` …) runs text
  as shell code, whatever its options: opaque.

`judge(command)` says which of these a simple command is: the command it wraps, nothing, or
why it cannot be seen through.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from msgspec import Struct

from .getopt import OptionSpec, Reading, options, read_options
from .shell_words import SimpleCommand, Word


class Wrapper(Struct, frozen=True):
    """A program that runs the command its operands make."""

    spec: OptionSpec
    operands: int = 0
    """Operands before the command (``timeout``'s duration)."""
    transparent: bool = False
    """Whether it changes only how the command runs (priority, a time limit), not what runs
    or as whom, so an allow rule for the command may stand for it."""
    assignments: bool = False
    """Whether ``NAME=value`` words may come before the command (``env``)."""
    fed: bool = False
    """Whether the command gets more arguments from input when it runs (``xargs``)."""
    hides: frozenset[str] = frozenset()
    """Options that make it run something its words do not show (``flock -c``, ``sudo -s``)."""
    nothing: frozenset[str] = frozenset()
    """Options with which it runs no command at all (``command -v``, ``ionice -p``)."""
    splits: frozenset[str] = frozenset()
    """Options whose value is itself a command line, split into words (``env -S``)."""
    changes: frozenset[str] = frozenset()
    """Options that make it do more than run the command (``time -o`` writes a file): with
    one, it no longer stands for the command alone."""


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
        options(
            "i0u:C:S:v",
            "ignore-environment null unset= chdir= split-string= block-signal[=] "
            "default-signal[=] ignore-signal[=] list-signal-handling debug help version",
            permute=False,
            lone_dash=True,
        ),
        assignments=True,
        splits=_set("-S", "--split-string"),
        nothing=_set("--help", "--version"),
    ),
    "command": Wrapper(options("pvV", permute=False), transparent=True, nothing=_set("-v", "-V")),
    "builtin": Wrapper(options(permute=False), transparent=True),
    "coproc": Wrapper(options(permute=False)),
    "exec": Wrapper(options("a:cl", permute=False), transparent=True),
    "nice": Wrapper(
        options("n:", "adjustment= help version", permute=False, numbers=True),
        transparent=True,
        nothing=_set("--help", "--version"),
    ),
    "nohup": Wrapper(
        options("", "help version", permute=False),
        transparent=True,
        nothing=_set("--help", "--version"),
    ),
    "time": Wrapper(
        options(
            "f:o:apqv",
            "format= output= append portability verbose quiet help version",
            permute=False,
        ),
        transparent=True,
        changes=_set("-o", "--output"),
        nothing=_set("--help", "--version"),
    ),
    "timeout": Wrapper(
        options(
            "k:s:v",
            "kill-after= signal= verbose preserve-status foreground help version",
            permute=False,
        ),
        operands=1,
        transparent=True,
        nothing=_set("--help", "--version"),
    ),
    "stdbuf": Wrapper(
        options("i:o:e:", "input= output= error= help version", permute=False),
        transparent=True,
        nothing=_set("--help", "--version"),
    ),
    "setsid": Wrapper(
        options("cfwhV", "ctty fork wait help version", permute=False),
        nothing=_set("-h", "-V", "--help", "--version"),
    ),
    "ionice": Wrapper(
        options(
            "c:n:p:P:tu:hV", "class= classdata= pid= pgid= ignore uid= help version", permute=False
        ),
        transparent=True,
        nothing=_set(
            "-p", "-P", "-u", "--pid", "--pgid", "--uid", "-h", "-V", "--help", "--version"
        ),
    ),
    "taskset": Wrapper(
        options("apchV", "all-tasks pid cpu-list help version", permute=False),
        operands=1,
        transparent=True,
        nothing=_set("-p", "--pid", "-h", "-V", "--help", "--version"),
    ),
    "flock": Wrapper(
        options(
            "sxeunw:E:oc:FhV",
            "shared exclusive unlock nonblock nb timeout= wait= conflict-exit-code= close "
            "command= no-fork verbose help version",
            permute=False,
        ),
        operands=1,
        hides=_set("-c", "--command"),
        nothing=_set("-h", "-V", "--help", "--version"),
    ),
    "sudo": Wrapper(
        options(
            "AbEeg:HhiKklnPp:R:r:SsT:t:U:u:VvD:C:BN",
            "askpass background bell close-from= chdir= preserve-env[=] edit group= set-home "
            "help host= login remove-timestamp reset-timestamp list non-interactive "
            "preserve-groups prompt= chroot= role= stdin shell type= command-timeout= "
            "other-user= user= version validate",
            permute=False,
        ),
        hides=_set("-s", "-i", "-e", "--shell", "--login", "--edit"),
        nothing=_set(
            "-l",
            "-v",
            "-V",
            "-K",
            "-h",
            "--list",
            "--validate",
            "--version",
            "--help",
            "--remove-timestamp",
        ),
    ),
    "doas": Wrapper(
        options("a:C:Lnsu:", permute=False), hides=_set("-s"), nothing=_set("-C", "-L")
    ),
    "chroot": Wrapper(
        options("", "groups= userspec= skip-chdir help version", permute=False),
        operands=1,
        nothing=_set("--help", "--version"),
    ),
    # a multi-call binary: `busybox rm x` is rm, `busybox sh -c …` a shell given code
    "busybox": Wrapper(
        options("", "list list-full install help", permute=False),
        nothing=_set("--list", "--list-full", "--install", "--help"),
    ),
    "xargs": Wrapper(
        options(
            "0a:E:e::i::I:l::L:n:oprP:s:txd:",
            "null arg-file= delimiter= eof[=] replace[=] max-lines[=] max-args= open-tty "
            "interactive no-run-if-empty max-procs= max-chars= process-slot-var= verbose "
            "show-limits exit help version",
            permute=False,
        ),
        fed=True,
        nothing=_set("--help", "--version", "--show-limits"),
    ),
}

XARGS_REPLACE = _set("-I", "-i", "--replace")
"""xargs options that put each input item into the command's words, its name included."""

SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash", "csh", "tcsh",
     "yash", "posh", "elvish", "nu", "xonsh", "pwsh", "powershell"}
)  # fmt: skip

HIDES_LATER = frozenset({"alias", "hash", "enable"})
"""Builtins after which a word of the line runs something other than what it names (an alias,
``hash -p /bin/rm ls``, ``enable -f lib.so name`` loading a builtin)."""

TEXT_RUNNERS = frozenset(
    {"eval", "source", ".", "trap", "fc", "watch", "script", "compgen", "complete", "su",
     "runuser", "sg", "newgrp", "at", "batch", "crontab", "parallel", "sem", "unshare",
     "nsenter", "chrt", "numactl", "prlimit", "setpriv", "pkexec", "systemd-run", "firejail",
     "proot", "fakeroot", "fakechroot", "torsocks", "proxychains", "proxychains4", "xvfb-run",
     "dbus-run-session", "dbus-launch", "strace", "ltrace", "valgrind", "gdb", "lldb", "perf",
     "catchsegv", "chpst", "expect", "tmux", "screen", "ssh", "entr", "inotifywait"}
)  # fmt: skip
"""Programs that run text as shell code (an alias's text runs where its name is used later),
or run a command through a grammar of their own that the table does not read (debuggers,
namespaces, remote shells, multiplexers): whatever they are given, their words do not show
for sure what runs."""


class Interpreter(Struct, frozen=True):
    """A language runtime: the options that hand it code, and those that take a value."""

    spec: OptionSpec
    code: frozenset[str]
    """Options whose value (or whose presence) is code to run."""
    stdin_without_script: bool = True
    """Whether, given no script, it runs what it reads on its standard input."""
    info: frozenset[str] = frozenset({"--version", "--help", "-h"})
    """Options with which it only says what it is (and reads no code from its input)."""


_PYTHON = Interpreter(
    options("bBdEhiIOPqsSuvVx" + "W:X:c:m:", "check-hash-based-pycs= help-env help-xoptions "
            "help-all help version", permute=False),
    code=_set("-c", "-i"),
    info=_set("--version", "-V", "--help", "-h", "--help-all", "--help-env", "--help-xoptions"),
)  # fmt: skip
_NODE = Interpreter(
    options("ce:p:r:ivh", "eval= print= require= import= interactive check input-type= "
            "experimental-default-type= loader= experimental-loader= version help",
            permute=False),
    code=_set("-e", "-p", "-r", "-i", "--eval", "--print", "--require", "--import",
              "--interactive", "--loader", "--experimental-loader"),
    info=_set("--version", "-v", "--help", "-h"),
)  # fmt: skip

_RUNS_ITS_ARGUMENTS = frozenset({"timeit", "pdb", "cProfile", "profile", "trace", "code",
                                 "runpy", "doctest"})  # fmt: skip
"""Python modules that run code given on the command line (or their input)."""

INTERPRETERS: dict[str, Interpreter] = {
    **dict.fromkeys(("python", "python2", "python3", "pypy", "pypy3"), _PYTHON),
    **dict.fromkeys(("node", "nodejs"), _NODE),
}
PYTHON_NAME = re.compile(r"^(?:python|pypy)[0-9.]*$")

ALWAYS_CODE = frozenset(
    {"awk", "gawk", "mawk", "nawk", "perl", "ruby", "php", "lua", "luajit", "tclsh", "wish",
     "Rscript", "R", "julia", "deno", "bun", "osascript", "groovy", "scala", "erl", "elixir",
     "iex", "guile", "racket", "sbcl", "clisp", "ghci", "runghc", "dc", "ed", "ex", "vi", "vim",
     "nvim", "emacs", "jshell", "php-cgi", "irb", "sqlite3", "psql", "mysql", "bc"}
)  # fmt: skip
"""Interpreters whose code flags the table does not spell out one by one (awk's program is
its first operand; perl's ``-e``, ``-M`` and ``-n`` all run code; an editor runs ``!cmd``):
with options, or with no script to run, they run code their words do not show. Given only a
script file they are a program like any other."""


def interpreter_runs_code(command: SimpleCommand) -> str | None:
    """Why an interpreter or shell runs code its words do not show; None if it runs a script
    file (or is no interpreter)."""
    program = command.program
    arguments = command.words[1:]
    if program in SHELLS:
        return None if _shell_script(arguments) else f"{program} runs shell code it is given"
    known = INTERPRETERS.get(program) or (
        _PYTHON if PYTHON_NAME.match(program) and program not in INTERPRETERS else None
    )
    if known is not None:
        return _interpreter_code(program, known, arguments)
    if program in ALWAYS_CODE:
        plain = (
            arguments
            and not arguments[0].dynamic
            and not arguments[0].text.startswith("-")
            and not reads_input(arguments[0].text)
        )
        if program in ("awk", "gawk", "mawk", "nawk") or not plain:
            return f"{program} runs a program it is given, whose effects its words do not show"
    return None


def _interpreter_code(program: str, known: Interpreter, arguments: tuple[Word, ...]) -> str | None:
    reading = read_options(known.spec, arguments)
    if reading.problem is not None:
        return f"{program}: {reading.problem}"
    if reading.has(*known.code):
        return f"{program} runs code it is given on its command line"
    if reading.has("-m"):
        module = reading.values("-m")
        if module and module[0] in _RUNS_ITS_ARGUMENTS:
            return f"{program} -m {module[0]} runs code it is given"
        return None  # a module by name, like a script file
    if reading.has(*known.info) and not reading.operands:
        return None  # it says what it is and runs nothing
    script = reading.operands[0] if reading.operands else None
    if script is None or reads_input(script.text):
        return (
            f"{program} runs code from its standard input" if known.stdin_without_script else None
        )
    return None


_INPUT = re.compile(r"^(?:-|\+|/dev/(?:stdin|fd/\d+|tty)|/proc/(?:self|thread-self|\d+)/fd/\d+)$")


def reads_input(script: str) -> bool:
    """Whether a script's name is the program's input (`-`, `/dev/stdin`, `/dev/fd/0`): the
    code is what comes down a pipe or a here-document, not a file."""
    if script.startswith("/"):
        script = "/" + os.path.normpath(script).lstrip("/")  # `//dev//stdin` too
    return bool(_INPUT.match(script))


def _shell_script(arguments: tuple[Word, ...]) -> bool:
    """Whether a shell with these arguments runs a script file, not code from ``-c`` or its
    input."""
    for word in arguments:
        if word.dynamic:
            return False
        if word.text == "--":
            continue
        if not word.text.startswith(("-", "+")) or word.text in ("-", "+"):
            return not reads_input(word.text)
        if not word.text.startswith("--") and set(word.text[1:]) & {"c", "s", "i"}:
            return False
        if word.text in ("--init-file", "--rcfile", "-o", "-O", "+o", "+O"):
            return False  # their values are read too; keep it simple and closed
    return False  # no script: it reads commands from its input


class Unwrapped(Struct, frozen=True):
    """What a wrapper runs: the command (None for nothing), or why that cannot be told."""

    command: SimpleCommand | None = None
    reason: str | None = None
    transparent: bool = False


SplitWords = Callable[[tuple[str, ...]], list[Word] | None]
"""The words a wrapper's strings make as the shell reads them (``env -S``), None when they make
no plain command: the parse's (`shell_syntax.split_words`), handed in, since it reads this table."""


def unwrap(command: SimpleCommand, wrapper: Wrapper, split_words: SplitWords) -> Unwrapped:
    """The command `wrapper` (the program of `command`) runs."""
    program = command.program
    words = command.words[1:]
    reading = read_options(wrapper.spec, words)
    if reading.problem is not None:
        return Unwrapped(reason=f"{program}: {reading.problem}, so what it runs cannot be told")
    if any(reading.has(option) for option in wrapper.hides):
        hidden = _first(reading, wrapper.hides)
        return Unwrapped(reason=f"{program} {hidden} runs something its words do not show")
    if any(reading.has(option) for option in wrapper.nothing):
        return Unwrapped()
    rest = list(words[reading.rest :])
    split = reading.values(*wrapper.splits)
    if split:
        spliced = split_words(split)
        if spliced is None:
            reason = f"{program} splits a string into a command in a way the parse cannot follow"
            return Unwrapped(reason=reason)
        rest = [*spliced, *rest]
    assignments: list[str] = []
    while wrapper.assignments and rest and _is_assignment(rest[0]):
        assignments.append(rest.pop(0).text)
    rest = rest[wrapper.operands :] if len(rest) > wrapper.operands else []
    fed = wrapper.fed or command.fed
    if not rest:
        if command.fed:
            return Unwrapped(reason=f"{program} is given its command on its input")
        return Unwrapped()
    replace = _replace_string(reading) if wrapper.fed else None
    if replace is not None and replace in rest[0].text:
        return Unwrapped(reason=f"{program} makes the command's name from what it reads")
    transparent = wrapper.transparent and not any(reading.has(o) for o in wrapper.changes)
    inner = SimpleCommand(tuple(rest), tuple(assignments), fed=fed)
    return Unwrapped(inner, transparent=transparent)


def _replace_string(reading: Reading) -> str | None:
    """The string xargs replaces with each item it reads (``-I R``, ``-i``), if any."""
    for name, value in reading.options:
        if name in XARGS_REPLACE:
            return value or "{}"
    return None


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _is_assignment(word: Word) -> bool:
    return not word.dynamic and bool(_ASSIGNMENT.match(word.text))


def _first(reading: Reading, names: frozenset[str]) -> str:
    return next(name for name, _ in reading.options if name in names)
