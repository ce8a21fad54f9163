"""What a `git` command writes that the protected-path check must see (see `bash_writes`).

Git writes its own repository on most commands (objects, the index, refs), in its own
format, and that is ordinary work. What is not: `git config` writes a config file (local,
`--global`, `--system`, `--worktree`, `--file`), whose settings git runs (`core.fsmonitor`,
`core.hooksPath`); `git init` and `git clone` make a git directory (with `--bare`, the
folder itself becomes one), `git submodule add` writes `.gitmodules`. Files named by
`-o`/`--output` are written. Any other word of a command that changes things is taken as a
path the command may write (`git checkout -- .husky/pre-commit`, `git mv x .bashrc`), except
a commit message and the like. `GIT_*` variables set for the command name places too
(`GIT_DIR=evil git init`).
"""

from __future__ import annotations

import os
import re

from stayer.exec.shell_syntax import SimpleCommand, Word
from stayer.tools.builtin.bash_args import read_args
from stayer.tools.builtin.bash_found import Found

_GLOBAL_VALUES = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
     "--super-prefix", "--attr-source"}
)  # fmt: skip
_LAYOUT = ("HEAD", "config", "objects", "refs", "hooks")


def git(found: Found, command: SimpleCommand) -> None:
    """The places a git command writes (see the module docstring)."""
    git_dir: Word | None = None
    for assignment in command.assignments:
        name, _, value = assignment.partition("=")
        if name.startswith("GIT_"):
            word = Word(value, dynamic=bool(re.search(r"[$`*?\[{'\"]", value)))
            found.word(word)
            git_dir = word if name == "GIT_DIR" else git_dir
    words = command.words[1:]
    index = 0
    while index < len(words) and words[index].text.startswith("-") and not words[index].dynamic:
        text = words[index].text
        if text == "--git-dir" and index + 1 < len(words):
            git_dir = words[index + 1]
        elif text.startswith("--git-dir="):
            git_dir = Word(text.partition("=")[2])
        index += 1 + (text in _GLOBAL_VALUES)
    if index >= len(words) or words[index].dynamic:
        found.every_word(command)
        return
    subcommand, rest = words[index].text, words[index + 1 :]
    if _sets_config(subcommand, rest):
        found.word(_inside(git_dir or Word(".git"), "config"))
    handler = _SUBCOMMANDS.get(subcommand, _other)
    handler(found, rest, git_dir)


_CONFIG_KEEPERS = frozenset({"remote", "maintenance", "worktree", "sparse-checkout", "lfs",
                             "submodule", "fsmonitor--daemon", "branch"})  # fmt: skip
_UPSTREAM = re.compile(r"^(?:--set-upstream\S*|--track\S*|-[a-zA-Z]*[ut][a-zA-Z]*|--no-track)$")


def _sets_config(subcommand: str, words: tuple[Word, ...]) -> bool:
    """Whether a git call may write the repository's config: subcommands that keep their
    state there (`remote add`, `maintenance register`, `branch --set-upstream-to`, a renamed
    branch), and an upstream set by `push -u`, `checkout --track` and the like."""
    from stayer.exec.git_calls import READ_ONLY_SUBCOMMANDS

    looks = READ_ONLY_SUBCOMMANDS.get(subcommand)
    if looks is not None and looks(words) is None:
        return False  # `git remote -v`, `git branch --list`: it only looks
    if subcommand in _CONFIG_KEEPERS:
        return True
    if subcommand in ("push", "pull", "fetch", "checkout", "switch"):
        texts = [word.text for word in words]
        upstream = any(_UPSTREAM.match(text) for text in texts)
        starts = any(t in ("-b", "-B", "-c", "-C") for t in texts) and any("/" in t for t in texts)
        return upstream or starts or any(word.dynamic for word in words)
    return False


