"""The diff of what the agent changed in a workspace: `workspace_diff`, bounded.

It is everything changed against the commit checked out (edits, deletions, new files but
ignored ones, what the agent committed, binary files as ``--binary`` patches), taken through a
temporary index so the workspace's own index and files stay as the agent left them, and it
is always a patch ``git apply`` takes. An agent may leave anything behind, so taking it is
bounded in time, disk and memory:

* the changes are listed first (names and sizes: nothing is read or hashed), and a file over
  `MAX_FILE_BYTES`, before or after, is left out whole: it is never hashed into the
  workspace's objects nor written into a patch;
* the patch is read file by file, and once it would pass `MAX_DIFF_BYTES` the files that do
  not fit are left out whole too (a patch is never cut inside a file);
* every file left out is named in lines at the top of the patch, before its first
  ``diff --git``, where ``git apply`` reads no patch;
* the whole of it runs within `DIFF_TIMEOUT_S`, past which it is a `WorkspaceError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from msgspec import Struct

from stayer.batch.workspace_git import WorkspaceError, git_in, last_line, run_git
from stayer.exec import CommandResult

MAX_FILE_BYTES = 1024 * 1024
"""A changed file larger than this (before or after the change) is left out of the diff."""
MAX_DIFF_BYTES = 32 * 1024 * 1024
"""The most a diff holds; files past it are left out whole."""
DIFF_TIMEOUT_S = 120.0
"""How long taking a diff may take, whatever is left of the task's own time (it is taken
after a task that ran out of time too)."""
_LIST_CHARS = 16 * 1024 * 1024
"""The most of a listing of changes read; a longer one is an error (too many files)."""
_EXCLUDES = ("-c", "core.excludesFile=/dev/null")
"""The user's own global ignore file decides nothing about what the agent changed."""


class Workspace(Struct, frozen=True):
    """A task's workspace: a clone at `path` with `base` checked out."""

    path: Path
    base: str
    """The full sha of the commit checked out, which the diff is taken against."""
    config: bytes | None = None
    """The clone's own `.git/config` as made, put back before the batch runs git in the
    workspace again (`_own_git`); None: the workspace's is used as it is."""


class _Changes(Struct, frozen=True):
    """The paths that differ from the base, split by size."""

    kept: tuple[str, ...]
    too_big: tuple[str, ...]


async def workspace_diff(workspace: Workspace) -> str:
    """Everything changed in `workspace` against its base, as a patch ``git apply`` takes
    (see the module for what is left out and how it is named); raises `WorkspaceError` when
    git fails or it takes longer than `DIFF_TIMEOUT_S`."""
    try:
        async with asyncio.timeout(DIFF_TIMEOUT_S):
            return await _diff(workspace)
    except TimeoutError:
        raise WorkspaceError(
            f"workspace {workspace.path}: taking its diff took longer than "
            f"{DIFF_TIMEOUT_S:g} s; it is left out"
        ) from None


def _own_git(workspace: Workspace) -> None:
    """Make the workspace's repository the batch's own again before running git in it: the
    agent could have set a filter, a textconv or an `include` in `.git/config` (or pointed
    `.git` elsewhere) that git would run here, outside the task's policy and its sandbox. The
    clone's config goes back as made; a `.git` that is no folder of its own, or that names a
    common folder elsewhere, is refused."""
    dot_git = workspace.path / ".git"
    if not dot_git.is_symlink() and not dot_git.exists():
        return  # gone: git says so, and reads no repository around it (`git_in`)
    if dot_git.is_symlink() or not dot_git.is_dir() or (dot_git / "commondir").exists():
        raise WorkspaceError(
            f"workspace {workspace.path}: its .git was replaced or points elsewhere, so its "
            "diff is not taken (nothing of it is run)"
        )
    if workspace.config is None:
        return
    config = dot_git / "config"
    with contextlib.suppress(OSError):
        if config.read_bytes() == workspace.config and not config.is_symlink():
            return
    with contextlib.suppress(FileNotFoundError):
        config.unlink()
    config.write_bytes(workspace.config)
    for extra in ("config.worktree", "info/attributes"):
        with contextlib.suppress(FileNotFoundError):
            (dot_git / extra).unlink()


async def _diff(workspace: Workspace) -> str:
    await asyncio.to_thread(_own_git, workspace)
    with tempfile.TemporaryDirectory(prefix="stayer-diff-") as folder:
        index, patch = Path(folder, "index"), Path(folder, "patch")
        env = {**git_in(workspace.path), "GIT_INDEX_FILE": str(index), "GIT_LITERAL_PATHSPECS": "1"}
        # Starting from a copy of the workspace's index lets git skip hashing unchanged files.
        with contextlib.suppress(OSError):  # then git starts from an empty index
            await asyncio.to_thread(shutil.copyfile, workspace.path / ".git" / "index", index)
        changes = await _changes(workspace, env)
        if changes.kept:
            added = await run_git(
                workspace.path, *_EXCLUDES, "add", "--all", "--pathspec-from-file=-",
                "--pathspec-file-nul", extra=env, stdin=_nul(changes.kept),
            )  # fmt: skip
            _ok(added, workspace, "list its changes")
        if changes.too_big:  # one the agent staged stays out too
            reset = await run_git(
                workspace.path, "reset", "--quiet", workspace.base, "--pathspec-from-file=-",
                "--pathspec-file-nul", extra=env, stdin=_nul(changes.too_big),
            )  # fmt: skip
            _ok(reset, workspace, "leave its large files out")
        if not changes.kept:
            return _note(changes.too_big, ()) if changes.too_big else ""
        diffed = await run_git(
            workspace.path,
            *("diff-index", "--cached", "--binary", "--no-ext-diff", "--no-renames"),
            f"--output={patch}",
            workspace.base,
            extra=env,
        )
        _ok(diffed, workspace, "take its diff")
        text, over = await asyncio.to_thread(_read_patch, patch)
        return _note(changes.too_big, over) + text


