"""`stayer batch` end to end: many tasks against one fake model server, each task's requests
routed to its own script by the tag in its prompt."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from tests.e2e.batch_cli import (
    make_source,
    result_lines,
    run_batch,
    snapshot,
    task_line,
    write_tasks,
    writing_router,
)
from tests.e2e.cli import stayer
from tests.fakes.batch_router import TaskRouter
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

TASKS = 24
TURNS = 3


def _failing(number: int) -> bool:
    """Every fourth task's check is scripted to fail."""
    return number % 4 == 0


@pytest.mark.timeout(240)
def test_24_tasks_each_get_one_result_with_their_own_diff(
    tmp_path: Path, server: FakeModelServer
) -> None:
    source = make_source(tmp_path / "source")
    before = snapshot(source)
    out = tmp_path / "out"
    ids = [f"t{number}" for number in range(1, TASKS + 1)]
    router = writing_router(out, ids, TURNS)
    tasks = []
    for number, task_id in enumerate(ids, start=1):
        wanted = "missing.txt" if _failing(number) else f"{task_id}-{TURNS}.txt"
        check = f"test -f {wanted} && grep -q 'the source' README.md"
        tasks.append(task_line(task_id, check=check))
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    server.respond_with(router)

    done = run_batch(
        tasks_file, out, "--permission-mode", "acceptEdits", "--concurrency", "8",
        env=server.env(), cwd=tmp_path, timeout=220,
    )  # fmt: skip

    assert done.status == 0, done.stderr
    results = result_lines(out)
    assert sorted(result["id"] for result in results) == sorted(task["id"] for task in tasks)
    for result in results:
        task_id, number = result["id"], int(result["id"][1:])
        assert result["terminal_reason"] == "completed", result
        assert (result["is_error"], result["error"], result["turns"]) == (False, None, TURNS + 1)
        assert result["result"] == f"finished {task_id}"
        assert result["check"]["passed"] is not _failing(number), result["check"]
        for n in range(1, TURNS + 1):
            assert f"+++ b/{task_id}-{n}.txt\n" in result["diff"]
            assert f"+{task_id} {n}\n" in result["diff"]
        assert result["diff"].count("+++ b/") == TURNS  # its own files only
        assert Path(result["transcript"]).parent == out / "transcripts" / task_id
        assert Path(result["transcript"]).stat().st_size > 0
    assert router.leftover() == {}
    connections = {request.peer for request in server.requests}
    assert len(connections) < TASKS  # one shared pool: connections outlive their tasks
    assert snapshot(source) == before
    assert sorted(path.name for path in source.iterdir()) == [".git", "README.md"]
    summary = [line.strip() for line in done.stdout.splitlines()]
    assert f"Tasks                   {TASKS}" in summary, done.stdout
    assert "Checks passed           18 of 24 (75%)" in summary, done.stdout
    finished = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(finished) == TASKS, done.stderr


def test_a_malformed_tasks_file_runs_nothing(tmp_path: Path, server: FakeModelServer) -> None:
    make_source(tmp_path / "source")
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text(
        '{"id": "a", "prompt": "p", "repo": "source"}\n{"id": "b", "prompt": "p"}\n'
    )
    out = tmp_path / "out"

    done = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert done.status == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"stayer: {tasks_file}:2: `repo` is missing")
    assert server.requests == []
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ((), "the following arguments are required: --out"),
        (("--out", "o", "--concurrency", "0"), "'0' is not a whole number of at least 1"),
        (("--out", "o", "--timeout", "nan"), "'nan' is not a number of seconds above 0"),
        (("--out", "o", "--permission-mode", "yolo"), "invalid choice: 'yolo'"),
        (("--out", "o", "--ray-cpus-per-task", "2"), "--ray-cpus-per-task needs --ray"),
        (("--out", "o", "--what"), "unrecognized arguments: --what"),
    ],
)
def test_flags_that_cannot_be_used_are_one_line_and_run_nothing(
    tmp_path: Path, server: FakeModelServer, flags: tuple[str, ...], said: str
) -> None:
    make_source(tmp_path / "source")
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "source"}]
    )

    done = stayer("batch", str(tasks_file), *flags, cwd=tmp_path, env=server.env())

    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("stayer: batch: ") and said in line, line
    assert not (tmp_path / "o").exists()
    assert server.requests == []


def test_json_output_is_one_summary_object(tmp_path: Path, server: FakeModelServer) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    server.respond_with(TaskRouter({"a": [reply("done a")], "b": [reply("done b")]}))
    tasks = [task_line(task_id, "p", check="true") for task_id in ("a", "b")]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)

    done = run_batch(tasks_file, out, "--output-format", "json", env=server.env(), cwd=tmp_path)

    assert done.status == 0, done.stderr
    (summary,) = done.json_lines()
    assert {name: summary[name] for name in ("planned", "tasks", "ran", "failed")} == {
        "planned": 2,
        "tasks": 2,
        "ran": 2,
        "failed": 0,
    }
    assert summary["by_terminal_reason"] == {"completed": 2}
    assert summary["infrastructure_errors"] == {}
    assert summary["checks"] == {"run": 2, "passed": 2, "pass_rate": 1.0}
    assert summary["results_file"] == str(out / "results.jsonl")
    asked = len(server.requests)

    again = run_batch(tasks_file, out, "--output-format", "json", env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    (summary,) = again.json_lines()
    assert (summary["tasks"], summary["earlier"], summary["ran"]) == (2, 2, 0)
    assert "every task (2) has a result from an earlier run" in again.stderr
    assert len(server.requests) == asked


def test_a_second_batch_on_the_same_output_folder_is_refused(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "source"}]
    )
    out.mkdir()
    with open(out / ".batch.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a running batch holds it

        done = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert line == (
        f"stayer: another stayer batch is running with --out {out}; wait for it to end, "
        "or give another folder"
    )
    assert sorted(path.name for path in out.iterdir()) == [".batch.lock"]
    assert server.requests == []
