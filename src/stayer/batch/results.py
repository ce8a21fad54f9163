"""`results.jsonl`: one line per finished task, written and flushed as each finishes.

The file is the batch's memory. A line is appended whole, in one write, and made durable before
the next task's, so a batch killed at any moment (SIGKILL included) keeps every line it wrote; a
line the kill cut short is dropped when the file is opened again, and its task runs again. A
re-run with the same output folder skips the tasks that have a line; with `retry_errors`, the
lines of infrastructure failures (`error` set) are taken out first, atomically, and those tasks
run again, so every task still has exactly one line.

What the batch keeps of each line is its `ResultFacts` (no diff, no final text): a batch of
thousands of tasks with large diffs holds a few hundred bytes per task. The file is read a line
at a time, and written again only when a line has to go. A line that cannot be written (the
disk full, the file over its size limit) is taken back out whole and ends the batch
(`ResultsUnwritable`): no torn line is ever followed by another.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import msgspec
from msgspec import Struct

from stayer.errors import StayerError
from stayer.json_text import dumps
from stayer.messages import Usage

from .lock import OutputUnusable

RESULTS_FILE = "results.jsonl"

Stage = Literal["workspace", "setup", "model", "check", "internal", "worker"]
"""Where an infrastructure failure happened: making the workspace (a clone that failed), the
task's setup command, the model service (unreachable, refusing, garbage after the retries),
the check command (it could not start), stayer itself, or a Ray worker that was lost."""


class CheckOutcome(Struct, frozen=True):
    """What the task's check command said."""

    exit_code: int
    passed: bool
    output: str = ""
    """The end of what the check printed (stdout and stderr), for reading why it failed."""


class TaskError(Struct, frozen=True):
    """An infrastructure failure, kept apart from the agent's own: re-running may mend it."""

    stage: Stage
    message: str


class TaskResult(Struct, frozen=True, kw_only=True, omit_defaults=False):
    """One line of `results.jsonl`."""

    id: str
    terminal_reason: str
    """The run's `Terminal` value, `timeout` when the task ran out of time, or `error` when
    no run ended (see `error`)."""
    is_error: bool
    turns: int
    usage: Usage
    cost_usd: float
    duration_s: float
    check: CheckOutcome | None
    diff: str
    """The workspace's changes against `ref`, new files included (`git diff --binary`)."""
    transcript: str | None
    """The session's transcript (a path), when one was written."""
    result: str
    """The run's final text."""
    error: TaskError | None = None
    model: str | None = None
    attempts: int = 1
    """How many times the task was started in this batch (a lost Ray worker makes it two)."""


class CheckStatus(Struct, frozen=True):
    """A check's outcome without what it printed."""

    exit_code: int
    passed: bool


class ResultFacts(Struct, frozen=True, kw_only=True):
    """The small facts of one result line, all a running batch and its summary need: no diff,
    no final text, no check output (a line of the file decodes to it, the rest skipped)."""

    id: str
    terminal_reason: str
    is_error: bool
    turns: int
    usage: Usage
    cost_usd: float
    duration_s: float
    check: CheckStatus | None
    error: TaskError | None = None


def facts_of_result(result: TaskResult) -> ResultFacts:
    """The facts of `result`, which is not kept."""
    check = result.check
    return ResultFacts(
        id=result.id,
        terminal_reason=result.terminal_reason,
        is_error=result.is_error,
        turns=result.turns,
        usage=result.usage,
        cost_usd=result.cost_usd,
        duration_s=result.duration_s,
        check=None if check is None else CheckStatus(check.exit_code, check.passed),
        error=result.error,
    )


def encode_result(result: TaskResult) -> bytes:
    """`result` as one line of JSON, newline included (lone surrogates become U+FFFD)."""
    return dumps(msgspec.to_builtins(result)).encode() + b"\n"


class ResultsUnwritable(StayerError):
    """The results file could not take a line: the batch ends, every line in it whole."""


