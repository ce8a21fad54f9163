"""`stayer batch` when its output folder or results file fails it: a bad `--out` is one line and
exit status 2 with nothing run; a results file that cannot take another line (full disk, size
limit) ends the batch in one line, exit status 1, every line in it whole."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from tests.e2e.batch_cli import (
    batch_argv,
    make_source,
    result_lines,
    run_batch,
    task_line,
    write_tasks,
)
from tests.e2e.cli import clean_env
from tests.fakes.batch_router import TaskRouter
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


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
    first_file = write_tasks(tmp_path / "first.jsonl", [task_line("a", setup="seq 1 40000 > n")])
    assert run_batch(first_file, out, env=server.env(), cwd=tmp_path).status == 0
    before = (out / "results.jsonl").read_bytes()
    assert len(before) > 200_000
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line(task_id) for task_id in ids])

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


def _out_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad output folders, each with the start of what stayer says about it."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    results_folder = tmp_path / "results-folder"
    (results_folder / "results.jsonl").mkdir(parents=True)
    return {
        "a file": (a_file, f"stayer: batch: cannot use --out {a_file}: it is a file"),
        "under a file": (
            a_file / "out",
            f"stayer: batch: cannot use --out {a_file / 'out'}: a part of that path is a file",
        ),
        "results.jsonl a folder": (
            results_folder,
            f"stayer: batch: cannot use {results_folder / 'results.jsonl'} as the results file: "
            "Is a directory",
        ),
        "where no folder can be made": (
            Path("/proc/stayer-batch-out"),
            "stayer: batch: cannot use --out /proc/stayer-batch-out: ",
        ),
    }


@pytest.mark.parametrize(
    "case", ["a file", "under a file", "results.jsonl a folder", "where no folder can be made"]
)
def test_a_bad_out_is_one_line_and_exit_2_with_nothing_run(
    tmp_path: Path, server: FakeModelServer, case: str
) -> None:
    make_source(tmp_path / "source")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line("a")])
    out, said = _out_cases(tmp_path)[case]

    done = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert done.status == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(said), line
    assert server.requests == []
    assert not (tmp_path / "source" / ".git" / "worktrees").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder without write permission")
def test_an_out_folder_without_write_permission_is_one_line_and_exit_2(
    tmp_path: Path, server: FakeModelServer
) -> None:
    make_source(tmp_path / "source")
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [task_line("a")])
    out = tmp_path / "read-only"
    out.mkdir(mode=0o500)

    done = run_batch(tasks_file, out, env=server.env(), cwd=tmp_path)

    assert done.status == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"stayer: batch: cannot use --out {out}: Permission denied"), line
