"""Each task's workspace and the diff of what the agent changed in it.

A workspace is a clone of the task's repository with the commit the task names checked out,
detached, at ``<root>/<task id>``. It is a clone even for a local repository, never a
``git worktree``: a worktree shares its refs, config and stash with the repository it came
from, so an agent's ``git checkout -b fix``, ``git commit`` on a branch or ``git stash`` would
land in the user's repository and collide with the other tasks doing the same. A local clone
is made ``--shared``: it reads the source's objects where they are (git's alternates) and
writes only its own, so it costs almost nothing and shares no file: a hardlinked clone (git's
default) would share the object files themselves, and a chmod or a write in place by anything
that is not git (the agent's tools, the repository's own check) would corrupt the source; a
full copy (``--no-hardlinks``) costs a copy of the whole history per task. So the source must
keep its objects while the workspace is used (no ``git gc --prune=now`` of rewritten history
in it meanwhile). The ref is resolved in the source read-only (``rev-parse``), the clone's
``origin`` can fetch from the source but not push to it (a push to the source's path is the
user's to allow or the sandbox's to stop: ``stayer batch --sandbox``), and every later write
goes to the clone's own files. A URL is cloned the usual way, and the ref resolved in the
clone.

Git runs here without prompting and without the user's hooks (`workspace_git`); the clone
gets no template and keeps ``core.hooksPath`` pointing nowhere, so the agent's own git calls
in it run none either. Making a workspace costs three git processes and the diff four to six;
the batch makes one per task, so that count is watched. The setup and check commands run in it
through `commands` (re-exported here with the rest of the workspace's API).

`workspace_diff` (its own module, re-exported here) is everything the agent changed against
the commit checked out, bounded: files over a size limit are left out whole and named, and it
is taken within a time limit of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from stayer.batch.commands import CommandOutcome, run_command
from stayer.batch.tasks import BatchTask
from stayer.batch.workspace_diff import Workspace, workspace_diff
from stayer.batch.workspace_git import WorkspaceError, git_in, last_line, run_git

__all__ = [
    "CommandOutcome",
    "Workspace",
    "WorkspaceError",
    "make_workspace",
    "remove_workspace",
    "run_command",
    "workspace_diff",
]

_NO_PUSH = "stayer-batch-workspace-cannot-push"
"""The clone's push URL for `origin`: no repository, so a push from the workspace fails
instead of reaching the user's repository."""


async def make_workspace(task: BatchTask, root: Path) -> Workspace:
    """A fresh clone of `task.repo` at `task.ref` (None: its HEAD) in ``root/<task.id>``,
    replacing what a killed run left there; the source repository is only read."""
    path, source = await asyncio.to_thread(_make_room, root, task)
    if task.remote:
        return await _from_url(task, path)
    ref = task.ref or "HEAD"
    # git must not look for a repository around the source when the source is none any more
    around = {"GIT_CEILING_DIRECTORIES": os.path.dirname(source)}
    sha = await _resolve(task, Path(source), ref, around)
    if sha is None:
        raise WorkspaceError(
            f"task {task.id}: {ref!r} names no commit in {task.repo}; "
            "give a branch, tag or commit sha that exists there"
        )
    await _clone(task, source, path, "--shared")
    return await _check_out(task, path, sha)


async def _from_url(task: BatchTask, path: Path) -> Workspace:
    await _clone(task, task.repo, path)
    try:
        return await _check_out(task, path, await _resolve_remote(task, path))
    except WorkspaceError:
        await asyncio.to_thread(_clear, path)
        raise


async def _resolve_remote(task: BatchTask, path: Path) -> str:
    """`task.ref` in a fresh clone, where the remote's branches are `origin/<name>`."""
    ref = task.ref or "HEAD"
    inside = git_in(path)
    sha = await _resolve(task, path, ref, inside) or await _resolve(
        task, path, f"refs/remotes/origin/{ref}", inside
    )
    if sha is None:
        raise WorkspaceError(
            f"task {task.id}: {ref!r} names no commit in {task.repo}; "
            "give a branch, tag or commit sha that the repository has"
        )
    return sha


def _make_room(root: Path, task: BatchTask) -> tuple[Path, str]:
    """The workspace's folder, cleared, and the repository to clone, both absolute (git runs
    in the workspaces' folder, not ours)."""
    if task.id in ("", ".", "..") or Path(task.id).name != task.id:
        raise WorkspaceError(f"task id {task.id!r} cannot name a folder; use a plain name")
    path = root.absolute() / task.id
    _clear(path)
    return path, task.repo if task.remote else os.path.abspath(task.repo)


def remove_workspace(root: Path, task_id: str) -> None:
    """Remove task `task_id`'s workspace under `root`, if it has one; raises `WorkspaceError`
    when it cannot be removed."""
    if task_id in ("", ".", "..") or Path(task_id).name != task_id:
        return  # it never had one
    _clear(root.absolute() / task_id)


def _clear(path: Path) -> None:
    """Remove a folder a killed run left, folders the agent made read-only included."""
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            try:
                shutil.rmtree(path)
            except OSError:
                _make_writable(path)
                shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WorkspaceError(
            f"cannot make {path} afresh: {error.strerror or error}; remove it by hand"
        ) from None


def _make_writable(path: Path) -> None:
    """Let us list and empty every folder under `path` (links are not followed)."""
    _owner_may_all(str(path))
    for folder, subfolders, _ in os.walk(path):
        for name in subfolders:  # before os.walk goes into them
            _owner_may_all(os.path.join(folder, name))


def _owner_may_all(folder: str) -> None:
    with contextlib.suppress(OSError):
        if not os.path.islink(folder):
            os.chmod(folder, os.stat(folder).st_mode | stat.S_IRWXU)


async def _resolve(
    task: BatchTask, repository: Path, ref: str, extra: Mapping[str, str] | None = None
) -> str | None:
    """The commit `ref` names in `repository`, as a full sha; None when it names none."""
    verify = ("rev-parse", "--verify", "--quiet", "--end-of-options")
    result = await run_git(repository, *verify, f"{ref}^{{commit}}", extra=extra)
    if result.exit_code == 0:
        return result.stdout.strip()
    if result.stderr.strip() or result.timed_out:  # not a missing ref: git could not look
        raise WorkspaceError(
            f"task {task.id}: cannot read {task.repo}: {last_line(result)}; "
            "check that it is a git repository you may read"
        )
    return None


async def _clone(task: BatchTask, source: str, path: Path, *how: str) -> None:
    result = await run_git(
        path.parent,
        "clone", "--quiet", "--no-checkout", "--template=", *how,
        "-c", "core.hooksPath=/dev/null", "-c", f"remote.origin.pushurl={_NO_PUSH}",
        "--", source, str(path),
    )  # fmt: skip
    if result.exit_code != 0:
        await asyncio.to_thread(_clear, path)
        raise WorkspaceError(
            f"task {task.id}: cannot clone {task.repo}: {last_line(result)}; "
            "check that it is a git repository this machine can reach"
        )


async def _check_out(task: BatchTask, path: Path, sha: str) -> Workspace:
    result = await run_git(path, "checkout", "--quiet", "--detach", sha, extra=git_in(path))
    if result.exit_code != 0:
        raise WorkspaceError(
            f"task {task.id}: cannot check out {sha[:12]} of {task.repo}: {last_line(result)}"
        )
    config = await asyncio.to_thread((path / ".git" / "config").read_bytes)
    return Workspace(path=path, base=sha, config=config)
