"""`stayer batch` under a rate limit, in a 429 storm: the fleet slows down together.

One fake model server plays a provider that enforces a retry-after: from one request on, it
refuses everything for a few seconds (429 with retry-after), as a provider holding a client to
its word would. The batch's limit is given by a flag; what the server saw is the proof: no span
of time holds more requests than the limit allows, and while the provider asks for quiet the
whole fleet keeps quiet, not just the task it refused.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.e2e.batch_cli import (
    make_source,
    result_lines,
    run_batch,
    task_line,
    write_tasks,
    writing_router,
)
from tests.fakes.batch_router import TaskRouter
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Response, anthropic_error

TASKS = 12
TURNS = 2
RPM = 240.0
"""4 requests a second; `stayer batch` lets at most a second's worth go at once."""
BURST_S = 1.0
RETRY_AFTER_S = 3
STORM_AT = 10
"""The request that starts the storm: the fleet is in full flow by then."""
JITTER_S = 0.5
"""How much later than the limiter's go a request may reach the server's responder: the
batch's first request sets up its client first, and both processes share two busy cores."""


class Storm:
    """The server's answers: the tasks' scripts, except that from request `at` on everything
    is refused for `retry_after_s`; each request's arrival is noted, and whether it was refused."""

    def __init__(self, router: TaskRouter, *, at: int, retry_after_s: int) -> None:
        self.router, self.at, self.retry_after_s = router, at, retry_after_s
        self.lock = threading.Lock()
        self.arrivals: list[tuple[float, bool]] = []
        self.started: float | None = None

    def __call__(self, request: RecordedRequest) -> Response:
        now = time.monotonic()
        with self.lock:
            if len(self.arrivals) + 1 == self.at:
                self.started = now
            refused = self.started is not None and now < self.started + self.retry_after_s
            self.arrivals.append((now, refused))
        if refused:
            wait = {"retry-after": str(self.retry_after_s)}
            return anthropic_error(429, "rate_limit_error", "slow down", headers=wait)
        return self.router(request)


def most_in_any_span(times: list[float], span: float) -> int:
    return max(sum(1 for t in times if start <= t <= start + span) for start in times)


@pytest.mark.timeout(240)
def test_a_429_storm_slows_the_whole_fleet_and_the_limit_holds_throughout(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    ids = [f"t{number}" for number in range(1, TASKS + 1)]
    router = writing_router(out, ids, TURNS)
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line(task_id) for task_id in ids])
    storm = Storm(router, at=STORM_AT, retry_after_s=RETRY_AFTER_S)
    server.respond_with(storm)

    done = run_batch(
        tasks_file, out, "--permission-mode", "acceptEdits", "--concurrency", str(TASKS),
        "--requests-per-minute", str(int(RPM)),
        env=server.env(), cwd=tmp_path, timeout=220,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    results = result_lines(out)
    assert sorted(r["id"] for r in results) == sorted(ids)
    assert all(r["terminal_reason"] == "completed" and r["error"] is None for r in results)
    assert router.leftover() == {}

    times = [at for at, _ in storm.arrivals]
    assert len(times) == TASKS * (TURNS + 1) + sum(refused for _, refused in storm.arrivals)
    for span in (0.0, 0.5, 1.0, 2.0, 4.0):
        allowed = RPM * (span + BURST_S + JITTER_S) / 60
        most = most_in_any_span(times, span)
        shown = [(round(at - times[0], 3), refused) for at, refused in storm.arrivals]
        assert most <= allowed, f"{most} requests within {span} s: {shown}"
    # While the provider asked for quiet, only requests already on their way when it said so
    # reached it (a second's worth under this limit at the most), however many tasks were
    # ready to go; a fleet whose tasks each waited only for their own refusal would have sent
    # the limit's pace all along (4 a second, 12 in the storm).
    assert storm.started is not None
    quiet_until = storm.started + RETRY_AFTER_S
    during = [at for at in times if storm.started < at < quiet_until]
    assert len(during) <= RPM / 60 * BURST_S, during


def test_a_bad_rate_limit_in_the_settings_runs_nothing(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    settings = tmp_path / ".stayer" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"batch": {"rateLimits": {"anthropic": {"requestsPerMinute": -1}}}}')
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line("t1")])
    out = tmp_path / "out"

    done = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert done.status == 2
    assert done.stderr.splitlines() == [
        f"stayer: {settings}:1:62: batch.rateLimits.anthropic.requestsPerMinute: input should "
        "be greater than 0 (got -1); fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on "
        "without it"
    ]
    assert server.requests == []
    assert not out.exists()
