"""`results.jsonl`: one line per finished task, written and flushed as each finishes.

The file is the batch's memory. A line is appended whole and flushed to disk before the next
task's, so a batch killed at any moment (SIGKILL included) keeps every line it wrote; a line
the kill cut short is dropped when the file is opened again, and its task runs again. A re-run
with the same output folder skips the tasks that have a line; with `retry_errors`, the lines
of infrastructure failures (`error` set) are taken out first, atomically, and those tasks run
again, so every task still has exactly one line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import msgspec
from msgspec import Struct

from stayer.json_text import dumps
from stayer.messages import Usage

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


def encode_result(result: TaskResult) -> bytes:
    """`result` as one line of JSON, newline included (lone surrogates become U+FFFD)."""
    return dumps(msgspec.to_builtins(result)).encode() + b"\n"


class ResultsLog:
    """The results file of one output folder, open for appending."""

    def __init__(self, out_dir: Path, *, retry_errors: bool = False) -> None:
        self.path = out_dir / RESULTS_FILE
        out_dir.mkdir(parents=True, exist_ok=True)
        self.dropped: list[str] = []
        """One line each for the lines of the file that were no result (a torn last line)."""
        kept = list(_read(self.path, self.dropped))
        if retry_errors:
            kept = [(line, result) for line, result in kept if result.error is None]
        self.done: dict[str, TaskResult] = {result.id: result for _, result in kept}
        _rewrite(self.path, (line for line, _ in kept))
        self._file = open(self.path, "ab")  # noqa: SIM115 (closed by close())

    def write(self, result: TaskResult) -> None:
        """Append `result` and make it durable before returning."""
        self._file.write(encode_result(result))
        self._file.flush()
        os.fsync(self._file.fileno())
        self.done[result.id] = result

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def read_results(path: Path) -> list[TaskResult]:
    """The whole lines of a results file, in order (a torn or foreign line is skipped)."""
    return [result for _, result in _read(path, [])]


def _read(path: Path, dropped: list[str]) -> Iterable[tuple[bytes, TaskResult]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            yield line, msgspec.json.decode(line, type=TaskResult)
        except msgspec.DecodeError as error:
            dropped.append(
                f"{path}:{number}: dropped a line that is no task result ({error}); "
                "its task runs again"
            )


def _rewrite(path: Path, lines: Iterable[bytes]) -> None:
    """Make the file hold exactly `lines`, atomically (a kill leaves the old or the new)."""
    body = b"".join(line + b"\n" for line in lines)
    if path.exists() and path.read_bytes() == body:
        return
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as file:
        file.write(body)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