async def _changes(workspace: Workspace, env: dict[str, str]) -> _Changes:
    """What differs from the base: new files (not ignored), and tracked files changed,
    deleted or added since (committed, staged or not), each with its sizes."""
    untracked = await run_git(
        workspace.path, *_EXCLUDES, "ls-files", "-z", "--others", "--exclude-standard",
        extra=env, max_output_chars=_LIST_CHARS,
    )  # fmt: skip
    _listed(untracked, workspace)
    tracked = await run_git(
        workspace.path, "diff-index", "-z", "--raw", "--no-renames", workspace.base,
        extra=env, max_output_chars=_LIST_CHARS,
    )  # fmt: skip
    _listed(tracked, workspace)
    paths = [path for path in untracked.stdout.split("\0") if path]
    before = _tracked(tracked.stdout)
    sizes = await _blob_sizes(workspace, env, [sha for sha in before.values() if sha])
    big = {path for path, sha in before.items() if sizes.get(sha, 0) > MAX_FILE_BYTES}
    paths += before
    big |= await asyncio.to_thread(_too_big_now, workspace.path, paths)
    kept = tuple(path for path in dict.fromkeys(paths) if path not in big)
    return _Changes(kept=kept, too_big=tuple(sorted(big)))


def _tracked(raw: str) -> dict[str, str]:
    """`diff-index -z --raw`'s paths, each with the sha of its blob in the base (empty for one
    the base does not have)."""
    fields = raw.split("\0")
    found: dict[str, str] = {}
    for header, path in zip(fields[::2], fields[1::2], strict=False):
        if header.startswith(":") and path:
            old = header.split()[2]
            found[path] = "" if set(old) == {"0"} else old
    return found


async def _blob_sizes(workspace: Workspace, env: dict[str, str], shas: list[str]) -> dict[str, int]:
    if not shas:
        return {}
    checked = await run_git(
        workspace.path, "cat-file", "--batch-check=%(objectname) %(objectsize)",
        extra=env, stdin="".join(f"{sha}\n" for sha in shas).encode(),
        max_output_chars=_LIST_CHARS,
    )  # fmt: skip
    _listed(checked, workspace)
    sizes: dict[str, int] = {}
    for line in checked.stdout.splitlines():
        sha, _, size = line.partition(" ")
        if size.isdigit():
            sizes[sha] = int(size)
    return sizes


def _too_big_now(root: Path, paths: Iterable[str]) -> set[str]:
    """The paths whose file in the work tree is over `MAX_FILE_BYTES` (links and missing
    files are not), and those git's listing could not name exactly (not UTF-8)."""
    big: set[str] = set()
    for path in paths:
        if "\ufffd" in path:
            big.add(path)
            continue
        with contextlib.suppress(OSError):
            if os.lstat(root / path).st_size > MAX_FILE_BYTES:
                big.add(path)
    return big


def _nul(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _listed(result: CommandResult, workspace: Workspace) -> None:
    _ok(result, workspace, "list its changes")
    if result.stdout_capture.omitted:
        raise WorkspaceError(
            f"workspace {workspace.path}: too many changed files to list; the diff is left out"
        )


def _ok(result: CommandResult, workspace: Workspace, doing: str) -> None:
    if result.exit_code != 0:
        raise WorkspaceError(
            f"workspace {workspace.path}: cannot {doing}: {last_line(result)}; "
            "is it still a git repository?"
        )


def _read_patch(patch: Path) -> tuple[str, tuple[str, ...]]:
    """The patch's files that fit in `MAX_DIFF_BYTES` together, and the `diff --git` names of
    those that did not."""
    kept: list[bytes] = []
    over: list[str] = []
    size = 0
    with open(patch, "rb") as file:
        for section in _sections(file):
            if size + len(section) <= MAX_DIFF_BYTES:
                kept.append(section)
                size += len(section)
            else:
                header = section.split(b"\n", 1)[0].decode("utf-8", errors="replace")
                over.append(header.removeprefix("diff --git "))
    return b"".join(kept).decode("utf-8", errors="replace"), tuple(over)


def _sections(lines: Iterable[bytes]) -> Iterable[bytes]:
    """A patch's lines gathered by file (each from its `diff --git` line); one file's section
    stops being gathered once it is over `MAX_DIFF_BYTES` (it cannot be kept whole)."""
    section: list[bytes] = []
    length = 0
    for line in lines:
        if line.startswith(b"diff --git ") and section:
            yield b"".join(section)
            section, length = [], 0
        if length <= MAX_DIFF_BYTES:
            section.append(line)
            length += len(line)
    if section:
        yield b"".join(section)


def _note(too_big: tuple[str, ...], over: tuple[str, ...]) -> str:
    """The lines at the top of a patch naming what it leaves out."""
    lines = [
        f"stayer: left out of this diff, over {MAX_FILE_BYTES} bytes: {path}\n" for path in too_big
    ]
    lines += [
        f"stayer: left out of this diff, past its {MAX_DIFF_BYTES} bytes: {names}\n"
        for names in over
    ]
    return "".join(lines)
