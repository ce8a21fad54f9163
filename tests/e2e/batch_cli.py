"""Helpers for the `stayer batch` end-to-end tests: a source repository, a tasks file, the
command as a subprocess, and what it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.e2e.cli import Completed, clean_env
from tests.fakes.batch_router import TaskRouter, tagged, tool_turns
from tests.fakes.sse import Response

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**clean_env(), **GIT_ENV},
    )
    return done.stdout


def make_source(path: Path) -> Path:
    """A git repository with one commit holding README.md."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("the source\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    return path


def snapshot(repo: Path) -> tuple[str, str, str]:
    """What must not change in a source repository: its refs, status and worktrees."""
    return (
        git(repo, "show-ref", "--head"),
        git(repo, "status", "--porcelain", "--ignored"),
        git(repo, "worktree", "list", "--porcelain"),
    )


def task_line(task_id: str, prompt: str = "write the files", **more: Any) -> dict[str, Any]:
    """One line of a tasks file: `task_id`, its prompt tagged for the router, the repository
    `source` beside the tasks file, and `more` fields."""
    return {"id": task_id, "prompt": tagged(task_id, prompt), "repo": "source", **more}


def writing_router(
    out: Path, ids: Iterable[str], turns: int, *, first: Mapping[str, Response] | None = None
) -> TaskRouter:
    """A router whose every task of `ids` writes `turns` files, one a turn, in its workspace
    under `out`; a task named in `first` gets that answer before its script."""
    router = TaskRouter()
    for task_id in ids:
        before = [] if first is None or task_id not in first else [first[task_id]]
        script = tool_turns(task_id, turns, workspace=out / "workspaces" / task_id)
        router.add(task_id, [*before, *script])
    return router


def write_tasks(path: Path, tasks: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def batch_argv(tasks: Path, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "stayer", "batch", str(tasks), "--out", str(out), *more]


def run_batch(
    tasks: Path, out: Path, *more: str, env: Mapping[str, str], cwd: Path, timeout: float = 120
) -> Completed:
    done = subprocess.run(
        batch_argv(tasks, out, *more),
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Completed(done.returncode, done.stdout, done.stderr)


def start_batch(
    tasks: Path, out: Path, *more: str, env: Mapping[str, str], cwd: Path
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        batch_argv(tasks, out, *more),
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result_lines(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_results(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Wait until `count` whole result lines are written (the batch's own signal)."""
    path = out / "results.jsonl"
    deadline = time.monotonic() + 90
    while True:
        whole = path.read_bytes().count(b"\n") if path.exists() else 0
        if whole >= count:
            return
        assert process.poll() is None, "the batch ended before writing the results awaited"
        assert time.monotonic() < deadline, f"only {whole} of {count} results came"
        time.sleep(0.02)
