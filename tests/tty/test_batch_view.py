"""`stayer batch` in a terminal, as a person watches it: the live line counts the tasks as
they go, and the batch ends with its summary table under the line's last state."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.batch_cli import make_source, write_tasks
from tests.fakes.batch_router import TaskRouter, tagged, tool_turns
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_text
from tests.tty.harness import Check, OpenPane, needs_tmux

pytestmark = needs_tmux

HELD = ("t3", "t4")
"""The tasks whose final answer the server holds until the test lets it go."""

LIVE_LINE = re.compile(
    r"(?:\S )?batch ━+╺?━* (?P<counts>\d+/4 done · \d running · \d failed) · "
    r"\$\d+\.\d{4} · \d+\.\d tasks/min · ETA (?:\d+\.\ds|\d+s|\d+m \d\ds)"
)

FAILED_T2 = re.compile(r"\[[12]/4\] t2: FAILED completed, check failed \(exit 1\) · 2 turns")


def live_counts(screen: str) -> list[str]:
    """The counts of each whole live line on `screen`."""
    rows = (LIVE_LINE.fullmatch(row.strip()) for row in screen.splitlines())
    return [found["counts"] for found in rows if found]


def showing(counts: str) -> Check:
    """A check that the screen shows the live line, whole, with these counts."""

    def check(screen: str) -> bool:
        return counts in live_counts(screen)

    check.__doc__ = f"the live line with {counts!r}"
    return check


def four_tasks(tmp_path: Path, router: TaskRouter) -> tuple[Path, Path]:
    """Four tasks of one tool turn each; t2's check fails; t3's and t4's answers are held."""
    source = make_source(tmp_path / "source")
    out = tmp_path / "out"
    tasks = []
    for task_id in ("t1", "t2", "t3", "t4"):
        script = tool_turns(task_id, 1, workspace=out / "workspaces" / task_id)
        if task_id in HELD:
            script[-1] = anthropic_text(f"finished {task_id}").paused(at=1)
        router.add(task_id, script)
        tasks.append(
            {
                "id": task_id,
                "prompt": tagged(task_id, "write the file"),
                "repo": str(source),
                "check": "false" if task_id == "t2" else "true",
            }
        )
    return write_tasks(tmp_path / "tasks.jsonl", tasks), out


def _four_on_two(tmp_path: Path, server: FakeModelServer) -> tuple[TaskRouter, Path, list[str]]:
    """`four_tasks` served by `server`: their router, the output folder, and the arguments of
    `stayer batch` running them two at a time."""
    router = TaskRouter()
    tasks, out = four_tasks(tmp_path, router)
    server.respond_with(router)
    args = ["batch", str(tasks), "--out", str(out), "--concurrency", "2"]
    return router, out, [*args, "--permission-mode", "acceptEdits"]


@pytest.mark.timeout(120)
def test_the_live_line_counts_the_tasks_and_the_table_ends_the_batch(
    tmp_path: Path, server: FakeModelServer, open_pane: OpenPane
) -> None:
    router, out, args = _four_on_two(tmp_path, server)
    with open_pane(*args, cols=140, rows=40, stderr_file=False) as pane:
        screen = pane.wait_for(showing("2/4 done · 2 running · 1 failed"), timeout=60)
        assert FAILED_T2.search(screen), screen  # named above the line while the others run
        server.resume()
        pane.wait_for(showing("3/4 done · 1 running · 1 failed"), timeout=30)
        server.resume()
        exited = pane.wait_exit(timeout=60)
        screen = pane.scrollback()
    assert exited.status == 0, screen
    assert live_counts(screen) == ["4/4 done · 0 running · 1 failed"]  # the last, left as it was
    rows = [row.strip() for row in screen.splitlines()]
    failures = [index for index, row in enumerate(rows) if FAILED_T2.match(row)]
    assert len(failures) == 1 and LIVE_LINE.fullmatch(rows[failures[0] + 1]), screen
    table = rows[rows.index("Batch summary") :]
    assert [re.sub(r"\$\d+\.\d+", "$C", row) for row in table[:8]] == [
        "Batch summary",
        "",
        "Tasks                   4",
        "Failed                  1",
        "Ended",
        "completed             4",
        "Checks passed           3 of 4 (75%)",
        "Infrastructure errors   none",
    ]
    assert f"Results                 {out / 'results.jsonl'}" in table
    assert router.leftover() == {}


@pytest.mark.timeout(120)
def test_ctrl_c_ends_the_live_line_and_shows_what_the_batch_came_to(
    tmp_path: Path, server: FakeModelServer, open_pane: OpenPane
) -> None:
    *_, args = _four_on_two(tmp_path, server)
    with open_pane(*args, cols=140, rows=40, stderr_file=False) as pane:
        output = pane.record()
        pane.wait_for(showing("2/4 done · 2 running · 1 failed"), timeout=60)
        pane.send("C-c")
        exited = pane.wait_exit(timeout=30)
        screen = pane.scrollback()
    assert exited.status == 130, screen
    assert exited.restored, exited
    written = output.read_bytes()  # the live line hides the cursor; it is shown again
    assert written.rfind(b"\x1b[?25h") > written.rfind(b"\x1b[?25l"), written[-400:]
    rows = [row.strip() for row in screen.splitlines()]
    failures = [index for index, row in enumerate(rows) if FAILED_T2.match(row)]
    assert len(failures) == 1 and LIVE_LINE.fullmatch(rows[failures[0] + 1]), screen
    assert "2/4 done · 2 running · 1 failed" in live_counts(screen), screen
    assert "Tasks                   2; 2 without a result" in rows, screen
    stopped = "stayer batch: stopped (SIGINT); the results written are kept: run the same"
    assert any(row.startswith(stopped) for row in rows), screen
    assert rows.index("Batch summary") < next(
        index for index, row in enumerate(rows) if row.startswith(stopped)
    )
