"""The local runner from Python: what the listener hears, in what order, what is skipped and run
again, and that one task's failure stays its own."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stayer.batch.config import BatchConfig
from stayer.batch.local import run_batch
from stayer.batch.results import ResultsLog, TaskResult, read_results
from stayer.batch.tasks import BatchTask
from stayer.events import StreamEvent
from stayer.providers.base import ModelRequest, Provider
from tests.e2e.cli import MODEL_VARIABLES
from tests.fakes.batch_router import TaskRouter, tagged
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


@pytest.fixture(autouse=True)
def _model_env(monkeypatch: pytest.MonkeyPatch, server: FakeModelServer) -> None:
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)


class Heard:
    """A listener that writes down what it is told, and checks each line is written first."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.said: list[tuple[str, ...]] = []

    def planned(self, total: int, skipped: int) -> None:
        self.said.append(("planned", str(total), str(skipped)))

    def started(self, task_id: str) -> None:
        self.said.append(("started", task_id))

    def finished(self, result: TaskResult) -> None:
        written = [line.id for line in read_results(self.out / "results.jsonl")]
        assert result.id in written  # durable before anyone hears of it
        self.said.append(("finished", result.id, result.terminal_reason))


def _tasks(source: Path, *ids: str, model: str | None = None) -> list[BatchTask]:
    return [
        BatchTask(id=task_id, prompt=tagged(task_id, "go"), repo=str(source), model=model)
        for task_id in ids
    ]


