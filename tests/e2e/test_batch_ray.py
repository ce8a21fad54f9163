"""`stayer batch --ray`: the same batch as Ray tasks, against one fake model server.

One Ray head (`ray start --head --block`, 2 CPUs) serves the whole module: starting Ray costs
seconds, so the tests share it and pass its address to `--ray`, as a user of an existing
cluster does. Its workers inherit nothing of a test's model server: the driver sends the
model variables with each task, which is what these tests rely on. Where Ray cannot start at
all, the tests that need it are skipped, saying why.

A lost worker is made by the task itself: its setup command kills the Ray worker running it
(the nearest process above it whose title Ray set to `ray::...`), the first time only when a
marker file says it has done so already. A stuck worker is made the same way: the setup
stops it (SIGSTOP), so neither its task's clock nor Ray's polite cancel can move it.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stayer.batch.task_run import STOP_GRACE_S
from tests.e2e.batch_cli import (
    make_source,
    result_lines,
    run_batch,
    snapshot,
    start_batch,
    task_line,
    wait_for_results,
    write_tasks,
    writing_router,
)
from tests.e2e.cli import clean_env
from tests.fakes.model_server import FakeModelServer

TASKS = 24
TURNS = 3
RAY_ENV = {"RAY_AUTH_MODE": "token"}
"""Ray 2.60 starts a head with token auth (the token in ~/.ray/auth_token); a driver
connecting to it must say so."""

SIGNAL_WORKER = """
import os, signal, sys
sent = getattr(signal, sys.argv[1])
marker = sys.argv[2] if len(sys.argv) > 2 else None
if sent == signal.SIGKILL and marker and os.path.exists(marker):
    sys.exit(0)
pid = os.getppid()
while pid > 1:
    with open(f"/proc/{pid}/cmdline", "rb") as file:
        if file.read().startswith(b"ray::"):
            if marker:
                with open(marker, "w") as file:
                    file.write(str(pid))
            os.kill(pid, sent)
            sys.exit(0)
    with open(f"/proc/{pid}/stat") as file:
        pid = int(file.read().rsplit(")", 1)[1].split()[1])
