"""results.jsonl: every line written is durable, a torn one is dropped and said, errors can be
retried, and a re-run knows what is done."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import msgspec
import pytest

from stayer.batch.results import (
    RESULTS_FILE,
    CheckOutcome,
    CheckStatus,
    ResultFacts,
    ResultsLog,
    ResultsUnwritable,
    TaskError,
    TaskResult,
    encode_result,
    facts_of_result,
    read_results,
)
from stayer.messages import Usage


def _result(task_id: str, *, error: bool = False) -> TaskResult:
    return TaskResult(
        id=task_id,
        terminal_reason="error" if error else "completed",
        is_error=error,
        turns=0 if error else 3,
        usage=Usage(input_tokens=10, output_tokens=5),
        cost_usd=0.01,
        duration_s=1.5,
        check=None if error else CheckOutcome(exit_code=0, passed=True, output="ok\n"),
        diff="" if error else "diff --git a/x b/x\n",
        transcript=None,
        result="done \ud800 é",
        error=TaskError(stage="model", message="unreachable") if error else None,
    )


def _lines(out: Path) -> list[bytes]:
    return (out / RESULTS_FILE).read_bytes().splitlines(keepends=True)


def test_a_written_line_is_in_the_file_before_write_returns(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path)
    log.write(_result("a"))
    assert _lines(tmp_path) == [encode_result(_result("a"))]  # read through another file
    log.write(_result("b"))
    assert _lines(tmp_path) == [encode_result(_result("a")), encode_result(_result("b"))]
    log.close()


def test_lines_round_trip_and_odd_text_is_made_valid(tmp_path: Path) -> None:
    with ResultsLog(tmp_path) as log:
        log.write(_result("a"))
    (read,) = read_results(tmp_path / RESULTS_FILE)
    assert read == msgspec.structs.replace(_result("a"), result="done \ufffd é")


def test_a_rerun_knows_what_is_done(tmp_path: Path) -> None:
    with ResultsLog(tmp_path) as log:
        log.write(_result("a"))
        log.write(_result("b", error=True))
        assert set(log.done) == {"a", "b"}
    again = ResultsLog(tmp_path)
    assert again.done == {"a": facts_of_result(_result("a")),
                          "b": facts_of_result(_result("b", error=True))}  # fmt: skip
    assert again.dropped == []
    again.write(_result("c"))
    again.close()
    assert [result.id for result in read_results(tmp_path / RESULTS_FILE)] == ["a", "b", "c"]


def test_a_new_folder_is_made(tmp_path: Path) -> None:
    with ResultsLog(tmp_path / "new" / "out") as log:
        assert log.done == {}
        assert log.path == tmp_path / "new" / "out" / RESULTS_FILE


def test_lines_survive_a_sigkill_of_the_writer(tmp_path: Path) -> None:
    program = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from stayer.batch.results import ResultsLog\n"
        "from tests.batch.test_results_log import _result\n"
        "log = ResultsLog(Path(sys.argv[1]))\n"
        "for name in 'abc':\n"
        "    log.write(_result(name))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path)], cwd=Path(__file__).parents[2], check=False
    )
    assert finished.returncode == -signal.SIGKILL
    log = ResultsLog(tmp_path)
    assert sorted(log.done) == ["a", "b", "c"]
    assert log.dropped == []
    log.close()


@pytest.mark.parametrize("cut", ["start", "middle", "inside a character", "end"])
def test_a_torn_last_line_is_dropped_reported_and_its_task_runs_again(
    tmp_path: Path, cut: str
) -> None:
    whole = encode_result(_result("a")) + encode_result(_result("b"))
    line = encode_result(_result("c"))
    at = {"start": 1, "middle": 40, "inside a character": line.index("é".encode()) + 1}
    torn = line[: at.get(cut, len(line) - 2)]
    (tmp_path / RESULTS_FILE).write_bytes(whole + torn)
    log = ResultsLog(tmp_path)
    assert sorted(log.done) == ["a", "b"]
    (message,) = log.dropped
    assert message.startswith(f"{tmp_path / RESULTS_FILE}:3: dropped a line that is no task")
    assert message.endswith("; its task runs again")
    assert (tmp_path / RESULTS_FILE).read_bytes() == whole  # the next line starts clean
    log.write(_result("c"))
    log.close()
    again = ResultsLog(tmp_path)
    assert sorted(again.done) == ["a", "b", "c"]
    assert again.dropped == []
    again.close()


def test_a_line_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    line = encode_result(_result("a"))
    (tmp_path / RESULTS_FILE).write_bytes(line[:-1])
    with ResultsLog(tmp_path) as log:
        assert list(log.done) == ["a"]
        log.write(_result("b"))
    assert _lines(tmp_path) == [line, encode_result(_result("b"))]


def test_a_foreign_line_is_dropped_and_reported(tmp_path: Path) -> None:
    a, b = encode_result(_result("a")), encode_result(_result("b"))
    (tmp_path / RESULTS_FILE).write_bytes(a + b'{"id": "x"}\n' + b"\n" + b)
    with ResultsLog(tmp_path) as log:
        assert sorted(log.done) == ["a", "b"]
        assert [message.split(": ")[0] for message in log.dropped] == [
            f"{tmp_path / RESULTS_FILE}:2"
        ]
    assert _lines(tmp_path) == [a, b]


def test_retry_errors_drops_exactly_the_error_lines(tmp_path: Path) -> None:
    with ResultsLog(tmp_path) as log:
        for name in ("a", "b", "c", "d"):
            log.write(_result(name, error=name in "bd"))
    kept = [encode_result(_result("a")), encode_result(_result("c"))]
    with ResultsLog(tmp_path, retry_errors=True) as log:
        assert sorted(log.done) == ["a", "c"]
        assert _lines(tmp_path) == kept
        log.write(_result("b"))
    assert [result.id for result in read_results(tmp_path / RESULTS_FILE)] == ["a", "c", "b"]
    assert not (tmp_path / (RESULTS_FILE + ".tmp")).exists()


def test_retry_errors_with_no_error_changes_nothing(tmp_path: Path) -> None:
    with ResultsLog(tmp_path) as log:
        log.write(_result("a"))
    before = os.stat(tmp_path / RESULTS_FILE)
    with ResultsLog(tmp_path, retry_errors=True) as log:
        assert list(log.done) == ["a"]
    after = os.stat(tmp_path / RESULTS_FILE)
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)


def test_retry_errors_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed before the new file replaces the old, the old one is whole: nothing is lost."""
    with ResultsLog(tmp_path) as log:
        log.write(_result("a"))
        log.write(_result("b", error=True))
    before = (tmp_path / RESULTS_FILE).read_bytes()

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ResultsLog(tmp_path, retry_errors=True)
    assert (tmp_path / RESULTS_FILE).read_bytes() == before
    monkeypatch.undo()
    with ResultsLog(tmp_path, retry_errors=True) as log:  # a leftover .tmp is no problem
        assert list(log.done) == ["a"]
    assert _lines(tmp_path) == [encode_result(_result("a"))]