class ResultsLog:
    """The results file of one output folder, open for appending. Raises `OutputUnusable`
    in one line when the folder or the file cannot be used (nothing has run then)."""

    def __init__(self, out_dir: Path, *, retry_errors: bool = False) -> None:
        self.path = out_dir / RESULTS_FILE
        self.dropped: list[str] = []
        """One line each for the lines of the file that were no result (a torn last line)."""
        self.done: dict[str, ResultFacts] = {}
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            kept = _scan(self.path, self.done, self.dropped, retry_errors=retry_errors)
            if kept is not None:
                _rewrite(self.path, kept)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd: int | None = os.open(self.path, flags, 0o644)
        except OSError as error:
            raise OutputUnusable(
                f"batch: cannot use {self.path} as the results file: {_reason(error)}; "
                "give another --out, or make that path a file you can write"
            ) from None
        self._broken: ResultsUnwritable | None = None
        self._writer: ThreadPoolExecutor | None = None

    async def append(self, result: TaskResult) -> None:
        """`write` off the event loop (encoding and syncing a line with a large diff takes a
        while, and every session in flight runs on the loop): on the log's one writer thread,
        so lines go to the file in the order they were handed over. Once handed over, a line
        is written even if the caller is cancelled while it waits."""
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stayer-results")
        await asyncio.get_running_loop().run_in_executor(self._writer, self.write, result)

    def write(self, result: TaskResult) -> None:
        """Append `result` in one write and make it durable before returning; raises
        `ResultsUnwritable` when it cannot (the file then ends as it did before)."""
        if self._broken is not None:
            raise self._broken
        assert self._fd is not None, "write after close"
        line = encode_result(result)
        start: int | None = None
        try:
            start = os.fstat(self._fd).st_size
            written = os.write(self._fd, line)
            while written < len(line):  # a short write: the rest, to learn why it stopped
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)
        except OSError as error:
            if start is not None:
                self._take_back(start)
            self._broken = ResultsUnwritable(
                f"cannot write {self.path}: {_reason(error)}; free space and run the same "
                "command to go on"
            )
            raise self._broken from None
        self.done[result.id] = facts_of_result(result)

    def _take_back(self, start: int) -> None:
        """Cut the file back to `start`, dropping a part line (best effort: a torn last line is
        dropped anyway when the file is opened again)."""
        assert self._fd is not None
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, start)
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file, once the lines handed to `append` are written; never raises (every
        line was made durable when written)."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def read_results(path: Path) -> list[TaskResult]:
    """The whole lines of a results file, in order (a torn or foreign line is skipped)."""
    results = []
    for _, line in _lines(path):
        try:
            results.append(msgspec.json.decode(line, type=TaskResult))
        except msgspec.DecodeError:
            continue
    return results


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of `path` (newline included, when it has one), one at a time, numbered."""
    try:
        file = open(path, "rb")  # noqa: SIM115 (closed below, when the lines run out)
    except FileNotFoundError:
        return
    with file:
        yield from enumerate(file, 1)


def _scan(
    path: Path, done: dict[str, ResultFacts], dropped: list[str], *, retry_errors: bool
) -> set[int] | None:
    """Fill `done` from the file, a line at a time, and `dropped` with the lines that are no
    result; the numbers of the lines to keep when the file must be written again (a line was
    dropped or retried, or the last has no newline), else None."""
    kept: set[int] = set()
    rewrite = False
    for number, line in _lines(path):
        rewrite = rewrite or not line.endswith(b"\n")
        if not line.strip():
            rewrite = True
            continue
        try:
            facts = msgspec.json.decode(line, type=ResultFacts)
        except msgspec.DecodeError as error:
            dropped.append(
                f"{path}:{number}: dropped a line that is no task result ({error}); "
                "its task runs again"
            )
            rewrite = True
            continue
        if retry_errors and facts.error is not None:
            rewrite = True
            continue
        done[facts.id] = facts
        kept.add(number)
    return kept if rewrite else None


def _rewrite(path: Path, kept: set[int]) -> None:
    """Make the file hold only its lines numbered in `kept`, each ending in a newline,
    atomically (a kill leaves the old file or the new); read a line at a time."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as file:
        for number, line in _lines(path):
            if number in kept:
                file.write(line if line.endswith(b"\n") else line + b"\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
