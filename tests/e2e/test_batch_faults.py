"""`stayer batch` when things go wrong: killed mid-batch, a task that hangs, a model server that
cannot be reached for one task, a setup that fails."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest

from stayer.tools.names import BASH
from tests.e2e.batch_cli import (
    make_source,
    result_lines,
    run_batch,
    start_batch,
    task_line,
    wait_for_results,
    write_tasks,
    writing_router,
)
from tests.fakes.batch_router import TaskRouter
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Response, ToolCall, reply

HOLD_S = 600.0
"""A stream that stalls this long before its headers: a hang, as far as a test can tell."""
HANG_TIMEOUT_S = 8
"""The hanging tasks' time: room, on a busy machine, to reach their hang before it runs out."""


def _hang() -> Response:
    return reply("never sent").render("anthropic").stalled(before_headers=HOLD_S)


@pytest.mark.timeout(120)
def test_a_killed_batch_loses_no_result_and_reruns_only_what_is_missing(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    ids = [f"t{n}" for n in range(1, 13)]
    # t7-t9 hold the three workers until the kill; their scripts go on in the re-run
    held = {task_id: _hang() for task_id in ("t7", "t8", "t9")}
    router = writing_router(out, ids, 1, first=held)
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line(task_id) for task_id in ids])
    server.respond_with(router)
    mode = ("--permission-mode", "acceptEdits", "--concurrency", "3")

    process = start_batch(tasks_file, out, *mode, env=server.env(), cwd=tmp_path)
    try:
        wait_for_results(out, 6, process)
        server.wait_for_requests(6 * 2 + 3, timeout_s=60)  # the held ones are in flight
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()
    first = result_lines(out)
    assert sorted(result["id"] for result in first) == ids[:6]
    asked = {task_id: router.requests_of(task_id) for task_id in ids}

    again = run_batch(tasks_file, out, *mode, env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    results = result_lines(out)
    assert [result["id"] for result in results[:6]] == [r["id"] for r in first]
    assert sorted(result["id"] for result in results) == sorted(ids)
    for task_id in ids[:6]:
        assert router.requests_of(task_id) == asked[task_id] == 2
    assert all(result["terminal_reason"] == "completed" for result in results)
    assert router.leftover() == {}
    assert "6 already done by an earlier run" in again.stderr


@pytest.mark.timeout(120)
def test_a_hanging_task_ends_at_its_timeout_and_the_others_finish(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    router = writing_router(out, ("a", "b", "c"), 2)
    router.add("stalls", [_hang()])
    sleep = ToolCall("toolu_sleeps", BASH, {"command": "sleep 600"})
    router.add("sleeps", [reply(sleep)])
    tasks = [
        task_line("stalls", timeout_s=HANG_TIMEOUT_S),
        task_line("sleeps", timeout_s=HANG_TIMEOUT_S, allowed_tools=["Bash(sleep *)"]),
        *(task_line(task_id) for task_id in ("a", "b", "c")),
    ]
    server.respond_with(router)

    done = run_batch(
        write_tasks(tmp_path / "tasks.jsonl", tasks), out, "--permission-mode", "acceptEdits",
        env=server.env(), cwd=tmp_path,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    results = {result["id"]: result for result in result_lines(out)}
    assert sorted(results) == ["a", "b", "c", "sleeps", "stalls"]
    for task_id in ("stalls", "sleeps"):
        hung = results[task_id]
        assert (hung["terminal_reason"], hung["is_error"], hung["error"]) == ("timeout", True, None)
    assert results["sleeps"]["turns"] == 1  # the call was allowed and ran until stopped
    for task_id in ("a", "b", "c"):
        assert results[task_id]["terminal_reason"] == "completed"
        assert f"+{task_id} 2\n" in results[task_id]["diff"]
    server.wait_for_abandoned(1, timeout_s=30)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(120)
def test_an_unreachable_model_is_an_error_and_retry_errors_reruns_only_it(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    router = writing_router(out, ("a", "b", "lost"), 1)
    nowhere = {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_closed_port()}",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    tasks = [task_line("a"), task_line("lost", env=nowhere), task_line("b")]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    server.respond_with(router)
    mode = ("--permission-mode", "acceptEdits")

    first = run_batch(tasks_file, out, *mode, env=server.env(), cwd=tmp_path)

    assert first.status == 0, first.stderr
    results = {result["id"]: result for result in result_lines(out)}
    lost = results["lost"]
    assert lost["error"]["stage"] == "model", lost
    assert (lost["terminal_reason"], lost["is_error"]) == ("model_error", True)
    assert "\n" not in lost["error"]["message"]
    assert results["a"]["error"] is None and results["b"]["error"] is None
    assert router.requests_of("lost") == 0

    fixed = [task_line("a"), task_line("lost"), task_line("b")]  # the user mends the line
    write_tasks(tasks_file, fixed)
    again = run_batch(tasks_file, out, *mode, "--retry-errors", env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    results_again = result_lines(out)
    assert sorted(result["id"] for result in results_again) == ["a", "b", "lost"]
    mended = next(result for result in results_again if result["id"] == "lost")
    assert (mended["terminal_reason"], mended["error"]) == ("completed", None)
    assert (router.requests_of("a"), router.requests_of("b"), router.requests_of("lost")) == (
        2,
        2,
        2,
    )
    assert router.leftover() == {}


def test_a_failing_setup_is_an_error_and_the_model_is_never_asked(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    tasks = [task_line("broken", setup="echo cannot install >&2; exit 3")]
    server.respond_with(TaskRouter())

    done = run_batch(
        write_tasks(tmp_path / "tasks.jsonl", tasks), out, env=server.env(), cwd=tmp_path
    )

    assert done.status == 0, done.stderr
    (result,) = result_lines(out)
    assert result["terminal_reason"] == "error"
    assert result["error"] == {
        "stage": "setup",
        "message": "the setup command exited with status 3: cannot install",
    }
    assert server.requests == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("sent", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_sessions_in_flight_and_keeps_what_was_written(
    tmp_path: Path, server: FakeModelServer, sent: signal.Signals, status: int
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    ids = ["a", "b", "held1", "held2", "c"]
    router = writing_router(out, ids, 1, first={"held1": _hang(), "held2": _hang()})
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line(task_id) for task_id in ids])
    server.respond_with(router)
    mode = ("--permission-mode", "acceptEdits", "--concurrency", "2")

    process = start_batch(tasks_file, out, *mode, env=server.env(), cwd=tmp_path)
    try:
        wait_for_results(out, 2, process)
        server.wait_for_requests(2 * 2 + 2, timeout_s=60)
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status, stderr
    assert "stopped" in stderr and "run the same command to go on" in stderr
    assert sorted(result["id"] for result in result_lines(out)) == ["a", "b"]
    server.wait_for_abandoned(2, timeout_s=30)
    assert router.requests_of("c") == 0

    again = run_batch(tasks_file, out, *mode, env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    assert sorted(result["id"] for result in result_lines(out)) == sorted(ids)
    assert router.leftover() == {}
