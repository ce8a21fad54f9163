"""What a Ray worker does with one task, run here without Ray: where its workspace goes, how its
transcript gets home, and that its model calls ask the batch's limiter.

`run_on_worker` is the body of the Ray task; Ray only calls it. The limiter actor's handle is
stood in for by `Handle`, which offers what a Ray handle offers (`method.remote(...)`, an
awaitable) over a real `LocalLimiter`, and counts the calls.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Iterator
from pathlib import Path

import pytest

from stayer.batch.config import BatchConfig, RateLimit
from stayer.batch.ray_limiter import LimiterHost
from stayer.batch.ray_worker import MARKER, WorkerPlan, run_on_worker, sees_driver_folder
from stayer.batch.tasks import BatchTask
from tests.e2e.cli import MODEL_VARIABLES
from tests.fakes.batch_router import TaskRouter, tagged, tool_turns
from tests.fakes.model_server import FakeModelServer

TOKEN = "0123456789abcdef"


class _Method:
    def __init__(self, handle: Handle, name: str) -> None:
        self.handle, self.name = handle, name

    def remote(self, *args: object) -> Awaitable[None]:
        self.handle.calls.append(self.name)
        method = getattr(self.handle.limiter, self.name)
        awaitable: Awaitable[None] = method(*args)
        return awaitable


class Handle:
    """The limiter actor's handle, as a worker uses it."""

    def __init__(self) -> None:
        self.limiter = LimiterHost({})
        self.calls: list[str] = []
        self.began = _Method(self, "began")
        self.acquire = _Method(self, "acquire")
        self.settle = _Method(self, "settle")
        self.slow_down = _Method(self, "slow_down")
        self.running_for = _Method(self, "running_for")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        for name in MODEL_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake


@pytest.fixture
def worker_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The worker's temporary folder."""
    path = tmp_path / "worker-tmp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


def _task(source: Path, task_id: str) -> BatchTask:
    return BatchTask(id=task_id, prompt=tagged(task_id, "write"), repo=str(source))


def test_a_worker_that_cannot_see_the_output_folder_sends_the_transcript_home(
    tmp_path: Path, server: FakeModelServer, source: Path, worker_tmp: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text("another batch's token")
    workspace = worker_tmp / "stayer-batch" / TOKEN / "workspaces" / "far"
    server.respond_with(TaskRouter({"far": tool_turns("far", 2, workspace=workspace)}))
    limits = {"*": RateLimit(tokens_per_minute=1e9)}  # tokens are counted: calls settle
    config = BatchConfig(
        out_dir=out, permission_mode="acceptEdits", rate_limits=limits, keep_workspaces=True
    )
    handle = Handle()

    outcome = run_on_worker(_task(source, "far"), config, WorkerPlan(TOKEN), handle, 2)
    landed = outcome.landed(config.transcripts, attempts=2)

    assert (landed.terminal_reason, landed.error, landed.attempts) == ("completed", None, 2)
    assert sorted(path.name for path in workspace.iterdir()) == [
        ".git", "README.md", "far-1.txt", "far-2.txt",
    ]  # fmt: skip
    assert "+far 2\n" in landed.diff
    assert not (out / "workspaces").exists()
    assert outcome.transcript
    assert landed.transcript is not None
    assert Path(landed.transcript).parent == out / "transcripts" / "far"  # as a local run's
    assert Path(landed.transcript).read_bytes() == outcome.transcript
    assert outcome.result.transcript is not None
    assert Path(outcome.result.transcript).is_relative_to(worker_tmp)
    assert handle.calls[0] == "began"  # the driver's watchdog counts from the worker's start
    assert set(asyncio.run(handle.limiter.running_for(["1:far", "2:far"]))) == {"2:far"}
    assert handle.calls.count("acquire") == 3  # each model call waited at the batch's limiter
    assert handle.calls.count("settle") == 3  # and told it what it used


def test_a_worker_that_sees_the_output_folder_works_in_it(
    tmp_path: Path, server: FakeModelServer, source: Path, worker_tmp: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text(TOKEN)
    workspace = out / "workspaces" / "near"
    server.respond_with(TaskRouter({"near": tool_turns("near", 1, workspace=workspace)}))
    config = BatchConfig(out_dir=out, permission_mode="acceptEdits", keep_workspaces=True)

    handle = Handle()

    outcome = run_on_worker(_task(source, "near"), config, WorkerPlan(TOKEN), handle, 1)
    landed = outcome.landed(config.transcripts, attempts=1)

    assert landed.terminal_reason == "completed"
    assert (workspace / "near-1.txt").read_text() == "near 1\n"
    assert outcome.transcript is None  # written in place
    assert landed.transcript is not None
    assert Path(landed.transcript).parent == out / "transcripts" / "near"
    assert Path(landed.transcript).stat().st_size > 0
    assert list(worker_tmp.iterdir()) == []
    assert handle.calls == ["began", "acquire", "acquire"]  # no tokens limit: nothing to settle


def test_the_marker_must_hold_this_batch_token(tmp_path: Path) -> None:
    assert not sees_driver_folder(tmp_path, TOKEN)  # no marker
    (tmp_path / MARKER).write_bytes(b"\xff\xfe")
    assert not sees_driver_folder(tmp_path, TOKEN)
    (tmp_path / MARKER).write_text(TOKEN + "0")
    assert not sees_driver_folder(tmp_path, TOKEN)
    (tmp_path / MARKER).write_text(TOKEN)
    assert sees_driver_folder(tmp_path, TOKEN)
