"""A subagent's own git worktree (`isolation: "worktree"`): made before it starts, removed after
it ends when it changed nothing, kept (and named to its parent) when it did.

The worktree is checked out from the repository's HEAD on a branch of its own,
`stayer-agent-<id>`, in the repository's `.stayer/worktrees/agent-<id>` (as Claude Code keeps
its own under `.claude/worktrees/`), so the child's edits never touch the files the person or
the other agents work on, and the folder is not one of stayer's protected configuration
folders, where the child could write nothing. `.stayer/worktrees/` is added to the
repository's `.git/info/exclude`, so that the person's `git status` does not list it.
git runs as the git snapshot's does: with hooks, fsmonitor and transports off, and every
filter, diff and merge driver the repository's configuration names blanked (a checkout runs
a filter's smudge command, a status its clean command: a repository's program, run unasked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from stayer.context.git import DRIVERS, SAFE_SETTINGS, driver_settings, git_argv, git_env
from stayer.context.memory import project_root
from stayer.exec import run_argv
from stayer.tools.base import ToolFailure

GIT_TIMEOUT_S = 60.0
FOLDER = (".stayer", "worktrees")
"""Where, under the repository's root, the worktrees are made."""
EXCLUDED = "/.stayer/worktrees/"
"""The line of `.git/info/exclude` that keeps them out of the person's `git status`."""

Settings = tuple[tuple[str, str], ...]


class Worktree(Struct, frozen=True):
    """A worktree made for one subagent: where, on which branch, from which commit."""

    path: Path
    branch: str
    root: Path
    base: str
    """The commit it was checked out at (a commit the child made moves its branch past it)."""


async def make_worktree(cwd: Path, *, name: str, env: Mapping[str, str]) -> Worktree:
    """A new worktree of the repository holding `cwd`; raises `ToolFailure` in one line when
    `cwd` is in no repository or git cannot make it."""
    root = project_root(cwd)
    if root is None or not (root / ".git").exists():
        raise ToolFailure(
            f"isolation 'worktree' needs a git repository, and {cwd} is in none; leave "
            "isolation out"
        )
    settings = await _settings(root, env)
    found = await _git(root, settings, ("rev-parse", "HEAD"), env, "find the commit to start from")
    base = found.strip()
    path = root.joinpath(*FOLDER, f"agent-{name}")
    branch = f"stayer-agent-{name}"
    linked = [folder for folder in (path.parent.parent, path.parent) if folder.is_symlink()]
    if linked:
        # a link the repository holds would put the checkout, and what the child writes
        # there unasked, wherever it points
        raise ToolFailure(
            f"isolation 'worktree' is refused here: {linked[0]} is a link to another place; "
            "leave isolation out"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolFailure(f"could not make a worktree: {error}") from None
    _exclude(root)
    command = ("worktree", "add", "-b", branch, str(path), base)
    await _git(root, settings, command, env, "make a worktree")
    return Worktree(path=path, branch=branch, root=root, base=base)


def _exclude(root: Path) -> None:
    """`.stayer/worktrees/` in the repository's `.git/info/exclude`, when `.git` is a plain
    folder (a linked worktree's `.git` file, or a symlink, is left alone: the line is only
    tidiness, never worth writing through a link) and the line is not there yet."""
    git = root / ".git"
    info = git / "info"
    exclude = info / "exclude"
    if git.is_symlink() or not git.is_dir() or info.is_symlink() or exclude.is_symlink():
        return
    try:
        info.mkdir(exist_ok=True)
        old = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if EXCLUDED in old.splitlines():
            return
        gap = "" if not old or old.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as file:
            file.write(f"{gap}{EXCLUDED}\n")
    except (OSError, UnicodeDecodeError):
        return  # the worktree still works; the person's status lists the folder


async def settle_worktree(tree: Worktree, env: Mapping[str, str]) -> bool:
    """Remove the worktree and its branch when the child changed nothing there (no edit, no
    commit); whether it was kept."""
    settings = await _settings(tree.path, env)  # its own config.worktree too, if any
    looking = "look at the worktree"
    status = await _git(tree.path, settings, ("status", "--porcelain"), env, looking)
    head = (await _git(tree.path, settings, ("rev-parse", "HEAD"), env, looking)).strip()
    if status.strip() or head != tree.base:
        return True
    remove = ("worktree", "remove", "--force", str(tree.path))
    await _git(tree.root, settings, remove, env, "remove it")
    await _git(tree.root, settings, ("branch", "-D", tree.branch), env, "remove its branch")
    return False


async def _settings(where: Path, env: Mapping[str, str]) -> Settings:
    """The settings every git command on the worktree runs with: the safe ones, and an empty
    command for each driver the repository's configuration names (asked afresh each time: the
    configuration may have changed since)."""
    argv = git_argv(SAFE_SETTINGS, DRIVERS)
    try:
        listed = await run_argv(argv, cwd=where, env=git_env(env), timeout_s=GIT_TIMEOUT_S)
    except OSError as error:
        raise ToolFailure(
            f"could not read the git configuration: git did not run ({error})"
        ) from None
    if listed.exit_code not in (0, 1) or listed.timed_out:  # 1: no driver is defined
        said = (listed.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise ToolFailure(f"could not read the git configuration: git said {said}")
    blanked = driver_settings(listed.stdout)
    if blanked is None:
        raise ToolFailure(
            "isolation 'worktree' is refused here: a filter or diff driver's name in the "
            "repository's git configuration holds '=', so git could not be told to leave its "
            "command out; leave isolation out"
        )
    return (*SAFE_SETTINGS, *blanked)


async def _git(
    cwd: Path, settings: Settings, command: Sequence[str], env: Mapping[str, str], doing: str
) -> str:
    """git's stdout; a failure is a `ToolFailure` saying what could not be done and why."""
    argv = git_argv(settings, command)
    try:
        result = await run_argv(argv, cwd=cwd, env=git_env(env), timeout_s=GIT_TIMEOUT_S)
    except OSError as error:
        raise ToolFailure(f"could not {doing}: git did not run ({error})") from None
    if result.exit_code != 0 or result.timed_out:
        said = (result.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise ToolFailure(f"could not {doing}: git said {said}")
    return result.stdout