sys.exit("no Ray worker above this command")
"""
"""`SIGNAL_WORKER SIGKILL [MARKER]` kills the Ray worker running it (once only, with a
marker); `SIGNAL_WORKER SIGSTOP PIDFILE` stops it, writing its pid: a worker stuck for good,
deaf to any cancellation of its own."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Ray head for this module's tests, its address; stopped (its process group killed)
    at the end."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed here (pip install 'stayer[ray]')")
    command = Path(sys.executable).with_name("ray")
    if not command.exists():
        pytest.skip(f"Ray's command line is not beside this Python ({command})")
    log = tmp_path_factory.mktemp("ray") / "head.log"
    port = _free_port()
    with open(log, "w") as output:
        head = subprocess.Popen(
            [str(command), "start", "--head", "--block",
             "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false",
             "--disable-usage-stats"],
            env=clean_env(RAY_ENV), stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        yield _started(head, log, port)
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()


def _started(head: subprocess.Popen[bytes], log: Path, port: int) -> str:
    """The head's address once it says it runs (its own signal); skips if it ends first."""
    while True:
        text = log.read_text(errors="replace")
        if "Ray runtime started" in text:
            ip = text.split("Local node IP: ", 1)[1].split()[0]
            return f"{ip}:{port}"
        if head.poll() is not None:
            pytest.skip(f"Ray cannot start here: {text.strip().splitlines()[-1:]}")
        time.sleep(0.05)


def _task(task_id: str, **more: Any) -> dict[str, Any]:
    return task_line(task_id, check=f"test -f {task_id}-{TURNS}.txt", **more)


@pytest.mark.timeout(300)
def test_24_tasks_on_ray_each_get_one_result_and_a_lost_worker_is_retried_once(
    tmp_path: Path, server: FakeModelServer, ray_address: str
) -> None:
    source = make_source(tmp_path / "source")
    before = snapshot(source)
    out = tmp_path / "out"
    killer = tmp_path / "kill_worker.py"
    killer.write_text(SIGNAL_WORKER)
    ids = [f"t{number}" for number in range(1, TASKS + 1)]
    router = writing_router(out, [*ids, "lost-once"], TURNS)
    kill = f"{sys.executable} {killer} SIGKILL"
    tasks = [_task(task_id) for task_id in ids]
    tasks.append(_task("lost-once", setup=f"{kill} {tmp_path / 'killed'}"))
    tasks.append(_task("lost-twice", setup=kill))
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    server.respond_with(router)

    done = run_batch(
        tasks_file, out, "--ray", ray_address, "--ray-cpus-per-task", "0.25",
        "--ray-memory-per-task", "64", "--permission-mode", "acceptEdits", "--concurrency", "8",
        env={**server.env(), **RAY_ENV}, cwd=tmp_path, timeout=280,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    results = {result["id"]: result for result in result_lines(out)}
    assert len(result_lines(out)) == len(tasks)
    assert sorted(results) == sorted(task["id"] for task in tasks)
    for task_id, result in results.items():
        if task_id == "lost-twice":
            continue
        assert result["terminal_reason"] == "completed", result
        assert (result["is_error"], result["error"], result["turns"]) == (False, None, TURNS + 1)
        assert result["check"]["passed"] is True, result["check"]
        assert result["diff"].count("+++ b/") == TURNS
        for n in range(1, TURNS + 1):
            assert f"+{task_id} {n}\n" in result["diff"]
        assert Path(result["transcript"]).parent == out / "transcripts" / task_id
        assert Path(result["transcript"]).stat().st_size > 0
        assert result["attempts"] == (2 if task_id == "lost-once" else 1), result
    lost = results["lost-twice"]
    assert (lost["terminal_reason"], lost["is_error"], lost["attempts"]) == ("error", True, 2)
    assert lost["error"]["stage"] == "worker", lost["error"]
    assert router.requests_of("lost-twice") == 0
    assert router.leftover() == {}
    assert snapshot(source) == before

    # The same command with --retry-errors runs only the task whose line is an error.
    requests = len(server.requests)
    again = run_batch(
        tasks_file, out, "--ray", ray_address, "--retry-errors",
        env={**server.env(), **RAY_ENV}, cwd=tmp_path, timeout=120,
    )  # fmt: skip

    assert again.status == 0, again.stderr
    lines = result_lines(out)
    assert sorted(result["id"] for result in lines) == sorted(task["id"] for task in tasks)
    assert lines[-1]["id"] == "lost-twice"  # written again, the others kept as they were
    assert {r["id"]: r for r in lines if r["id"] != "lost-twice"} == {
        task_id: result for task_id, result in results.items() if task_id != "lost-twice"
    }
    assert len(server.requests) == requests


@pytest.mark.timeout(200)
def test_a_worker_stuck_past_its_timeout_is_killed_and_its_task_written_as_timeout(
    tmp_path: Path, server: FakeModelServer, ray_address: str
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    router = writing_router(out, ["fine"], 1)
    server.respond_with(router)
    stopper = tmp_path / "stop_worker.py"
    stopper.write_text(SIGNAL_WORKER)
    pid_file = tmp_path / "stuck-worker"
    stuck = _task("stuck", setup=f"{sys.executable} {stopper} SIGSTOP {pid_file}")
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [stuck | {"timeout_s": 1}, _task("fine") | {"check": "true"}]
    )

    done = run_batch(
        tasks_file, out, "--ray", ray_address, "--ray-cpus-per-task", "0.5", "--concurrency",
        "8", "--permission-mode", "acceptEdits", env={**server.env(), **RAY_ENV}, cwd=tmp_path,
        timeout=180,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    # the head's 2 CPUs run 4 tasks of 0.5 CPU at once, fewer than --concurrency asks
    assert "batch: 2 tasks to run, 4 at a time" in done.stderr
    results = {result["id"]: result for result in result_lines(out)}
    assert results["fine"]["terminal_reason"] == "completed"
    line = results["stuck"]
    assert (line["terminal_reason"], line["is_error"], line["attempts"]) == ("timeout", True, 1)
    assert line["error"]["stage"] == "worker", line["error"]
    assert "the worker did not stop at the task's timeout (1 s)" in line["error"]["message"]
    assert line["duration_s"] > 1 + STOP_GRACE_S  # not before the worker had its chance
    worker = Path(f"/proc/{pid_file.read_text()}")
    deadline = time.monotonic() + 30
    while worker.exists():  # the stopped worker was killed, not left behind
        assert time.monotonic() < deadline, "the stuck worker still exists"
        time.sleep(0.05)


def test_one_rate_limit_holds_every_worker_of_the_cluster(
    tmp_path: Path, server: FakeModelServer, ray_address: str
) -> None:
    rpm, burst_s = 120.0, 1.0  # burst_s: the limiter's default
    jitter_s = 1.0  # from the actor's go to the server's reading, across busy processes
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    ids = [f"r{number}" for number in range(8)]
    router = writing_router(out, ids, 1)
    arrivals: list[float] = []
    router.hooks.append(lambda _task, _request: arrivals.append(time.monotonic()))
    server.respond_with(router)
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [_task(task) | {"check": "true"} for task in ids]
    )

    done = run_batch(
        tasks_file, out, "--ray", ray_address, "--ray-cpus-per-task", "0.25",
        "--concurrency", "8", "--requests-per-minute", str(rpm),
        "--permission-mode", "acceptEdits", env={**server.env(), **RAY_ENV}, cwd=tmp_path,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    assert [result["terminal_reason"] for result in result_lines(out)] == ["completed"] * 8
    times = sorted(arrivals)
    assert len(times) == 2 * len(ids)
    for span in (0.0, 1.0, 2.0, 4.0):
        # A limiter per worker would let each worker's first request go at once (8 in no
        # time); the one actor lets the limit's burst (2) go, then one every 0.5 s.
        allowed = rpm * (span + burst_s + jitter_s) / 60
        most = max(sum(1 for t in times if start <= t <= start + span) for start in times)
        assert most <= allowed, f"{most} requests within {span} s"


def test_sigterm_stops_the_tasks_on_the_cluster_and_keeps_the_lines_written(
    tmp_path: Path, server: FakeModelServer, ray_address: str
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    quick, stuck = ["q1", "q2"], ["s1", "s2", "s3"]
    router = writing_router(out, quick, 1)
    server.respond_with(router)
    waits = f"echo $$ > {tmp_path}/pid-{{}}; until [ -e {tmp_path}/never ]; do sleep 0.05; done"
    tasks = [_task(task) for task in quick] + [
        _task(task, setup=waits.format(task)) for task in stuck
    ]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    batch = start_batch(
        tasks_file, out, "--ray", ray_address, "--ray-cpus-per-task", "0.25",
        "--permission-mode", "acceptEdits", env={**server.env(), **RAY_ENV}, cwd=tmp_path,
    )  # fmt: skip
    wait_for_results(out, len(quick), batch)
    while len(list(tmp_path.glob("pid-*"))) < len(stuck):  # every stuck setup is running
        assert batch.poll() is None, batch.communicate()
        time.sleep(0.02)

    batch.send_signal(signal.SIGTERM)
    _, stderr = batch.communicate(timeout=60)

    assert batch.returncode == 143, stderr
    assert "stopped (SIGTERM)" in stderr
    assert sorted(result["id"] for result in result_lines(out)) == quick
    pids = [int(path.read_text()) for path in tmp_path.glob("pid-*")]
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in pids):  # gone with the batch
        assert time.monotonic() < deadline, "a cancelled task's setup still runs"
        time.sleep(0.05)


def test_without_an_address_the_command_starts_its_own_ray(
    tmp_path: Path, server: FakeModelServer, ray_address: str
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    router = writing_router(out, ["solo"], 1)
    server.respond_with(router)
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [_task("solo") | {"check": "true"}])

    done = run_batch(
        tasks_file, out, "--ray", "--permission-mode", "acceptEdits",
        env=server.env(), cwd=tmp_path, timeout=110,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    [result] = result_lines(out)
    assert (result["id"], result["terminal_reason"], result["attempts"]) == ("solo", "completed", 1)
    assert "+solo 1\n" in result["diff"]
    assert router.leftover() == {}


@pytest.mark.parametrize("given", ["host:port", "auto", "ray://host:port"])
def test_a_cluster_that_cannot_be_reached_is_one_line(
    tmp_path: Path, server: FakeModelServer, given: str
) -> None:
    make_source(tmp_path / "source")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [_task("a")])
    address = f"127.0.0.1:{_free_port()}"
    flag = given.replace("host:port", address)
    env = {**server.env(), "RAY_ADDRESS": address}  # where `auto` looks first

    done = run_batch(tasks_file, tmp_path / "out", "--ray", flag, env=env, cwd=tmp_path)

    assert (done.status, len(done.stderr.splitlines())) == (1, 1), done.stderr
    assert f"cannot reach the Ray cluster at {flag}" in done.stderr
    assert address in done.stderr
    assert server.requests == []
    assert result_lines(tmp_path / "out") == []


def test_without_ray_installed_ray_is_one_line_and_the_local_batch_never_imports_it(
    tmp_path: Path, server: FakeModelServer
) -> None:
    broken = tmp_path / "no_ray" / "ray"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('no Ray in this test')\n")
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    router = writing_router(out, ["here"], 1)
    server.respond_with(router)
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [_task("here") | {"check": "true"}])
    env = {**server.env(), "PYTHONPATH": str(broken.parent)}

    refused = run_batch(tasks_file, out, "--ray", env=env, cwd=tmp_path)
    here = run_batch(tasks_file, out, "--permission-mode", "acceptEdits", env=env, cwd=tmp_path)

    assert (refused.status, len(refused.stderr.splitlines())) == (2, 1), refused.stderr
    assert "pip install 'stayer[ray]'" in refused.stderr
    assert here.status == 0, here.stderr
    assert [result["id"] for result in result_lines(out)] == ["here"]
