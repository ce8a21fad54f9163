"""Each task's workspace, the shell commands run in it, and the diff of what the agent changed.

A workspace is a clone of the task's repository with the commit the task names checked out,
detached, at ``<root>/<task id>``. It is a clone even for a local repository, never a
``git worktree``: a worktree shares its refs, config and stash with the repository it came
from, so an agent's ``git checkout -b fix``, ``git commit`` on a branch or ``git stash`` would
land in the user's repository and collide with the other tasks doing the same. A local clone
costs little (git hardlinks the object files, which git never changes in place) and shares
nothing writable: the ref is resolved in the source read-only (``rev-parse``), the clone's
``origin`` can fetch from the source but not push to it, and every later write goes to the
clone's own files. A URL is cloned the same way, and the ref resolved in the clone.

Git runs here without prompting (``GIT_TERMINAL_PROMPT=0``, no terminal), without the user's
hooks (the clone gets no template and ``core.hooksPath`` points nowhere, for us and for the
agent's own git calls in it) and without fsmonitor. Making a workspace costs three git
processes and the diff two; the batch makes one per task, so that count is watched.

`workspace_diff` is everything the agent changed against the commit checked out: edits,
deletions and new files (ignored ones left out), binary files as ``--binary`` patches, taken
through a temporary index so the workspace's own index and files stay as the agent left them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from stayer.batch.tasks import BatchTask
from stayer.errors import StayerError
from stayer.exec import CommandResult, run_argv
from stayer.exec.child_env import child_env

GIT_TIMEOUT_S = 3600.0
"""How long one git call may take (a clone of a large repository over a slow link); a task's
own timeout, which cancels the call, is usually shorter."""

OUTPUT_TAIL_CHARS = 4096
"""How much of a command's output a `CommandOutcome` keeps: its end, where failures show."""

MAX_DIFF_BYTES = 32 * 1024 * 1024
"""A diff longer than this is cut (a marker says so): an agent that wrote a huge file must not
take the batch's memory with it."""

_NO_PUSH = "stayer-batch-workspace-cannot-push"
"""The clone's push URL for `origin`: no repository, so a push from the workspace fails
instead of reaching the user's repository."""

_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0")
"""Options for every git call here: no hooks, no fsmonitor program, no background gc."""

_REDIRECTS = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
     "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
     "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}
)  # fmt: skip
"""Variables that would point git elsewhere (set when stayer runs from a git hook)."""


class WorkspaceError(StayerError):
    """A workspace that could not be made or read; the message says what failed and what to
    do."""


class Workspace(Struct, frozen=True):
    """A task's workspace: a clone at `path` with `base` checked out."""

    path: Path
    base: str
    """The full sha of the commit checked out, which the diff is taken against."""


class CommandOutcome(Struct, frozen=True):
    """How a setup or check command ended."""

    exit_code: int
    """The shell's convention: killed by signal N is ``128 + N``."""
    output: str
    """The end of its stdout and stderr, interleaved as written (undecodable bytes replaced)."""
    timed_out: bool


async def make_workspace(task: BatchTask, root: Path) -> Workspace:
    """A fresh clone of `task.repo` at `task.ref` (None: its HEAD) in ``root/<task.id>``,
    replacing what a killed run left there; the source repository is only read."""
    path = _folder(root, task.id)
    await asyncio.to_thread(_clear, path)
    if task.remote:
        return await _from_url(task, path)
    sha = await _resolve(Path(task.repo), task.ref or "HEAD")
    if sha is None:
        raise WorkspaceError(
            f"task {task.id}: {task.ref!r} names no commit in {task.repo}; "
            "give a branch, tag or commit sha that exists there"
        )
    await _clone(task, path)
    return await _check_out(task, path, sha)


async def _from_url(task: BatchTask, path: Path) -> Workspace:
    await _clone(task, path)
    ref = task.ref or "HEAD"
    inside = _inside(path)
    sha = await _resolve(path, ref, inside) or await _resolve(
        path, f"refs/remotes/origin/{ref}", inside
    )
    if sha is None:
        raise WorkspaceError(
            f"task {task.id}: {ref!r} names no commit in {task.repo}; "
            "give a branch, tag or commit sha that the repository has"
        )
    return await _check_out(task, path, sha)


def _folder(root: Path, task_id: str) -> Path:
    if task_id in ("", ".", "..") or Path(task_id).name != task_id:
        raise WorkspaceError(f"task id {task_id!r} cannot name a folder; use a plain name")
    return root / task_id


