"""Where a command line may run what its words do not show, beyond the table of
`programs`: a command given more arguments when it runs, a file the same line writes and
then runs, and a rule for a program that runs whatever its arguments name.
"""

from __future__ import annotations

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