def test_read_results_of_a_missing_file(tmp_path: Path) -> None:
    assert read_results(tmp_path / RESULTS_FILE) == []


MIB = 1024 * 1024


def _big(task_id: str, *, error: bool = False) -> TaskResult:
    return msgspec.structs.replace(
        _result(task_id, error=error), diff="+" + "x" * MIB + "\n", result="y" * MIB
    )


@pytest.mark.parametrize("retry_errors", [False, True])
def test_opening_a_file_of_large_results_reads_it_a_line_at_a_time_and_keeps_no_diff(
    tmp_path: Path, retry_errors: bool
) -> None:
    """Twenty lines of 2 MiB each: the file is never held whole, nor every line's diff and
    text; what is kept of a task is a few small facts."""
    with ResultsLog(tmp_path) as log:
        for number in range(20):
            log.write(_big(f"t{number}", error=number % 5 == 0))
    assert (tmp_path / RESULTS_FILE).stat().st_size > 40 * MIB

    tracemalloc.start()
    try:
        with ResultsLog(tmp_path, retry_errors=retry_errors) as log:
            kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 8 * MIB  # a line or two at a time (each 2 MiB, once as bytes, once as text)
    assert kept < MIB
    assert len(log.done) == (16 if retry_errors else 20)
    assert all(set(msgspec.structs.asdict(facts)) == set(ResultFacts.__struct_fields__)
               for facts in log.done.values())  # fmt: skip
    assert "diff" not in ResultFacts.__struct_fields__
    assert "result" not in ResultFacts.__struct_fields__
    if retry_errors:  # the error lines went, the others are whole and in order
        ids = [result.id for result in read_results(tmp_path / RESULTS_FILE)]
        assert ids == [f"t{number}" for number in range(20) if number % 5]


def test_the_log_keeps_only_the_facts_of_what_it_writes(tmp_path: Path) -> None:
    with ResultsLog(tmp_path) as log:
        log.write(_big("a"))
        assert log.done == {"a": facts_of_result(_big("a"))}
        (facts,) = log.done.values()
        assert facts.check == CheckStatus(exit_code=0, passed=True)


async def test_appending_a_line_leaves_the_event_loop_free_while_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line's write is held until the event loop itself lets it go: were it written on
    the loop, the loop could never do so, and the write would give up."""
    log = ResultsLog(tmp_path)
    entered, released = threading.Event(), threading.Event()
    sync = os.fsync

    def held(fd: int) -> None:
        entered.set()
        if not released.wait(30):
            raise AssertionError("the event loop never ran while the line was written")
        sync(fd)

    monkeypatch.setattr(os, "fsync", held)
    writing = asyncio.ensure_future(log.append(_result("a")))
    assert await asyncio.to_thread(entered.wait, 30)
    released.set()  # by the loop, while the line is being written
    await writing
    monkeypatch.undo()
    log.close()
    assert _lines(tmp_path) == [encode_result(_result("a"))]


async def test_lines_appended_at_once_are_written_in_the_order_handed_over(tmp_path: Path) -> None:
    ids = [f"t{number}" for number in range(20)]
    with ResultsLog(tmp_path) as log:
        await asyncio.gather(*(log.append(_result(task_id)) for task_id in ids))
        assert sorted(log.done) == sorted(ids)
    assert [result.id for result in read_results(tmp_path / RESULTS_FILE)] == ids


def test_a_line_the_disk_takes_only_in_part_is_taken_back_and_no_line_follows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = ResultsLog(tmp_path)
    log.write(_result("a"))
    before = (tmp_path / RESULTS_FILE).read_bytes()
    real_write = os.write
    calls: list[int] = []

    def full_disk(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[: len(data) // 2])  # a short write
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(ResultsUnwritable) as failed:
        log.write(_result("b"))
    assert str(failed.value) == (
        f"cannot write {tmp_path / RESULTS_FILE}: No space left on device; free space and run "
        "the same command to go on"
    )
    monkeypatch.undo()
    assert (tmp_path / RESULTS_FILE).read_bytes() == before  # the half line went
    with pytest.raises(ResultsUnwritable):  # and nothing is written after it
        log.write(_result("c"))
    log.close()
    log.close()  # closing twice, or after a failure, never raises
    assert (tmp_path / RESULTS_FILE).read_bytes() == before
    assert list(log.done) == ["a"]