async def test_tasks_start_in_file_order_and_each_is_heard_after_its_line_is_written(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    ids = ("a", "b", "c", "d")
    server.respond_with(TaskRouter({task_id: [reply(f"done {task_id}")] for task_id in ids}))
    out = tmp_path / "out"
    heard = Heard(out)

    results = await run_batch(_tasks(source, *ids), BatchConfig(out_dir=out, concurrency=1), heard)

    assert [result.id for result in results] == list(ids)
    assert heard.said == [
        ("planned", "4", "0"),
        *((event, task_id, *rest) for task_id in ids
          for event, *rest in (("started",), ("finished", "completed"))),
    ]  # fmt: skip


async def test_done_tasks_are_skipped_and_retry_errors_runs_only_the_errors(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    out = tmp_path / "out"
    server.respond_with(TaskRouter({"ok": [reply("fine")], "bad": [reply("mended")]}))
    tasks = _tasks(source, "ok", "bad")
    broken = BatchTask(id="bad", prompt=tagged("bad", "go"), repo=str(source), ref="nowhere")
    first = await run_batch([tasks[0], broken], BatchConfig(out_dir=out), Heard(out))
    assert [(r.id, r.error is not None) for r in first] == [("ok", False), ("bad", True)]

    heard = Heard(out)
    again = await run_batch(tasks, BatchConfig(out_dir=out), heard)
    assert heard.said == [("planned", "2", "2")]  # an error is a result until asked to retry
    assert again == first

    heard = Heard(out)
    retried = await run_batch(tasks, BatchConfig(out_dir=out, retry_errors=True), heard)
    assert heard.said == [
        ("planned", "2", "1"),
        ("started", "bad"),
        ("finished", "bad", "completed"),
    ]
    assert [(r.id, r.error) for r in retried] == [("ok", None), ("bad", None)]
    written = read_results(out / "results.jsonl")
    assert [(r.id, r.result) for r in written] == [("ok", "fine"), ("bad", "mended")]


class _BrokenFor:
    """A client whose stream raises for one model: a fault of stayer's in one task only."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.model == "claude-broken":
            return self._broken()
        return self.inner.stream(request)

    async def _broken(self) -> AsyncIterator[StreamEvent]:
        nothing: tuple[StreamEvent, ...] = ()
        for event in nothing:
            yield event
        raise RuntimeError("a bug in one task")

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_one_tasks_fault_stays_its_own(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    server.respond_with(TaskRouter({"a": [reply("done a")], "c": [reply("done c")]}))
    out = tmp_path / "out"
    tasks = [
        *_tasks(source, "a"),
        *_tasks(source, "b", model="claude-broken"),
        *_tasks(source, "c"),
    ]

    results = await run_batch(
        tasks, BatchConfig(out_dir=out, concurrency=3), Heard(out), wrap=_BrokenFor
    )

    by_id = {result.id: result for result in results}
    assert by_id["b"].error is not None and by_id["b"].error.stage == "internal"
    texts = {line.id: line.result for line in read_results(out / "results.jsonl")}
    assert (texts["a"], texts["c"]) == ("done a", "done c")


async def test_a_cancelled_batch_writes_nothing_for_the_tasks_in_flight(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    held = reply("late").render("anthropic").stalled(before_headers=600)
    server.respond_with(TaskRouter({"a": [reply("done a")], "held": [held]}))
    out = tmp_path / "out"
    batch = asyncio.ensure_future(
        run_batch(_tasks(source, "a", "held"), BatchConfig(out_dir=out, concurrency=2), Heard(out))
    )
    await asyncio.to_thread(server.wait_for_requests, 2, 30.0)
    await asyncio.to_thread(_wait_for_line, out)

    batch.cancel()

    with pytest.raises(asyncio.CancelledError):
        await batch
    assert [result.id for result in read_results(out / "results.jsonl")] == ["a"]
    await asyncio.to_thread(server.wait_for_abandoned, 1, 30.0)
    with ResultsLog(out) as log:
        assert set(log.done) == {"a"}


def _wait_for_line(out: Path) -> None:
    import time

    deadline = time.monotonic() + 30
    while not read_results(out / "results.jsonl"):
        assert time.monotonic() < deadline, "no result line came"
        time.sleep(0.01)


async def test_a_rerun_over_large_diffs_holds_none_of_them(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    """Each task leaves 1.8 MB of files (each under the diff's limit on one file): its line
    carries a diff of over 2 MB. A re-run that skips every task reads those lines without
    keeping them, and returns only the small facts."""
    ids = ("a", "b", "c", "d", "e", "f")
    server.respond_with(TaskRouter({task_id: [reply(f"done {task_id}")] for task_id in ids}))
    out = tmp_path / "out"
    tasks = [
        BatchTask(
            id=task_id,
            prompt=tagged(task_id, "go"),
            repo=str(source),
            setup="for n in 1 2 3 4; do seq 1 75000 > big$n.txt; done",
        )
        for task_id in ids
    ]
    first = await run_batch(tasks, BatchConfig(out_dir=out, concurrency=3), Heard(out))
    assert all(not hasattr(facts, "diff") for facts in first)
    written = read_results(out / "results.jsonl")
    assert [len(line.diff) > 2_000_000 for line in written] == [True] * len(ids)
    del written

    tracemalloc.start()
    try:
        heard = Heard(out)
        again = await run_batch(tasks, BatchConfig(out_dir=out, concurrency=3), heard)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert heard.said == [("planned", "6", "6")]
    assert again == first
    assert peak < 8_000_000  # one line at a time, not six diffs (14 MB)


async def test_each_tasks_session_is_kept_once_under_the_output_folder_not_in_the_users_home(
    tmp_path: Path, source: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("STAYER_CONFIG_DIR", str(config))
    ids = ("a", "b")
    server.respond_with(TaskRouter({task_id: [reply(f"done {task_id}")] for task_id in ids}))
    out = tmp_path / "out"

    await run_batch(_tasks(source, *ids), BatchConfig(out_dir=out), Heard(out))

    for line in read_results(out / "results.jsonl"):
        assert line.transcript is not None
        transcript = Path(line.transcript)
        assert transcript.parent == out / "transcripts" / line.id
        assert f"done {line.id}" in transcript.read_text()
    kept = sorted(path.relative_to(out) for path in out.rglob("*.jsonl"))
    assert len(kept) == 3  # results.jsonl and one transcript per task, no copy
    assert not (config / "projects").exists()  # no project folder per task in the home
