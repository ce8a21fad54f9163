"""What `stayer batch` prints when nobody watches a terminal: one plain line per finished task
on standard error, and with `--output-format json` one summary object on standard output and
nothing else, counting an earlier run's results as such."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.batch_cli import make_source, run_batch, task_line, write_tasks
from tests.fakes.batch_router import TaskRouter, tool_turns
from tests.fakes.model_server import FakeModelServer


def _three_tasks(tmp_path: Path, router: TaskRouter) -> tuple[Path, Path]:
    """`passes` and `fails` (its check does not pass) run one tool turn; `no-setup`'s setup
    command fails, an infrastructure error before any model call."""
    make_source(tmp_path / "source")
    out = tmp_path / "out"
    tasks: list[dict[str, Any]] = []
    for task_id, check in (("passes", "true"), ("fails", "exit 3")):
        router.add(task_id, tool_turns(task_id, 1, workspace=out / "workspaces" / task_id))
        tasks.append(task_line(task_id, "go", check=check))
    tasks.append(task_line("no-setup", "go", setup="false"))
    return write_tasks(tmp_path / "tasks.jsonl", tasks), out


@pytest.mark.timeout(120)
def test_json_is_one_summary_object_and_the_log_one_line_per_task(
    tmp_path: Path, server: FakeModelServer
) -> None:
    router = TaskRouter()
    tasks, out = _three_tasks(tmp_path, router)
    server.respond_with(router)
    args = ("--output-format", "json", "--permission-mode", "acceptEdits", "--concurrency", "1")

    done = run_batch(tasks, out, *args, env=server.env(), cwd=tmp_path)

    assert done.status == 0, done.stderr
    assert done.stdout.count("\n") == 1, done.stdout
    summary = json.loads(done.stdout)
    assert summary["usage"]["output_tokens"] > 0 and summary["cost_usd"] >= 0
    assert summary["total_tokens"] > summary["usage"]["output_tokens"]
    assert summary["wall_s"] > 0 and summary["tasks_per_minute"] > 0
    for measured in ("usage", "total_tokens", "cost_usd", "wall_s", "tasks_per_minute"):
        del summary[measured]
    assert summary == {
        "type": "batch_summary",
        "planned": 3,
        "tasks": 3,
        "earlier": 0,
        "ran": 3,
        "missing": 0,
        "failed": 2,
        "by_terminal_reason": {"completed": 2, "error": 1},
        "checks": {"run": 2, "passed": 1, "pass_rate": 0.5},
        "infrastructure_errors": {"setup": 1},
        "results_file": str(out / "results.jsonl"),
    }
    log = done.stderr.splitlines()
    assert "\x1b" not in done.stderr
    assert log[0] == "batch: 3 tasks to run, 1 at a time"
    assert log[1].startswith("[1/3] passes: completed, check passed · 2 turns · $")
    assert log[2].startswith("[2/3] fails: FAILED completed, check failed (exit 3) · 2 turns")
    assert log[3].startswith("[3/3] no-setup: FAILED infrastructure error at setup: ")
    assert len(log) == 4, done.stderr

    again = run_batch(tasks, out, *args, env=server.env(), cwd=tmp_path)

    assert again.status == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["tasks"], summary["earlier"], summary["ran"]) == (3, 3, 0)
    assert summary["tasks_per_minute"] == 0
    assert again.stderr.splitlines() == [
        "batch: nothing to run, every task (3) has a result from an earlier run"
    ]
    assert router.leftover() == {}
