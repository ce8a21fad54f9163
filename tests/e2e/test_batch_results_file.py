"""`stayer batch` when its output folder or results file fails it: a results file that cannot
take another line (full disk, size limit) ends the batch in one line, every line in it whole."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.batch_cli import batch_argv, make_source, result_lines, run_batch, write_tasks
from tests.e2e.cli import clean_env
from tests.fakes.batch_router import TaskRouter, tagged
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


def _task(task_id: str, **more: Any) -> dict[str, Any]:
    return {"id": task_id, "prompt": tagged(task_id, "go"), "repo": "source", **more}


def _limited_to(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


@pytest.mark.timeout(120)
def test_a_results_file_that_cannot_grow_ends_the_batch_in_one_line_with_no_torn_line(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    ids = ["a", "b", "c", "d"]
    router = TaskRouter({task_id: [reply(f"done {task_id}")] for task_id in ids})
    router.add("b", [reply("done b")])  # b runs twice: its first line could not be kept
    server.respond_with(router)
    # a's line carries a 200 kB diff: the limit set below it lets every other file be written
    first_file = write_tasks(tmp_path / "first.jsonl", [_task("a", setup="seq 1 40000 > n")])
    assert run_batch(first_file, out, env=server.env(), cwd=tmp_path).status == 0
    before = (out / "results.jsonl").read_bytes()
    assert len(before) > 200_000
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [_task(task_id) for task_id in ids])

    limited = subprocess.run(
        batch_argv(tasks_file, out, "--concurrency", "1"),
        cwd=tmp_path,
        env=clean_env(server.env()),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=lambda: _limited_to(len(before) + 40),  # room for a part of b's line only
    )

    assert limited.returncode == 1, limited.stderr
    assert "Traceback" not in limited.stderr
    assert limited.stderr.splitlines()[-1] == (
        f"stayer: cannot write {out / 'results.jsonl'}: File too large; free space and run "
        "the same command to go on"
    )
    assert (out / "results.jsonl").read_bytes() == before  # b's part line was taken back

    again = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    assert sorted(line["id"] for line in result_lines(out)) == ["a", "b", "c", "d"]
    assert [router.requests_of(task_id) for task_id in ids] == [1, 2, 1, 1]