def _config(found: Found, words: tuple[Word, ...], git_dir: Word | None) -> None:
    """`git config`: reading writes nothing; setting writes the file it is about."""
    args = read_args(
        words,
        frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}),
    )
    operands = [w.text for w in args.operands]
    reads = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color")
    if args.has(*reads, "--get-colorbool", "-l", "--list", "--blob") or operands[:1] in (
        ["get"],
        ["list"],
    ):
        return
    changes = ("--unset", "--unset-all", "--add", "--replace-all", "--rename-section")
    named_change = operands[:1] in (["set"], ["unset"], ["rename-section"], ["remove-section"])
    editing = args.has(*changes, "--remove-section", "-e", "--edit") or named_change
    if len(operands) < 2 and not editing and not any(w.dynamic for w in args.operands):
        return  # `git config user.name` reads it
    files = args.of("-f", "--file")
    for word in files:
        found.word(word)
    if files:
        return
    if args.has("--global"):
        found.path("~/.gitconfig")
        found.path("~/.config/git/config")
    elif args.has("--system"):
        found.path("/etc/gitconfig")
    else:
        name = "config.worktree" if args.has("--worktree") else "config"
        found.word(_inside(git_dir or Word(".git"), name))


def _init(found: Found, words: tuple[Word, ...], git_dir: Word | None) -> None:
    """`git init [folder]` makes `folder/.git` (with `--bare`, the folder itself), and
    whatever `--separate-git-dir` names."""
    args = read_args(
        words,
        frozenset({"--template", "--separate-git-dir", "-b", "--initial-branch"}),
    )
    folder = args.operands[0] if args.operands else Word(".")
    _made(found, folder, args.has("--bare"), git_dir, args.of("--separate-git-dir"))


_CLONE_VALUES = frozenset(
    {"-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--depth",
     "--reference-if-able", "--separate-git-dir", "--shallow-since", "--shallow-exclude",
     "-c", "--config", "--template", "-j", "--jobs", "--filter", "--server-option",
     "--bundle-uri", "--ref-format", "--revision"}
)  # fmt: skip


def _clone(found: Found, words: tuple[Word, ...], git_dir: Word | None) -> None:
    """`git clone URL [folder]` makes a git directory in the folder (named after the URL
    when not given), or, with `--bare` or `--mirror`, of the folder."""
    args = read_args(words, _CLONE_VALUES)
    bare = args.has("--bare", "--mirror")
    if len(args.operands) >= 2:
        folder = args.operands[1]
    elif args.operands and not args.operands[0].dynamic:
        folder = Word(_named_after(args.operands[0].text) + (".git" if bare else ""))
    else:
        folder = Word("\u2026")
    _made(found, folder, bare, None, args.of("--separate-git-dir"))


def _made(
    found: Found, folder: Word, bare: bool, git_dir: Word | None, separate: list[Word]
) -> None:
    """A git directory made: each part of its layout, which together make it one."""
    made = [git_dir] if git_dir is not None else [folder if bare else _inside(folder, ".git")]
    if separate:
        made = [*separate]
        found.word(_inside(folder, ".git"))  # a `.git` file naming it
    for place in made:
        for part in _LAYOUT:
            found.word(_inside(place, part))


def _named_after(url: str) -> str:
    """The folder `git clone` makes for a URL: its last name, without `.git`."""
    name = os.path.basename(url.rstrip("/").removesuffix("/.git").rstrip("/"))
    name = name.rpartition(":")[2] or name
    return name.removesuffix(".git").removesuffix(".bundle") or "\u2026"


def _submodule(found: Found, words: tuple[Word, ...], git_dir: Word | None) -> None:
    """`git submodule add` writes `.gitmodules` (and a git directory for the submodule)."""
    if words and words[0].text == "add":
        found.path(".gitmodules")
    else:
        _other(found, words, git_dir)


_OTHER_VALUES = frozenset(
    {"-m", "--message", "-F", "--file", "-C", "--reuse-message", "-c", "--reedit-message",
     "-t", "--template", "--author", "--date", "-o", "--output", "--output-directory"}
)  # fmt: skip
"""Options whose values are messages, authors and the like, not paths it writes; and the
output files, which are."""


def _other(found: Found, words: tuple[Word, ...], git_dir: Word | None) -> None:
    """Any other subcommand: the files its output options name, and each other word."""
    args = read_args(words, _OTHER_VALUES)
    for word in args.of("-o", "--output", "--output-directory"):
        found.word(word)
    for word in args.operands:
        found.pieces(word)


def _inside(folder: Word, name: str) -> Word:
    return Word(os.path.join(folder.text, name), folder.dynamic)


_SUBCOMMANDS = {"config": _config, "init": _init, "clone": _clone, "submodule": _submodule}
