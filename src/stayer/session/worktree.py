"""A subagent's own git worktree (`isolation: "worktree"`): made before it starts, removed after
it ends when it changed nothing, kept (and named to its parent) when it did.

The worktree is checked out from the repository's HEAD on a branch of its own,
`stayer-agent-<id>`, in the parent session's folder (a temporary folder when the session keeps
none), so the child's edits never touch the files the person or the other agents work on.
git runs as stayer's other git commands do: with hooks, fsmonitor and transports off whatever
the repository's configuration says (a worktree's checkout would run a post-checkout hook).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from stayer.context.git import SAFE_SETTINGS, git_argv, git_env
from stayer.context.memory import project_root
from stayer.exec import run_argv
from stayer.tools.base import ToolFailure

GIT_TIMEOUT_S = 60.0


class Worktree(Struct, frozen=True):
    """A worktree made for one subagent: where, on which branch, from which commit."""

    path: Path
    branch: str
    root: Path
    base: str
    """The commit it was checked out at (a commit the child made moves its branch past it)."""


async def make_worktree(
    cwd: Path, *, folder: Path | None, name: str, env: Mapping[str, str]
) -> Worktree:
    """A new worktree of the repository holding `cwd`; raises `ToolFailure` in one line when
    `cwd` is in no repository or git cannot make it."""
    root = project_root(cwd)
    if root is None or not (root / ".git").exists():
        raise ToolFailure(
            f"isolation 'worktree' needs a git repository, and {cwd} is in none; leave "
            "isolation out"
        )
    base = (await _git(root, ("rev-parse", "HEAD"), env, "find the commit to start from")).strip()
    home = Path(tempfile.mkdtemp(prefix="stayer-worktrees-")) if folder is None else folder
    path = home / "worktrees" / f"agent-{name}"
    branch = f"stayer-agent-{name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    await _git(root, ("worktree", "add", "-b", branch, str(path), base), env, "make a worktree")
    return Worktree(path=path, branch=branch, root=root, base=base)


async def settle_worktree(tree: Worktree, env: Mapping[str, str]) -> bool:
    """Remove the worktree and its branch when the child changed nothing there (no edit, no
    commit); whether it was kept."""
    status = await _git(tree.path, ("status", "--porcelain"), env, "look at the worktree")
    head = (await _git(tree.path, ("rev-parse", "HEAD"), env, "look at the worktree")).strip()
    if status.strip() or head != tree.base:
        return True
    await _git(tree.root, ("worktree", "remove", "--force", str(tree.path)), env, "remove it")
    await _git(tree.root, ("branch", "-D", tree.branch), env, "remove its branch")
    return False


async def _git(cwd: Path, command: Sequence[str], env: Mapping[str, str], doing: str) -> str:
    """git's stdout; a failure is a `ToolFailure` saying what could not be done and why."""
    argv = git_argv(SAFE_SETTINGS, command)
    try:
        result = await run_argv(argv, cwd=cwd, env=git_env(env), timeout_s=GIT_TIMEOUT_S)
    except OSError as error:
        raise ToolFailure(f"could not {doing}: git did not run ({error})") from None
    if result.exit_code != 0 or result.timed_out:
        said = (result.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise ToolFailure(f"could not {doing}: git said {said}")
    return result.stdout
