"""Where a command line may run what its words do not show, beyond the table of
`programs`: a command given more arguments when it runs, a file the same line writes and
then runs, and a rule for a program that runs whatever its arguments name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .programs import (
    ALWAYS_CODE,
    HIDES_LATER,
    INTERPRETERS,
    PYTHON_NAME,
    SHELLS,
    TEXT_RUNNERS,
    WRAPPERS,
)
from .shell_words import SimpleCommand

FED_SAFE = frozenset(
    {"rm", "rmdir", "mkdir", "touch", "chmod", "chown", "chgrp", "mv", "cp", "ln", "unlink",
     "truncate", "shred", "echo", "printf", "basename", "dirname", "ls", "cat", "head", "tail",
     "wc", "grep", "egrep", "fgrep", "file", "stat", "du", "md5sum", "sha1sum", "sha256sum",
     "sha512sum", "b2sum", "cksum", "readlink", "realpath", "uniq", "cut", "tr", "diff", "cmp",
     "test", "[", "nl", "od", "hexdump", "base64", "rev", "tac", "fold", "expand", "paste"}
)  # fmt: skip
"""Programs that more arguments at the end of their line (the items ``xargs`` reads, the
files ``find -exec`` finds) cannot make run anything: they are only more files or words."""


def fed_may_run(command: SimpleCommand) -> bool:
    """Whether a command given more arguments when it runs could be made to run a program by
    them (``xargs find .`` given ``-exec …``, ``xargs npm`` given ``exec …``); a wrapper that
    already names its command passes them on to it, which is judged on its own."""
    if command.runs or not command.words:
        return False
    return command.words[0].text not in FED_SAFE


FILE_MAKERS = frozenset(
    {"cp", "mv", "ln", "install", "tee", "dd", "rsync", "curl", "wget", "tar", "unzip",
     "cpio", "patch", "xxd", "gunzip", "split", "csplit"}
)  # fmt: skip
"""Programs that write a file whose name and content their arguments choose (besides any
redirection)."""


def runs_written_file(commands: Sequence[SimpleCommand], redirects: bool) -> list[str]:
    """Why a line may run a file it writes itself (``printf '\\x63url …' > r.sh; sh r.sh``,
    ``cp /usr/bin/curl c; ./c``): a program named by a path, or a shell or interpreter given a
    script, in a line that writes files. Its words then do not show what runs."""
    every = [inner for command in commands for inner in command.flattened()]
    writes = redirects or any(command.program in FILE_MAKERS for command in every)
    if not writes:
        return []
    for command in every:
        if not command.words or command.words[0].dynamic:
            continue
        name = command.words[0].text
        scripted = (
            command.program in SHELLS
            or command.program in ALWAYS_CODE
            or (command.program in INTERPRETERS or PYTHON_NAME.match(command.program))
        )
        if "/" in name or (scripted and len(command.words) > 1):
            return [f"{name} may run a file the same line writes"]
    return []


RUN_GIVEN = frozenset(
    {"find", "git", "sed", "make", "gmake", "npm", "npx", "pnpm", "pnpx", "yarn", "bunx", "uv",
     "uvx", "pipx", "poetry", "pdm", "hatch", "conda", "mamba", "rsync", "tar", "ssh", "scp",
     "docker", "podman", "kubectl", "nix", "nix-shell", "direnv", "cargo", "go", "dotnet",
     "gradle", "mvn", "ant", "rake", "bundle", "ncat", "nc", "socat", "openssl", "less",
     "more", "man", "vim", "vi", "nvim", "emacs", "nano", "gdb", "xdg-open", "open"}
)  # fmt: skip
"""Programs that, besides their own work, run a program or code their arguments name (find's
``-exec``, git's ``-c alias.x=!…``, sed's ``e``, make's ``--eval``, ``npm exec``, ``rsync -e``,
``tar --to-command``, ``ssh host cmd``, a pager's or editor's ``!cmd``)."""


RISKY_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"submodule", "bisect", "rebase", "difftool", "mergetool", "filter-branch",
                      "send-email", "daemon", "instaweb", "grep", "config", "fetch", "pull",
                      "clone", "push", "ls-remote", "archive"}),
    "npm": frozenset({"exec", "x", "explore", "init", "create", "run-script", "restart"}),
    "pnpm": frozenset({"exec", "dlx", "create"}),
    "yarn": frozenset({"exec", "dlx", "create"}),
    "uv": frozenset({"run", "tool"}),
    "poetry": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run", "shell"}),
    "pipx": frozenset({"run"}),
    "conda": frozenset({"run"}),
    "mamba": frozenset({"run"}),
    "docker": frozenset({"run", "exec", "compose"}),
    "podman": frozenset({"run", "exec"}),
    "kubectl": frozenset({"exec", "run", "debug"}),
    "nix": frozenset({"run", "shell", "develop"}),
    "direnv": frozenset({"exec"}),
    "bundle": frozenset({"exec"}),
    "cargo": frozenset({"run"}),
    "go": frozenset({"run", "generate"}),
    "dotnet": frozenset({"run", "exec"}),
    "make": frozenset(),
    "gmake": frozenset(),
}  # fmt: skip
"""Subcommands of `RUN_GIVEN` programs that run a program or code their arguments name;
the others (``git status``, ``npm install``) are judged as ordinary commands."""


def runs_programs(program: str, subcommand: str | None = None) -> str | None:
    """Why a rule allowing `program` (and `subcommand`, when given) with any arguments would
    allow any command, because it runs a command or code it is given; None when it does not.
    A shell or interpreter given a script by name runs only that script."""
    if program in WRAPPERS or program in TEXT_RUNNERS or program in HIDES_LATER:
        return f"{program} runs the command it is given"
    interpreter = program in SHELLS or program in INTERPRETERS or program in ALWAYS_CODE
    if interpreter or PYTHON_NAME.match(program):
        if subcommand and not subcommand.startswith("-") and program not in ("awk", "gawk"):
            return None
        return f"{program} runs the code it is given"
    if program in RUN_GIVEN:
        risky = RISKY_SUBCOMMANDS.get(program)
        if subcommand is None or subcommand.startswith("-") or risky is None:
            return f"{program} can run a command its arguments name"
        if subcommand in risky:
            return f"{program} {subcommand} can run a command its arguments name"
    return None


_NPM_RUNS = ("script-shell", "node-options", "userconfig", "globalconfig")
"""npm's (and pnpm's) settings that choose the shell its scripts run in, code node loads into
them, or a config file that may set either."""

COMMAND_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "tar": ("IF", ("use-compress-program", "to-command", "checkpoint-action", "info-script",
                   "new-volume-script", "rsh-command", "rmt-command")),
    "zip": ("", ("unzip-command",)),
    "sort": ("", ("compress-program",)),
    "split": ("", ("filter",)),
    "rsync": ("e", ("rsh", "rsync-path")),
    "man": ("PH", ("pager", "html")),
    "scp": ("SoF", ()),
    "wget": ("e", ("use-askpass", "execute")),
    "mapfile": ("C", ()),
    "readarray": ("C", ()),
    "make": ("f", ("eval", "file", "makefile")),
    "gmake": ("f", ("eval", "file", "makefile")),
    "less": ("", ()),
    "more": ("", ()),
    "npm": ("", _NPM_RUNS),
    "pnpm": ("", _NPM_RUNS),
}  # fmt: skip
"""Options whose value is a command or code a program runs (``tar -I``, ``zip -TT``,
``mapfile -C``, ``rsync -e``, ``man -P``, ``make --eval`` and a makefile of one's own, npm's
``--script-shell``), by
program: short letters, and long names in any abbreviation. A value may hide the program's
name (``'cu\\rl'``, ``"$(printf …)"``), so such a call runs what its words do not show."""

_RUNS_VALUE = re.compile(
    r"^(?:GIT_\w+|\w*_COMMAND|\w*ASKPASS|\w*PAGER|\w*EDITOR|VISUAL|LESS(?:OPEN|CLOSE)|BASH_ENV|"
    r"ENV|PROMPT_COMMAND|PS4|SHELLOPTS|BASHOPTS|LD_\w+|PYTHON\w*|NODE_OPTIONS|NODE_PATH|"
    r"PERL5\w*|RUBY(?:OPT|LIB)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|TAR_OPTIONS|\w*_RSH|PATH|"
    r"BROWSER|IFS|MAKEFLAGS|GZIP|ZIPOPT|XZ_OPT|ZSTD_\w+|HOME|XDG_CONFIG_(?:HOME|DIRS)|ZDOTDIR|"
    r"INPUTRC|(?i:npm_config_)\w+)=",
)
"""Variables whose value a program runs, or which choose what runs (a git setting, a pager, an
editor, a preloaded library, a shell's start-up file, the PATH, an npm setting such as
`npm_config_script_shell`, or the home and config folders whose files do: `HOME=x git status`
reads `x/.gitconfig`)."""


def runs_given_string(command: SimpleCommand) -> str | None:
    """Why a command runs a command or code given as a string its words hide: an option of
    `COMMAND_OPTIONS`, a ``+cmd`` to a pager, a variable that names a program to run."""
    steering = next((a for a in command.assignments if _RUNS_VALUE.match(a)), None)
    if steering is not None:
        return f"{steering.split('=', 1)[0]} chooses a program or code that runs"
    entry = COMMAND_OPTIONS.get(command.program)
    if entry is None:
        return None
    letters, longs = entry
    argv = command.argv[1:]
    if command.program == "tar" and argv and not argv[0].startswith("-"):
        argv = ("-" + argv[0], *argv[1:])  # `tar cIf …`: the first word is a bundle
    for word in argv:
        if word == "--":
            break
        if command.program in ("less", "more") and word.startswith("+"):
            return f"{command.program} {word} runs a command of its own"
        if word.startswith("--") and len(word) > 2:
            name = word[2:].split("=", 1)[0]
            hit = next((option for option in longs if option.startswith(name)), None)
            if hit is not None:
                return f"{command.program} --{hit} runs the command it is given"
        elif word.startswith("-") and set(word[1:]) & set(letters):
            letter = next(c for c in word[1:] if c in letters)
            return f"{command.program} -{letter} runs the command it is given"
        elif command.program == "zip" and word.startswith("-") and "TT" in word:
            return "zip -TT runs the command it is given"
    return None