def _clear(path: Path) -> None:
    """Remove a folder a killed run left, files the agent made read-only included."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, onerror=_writable_and_retry)
    path.parent.mkdir(parents=True, exist_ok=True)


def _writable_and_retry(function: object, name: str, _: object) -> None:
    parent = os.path.dirname(name)
    os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
    if callable(function):
        function(name)


async def _resolve(
    repository: Path, ref: str, extra: Mapping[str, str] | None = None
) -> str | None:
    """The commit `ref` names in `repository`, as a full sha; None when it names none."""
    verify = ("rev-parse", "--verify", "--quiet", "--end-of-options")
    result = await _git(repository, *verify, f"{ref}^{{commit}}", extra=extra)
    return result.stdout.strip() if result.exit_code == 0 else None


async def _clone(task: BatchTask, path: Path) -> None:
    result = await _git(
        path.parent,
        "clone", "--quiet", "--no-checkout", "--template=",
        "-c", "core.hooksPath=/dev/null", "-c", f"remote.origin.pushurl={_NO_PUSH}",
        "--", task.repo, str(path),
    )  # fmt: skip
    if result.exit_code != 0:
        await asyncio.to_thread(_clear, path)
        raise WorkspaceError(
            f"task {task.id}: cannot clone {task.repo}: {_last_line(result)}; "
            "check that it is a git repository this machine can reach"
        )


async def _check_out(task: BatchTask, path: Path, sha: str) -> Workspace:
    result = await _git(path, "checkout", "--quiet", "--detach", sha, extra=_inside(path))
    if result.exit_code != 0:
        raise WorkspaceError(
            f"task {task.id}: cannot check out {sha[:12]} of {task.repo}: {_last_line(result)}"
        )
    return Workspace(path=path, base=sha)


async def workspace_diff(workspace: Workspace) -> str:
    """Everything changed in `workspace` against its base, as a patch ``git apply`` takes:
    modified, deleted and new files (not ignored ones), binary files included."""
    with tempfile.TemporaryDirectory(prefix="stayer-diff-") as folder:
        index, patch = Path(folder, "index"), Path(folder, "patch")
        env = {**_inside(workspace.path), "GIT_INDEX_FILE": str(index)}
        # Starting from a copy of the workspace's index lets git skip hashing unchanged files.
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(shutil.copyfile, workspace.path / ".git" / "index", index)
        added = await _git(
            workspace.path, "-c", "core.excludesFile=/dev/null", "add", "--all", extra=env
        )
        _ok(added, workspace, "list its changes")
        diffed = await _git(
            workspace.path,
            *("diff-index", "--cached", "--binary", "--no-ext-diff", f"--output={patch}"),
            workspace.base,
            extra=env,
        )
        _ok(diffed, workspace, "take its diff")
        return await asyncio.to_thread(_read_patch, patch)


def _ok(result: CommandResult, workspace: Workspace, doing: str) -> None:
    if result.exit_code != 0:
        raise WorkspaceError(
            f"workspace {workspace.path}: cannot {doing}: {_last_line(result)}; "
            "is it still a git repository?"
        )


def _read_patch(patch: Path) -> str:
    size = patch.stat().st_size
    with open(patch, "rb") as file:
        data = file.read(MAX_DIFF_BYTES)
    text = data.decode("utf-8", errors="replace")
    if size > MAX_DIFF_BYTES:
        text += f"\n[stayer: diff cut at {MAX_DIFF_BYTES} of {size} bytes]\n"
    return text


async def run_command(
    command: str, cwd: Path, env: Mapping[str, str], timeout_s: float
) -> CommandOutcome:
    """Run `command` with ``bash -c`` in `cwd` with `env` as its whole environment, in a
    process group of its own that is stopped whole when the command ends, times out or is
    cancelled. Raises `WorkspaceError` when the shell cannot start (no such `cwd`)."""
    # stderr joins stdout in the shell itself, so the tail shows them in the order written.
    argv = ["/bin/sh", "-c", 'exec "$@" 2>&1', "stayer-batch", "bash", "-c", command]
    try:
        result = await run_argv(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            max_output_chars=2 * OUTPUT_TAIL_CHARS,
            stop_leftovers=True,
        )
    except OSError as error:
        raise WorkspaceError(
            f"cannot run a command in {cwd}: {error.strerror or error}; "
            "check that the workspace exists and bash is installed"
        ) from None
    return CommandOutcome(
        exit_code=result.exit_code, output=_tail(result), timed_out=result.timed_out
    )


def _tail(result: CommandResult) -> str:
    captured = result.stdout_capture
    kept = captured.tail if captured.omitted else captured.head + captured.tail
    tail = kept[-OUTPUT_TAIL_CHARS:]
    before = captured.length - len(tail)
    return f"[{before} characters before this omitted]\n{tail}" if before else tail


async def _git(cwd: Path, *arguments: str, extra: Mapping[str, str] | None = None) -> CommandResult:
    try:
        return await run_argv(
            ["git", *_SAFE, *arguments],
            cwd=cwd,
            env=_git_env(extra),
            timeout_s=GIT_TIMEOUT_S,
            max_output_chars=8192,
        )
    except FileNotFoundError as error:
        if error.filename == "git":
            raise WorkspaceError("git is not installed (not on PATH); install git") from None
        raise WorkspaceError(f"cannot run git in {cwd}: {error.strerror}") from None


def _inside(workspace: Path) -> dict[str, str]:
    """Git pointed at the workspace's own repository, never one around it (an agent that
    removed `.git` must not make us read or write a repository the output folder is in)."""
    return {"GIT_DIR": str(workspace / ".git"), "GIT_WORK_TREE": str(workspace)}


def _git_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {name: value for name, value in child_env(os.environ).items() if name not in _REDIRECTS}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", **(extra or {}))
    return env


def _last_line(result: CommandResult) -> str:
    lines: Sequence[str] = (result.stderr or result.stdout).strip().splitlines()
    if result.timed_out:
        return f"git took longer than {GIT_TIMEOUT_S:.0f} s"
    return lines[-1].strip() if lines else f"git exited with status {result.exit_code}"
