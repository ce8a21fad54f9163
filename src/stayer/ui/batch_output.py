"""What `stayer batch` shows: a line per finished task on standard error, and a summary.

Plain lines that read the same on a terminal, in a log file and in CI. `progress` makes the
listener the batch tells what happens; `summary` says what the batch came to once it ends
(`--output-format json`: one JSON object on standard output, for programs).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from stayer.batch.config import BatchConfig
from stayer.batch.listener import BatchListener
from stayer.batch.results import RESULTS_FILE, TaskResult
from stayer.json_text import dumps


class _Lines:
    """A `BatchListener` writing one line per finished task."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._total = 0
        self._done = 0

    def planned(self, total: int, skipped: int) -> None:
        self._total, self._done = total, skipped
        before = f" ({skipped} done before)" if skipped else ""
        self._say(f"stayer batch: {total} tasks{before}, {total - skipped} to run")

    def started(self, task_id: str) -> None:
        pass

    def finished(self, result: TaskResult) -> None:
        self._done += 1
        self._say(f"[{self._done}/{self._total}] {result.id}: {describe(result)}")

    def _say(self, line: str) -> None:
        print(line, file=self._stream, flush=True)


def describe(result: TaskResult) -> str:
    """A task's outcome in a few words: reason, check, error, turns, cost, time."""
    parts = [result.terminal_reason]
    if result.check is not None:
        parts.append("check passed" if result.check.passed else "check failed")
    if result.error is not None:
        parts.append(f"error in {result.error.stage}: {result.error.message}")
    parts.append(f"{result.turns} turns, ${result.cost_usd:.4f}, {result.duration_s:.1f} s")
    return ", ".join(parts)


def progress(config: BatchConfig, stream: TextIO) -> BatchListener:
    """The listener `stayer batch` shows its progress with."""
    del config  # the plain lines look the same whatever the batch
    return _Lines(stream)


def summary(
    results: Sequence[TaskResult],
    config: BatchConfig,
    *,
    total: int,
    stdout: TextIO,
    stderr: TextIO,
) -> None:
    """What the batch came to: `results` (every task that has a line) of `total` tasks."""
    reasons = Counter(result.terminal_reason for result in results)
    checked = [result.check for result in results if result.check is not None]
    passed = sum(1 for check in checked if check.passed)
    errors = sum(1 for result in results if result.error is not None)
    cost = sum(result.cost_usd for result in results)
    path = config.out_dir / RESULTS_FILE
    if config.output_format == "json":
        shown = {
            "type": "batch_summary",
            "total": total,
            "finished": len(results),
            "terminal_reasons": dict(sorted(reasons.items())),
            "errors": errors,
            "checks": {"run": len(checked), "passed": passed},
            "cost_usd": round(cost, 6),
            "results": str(path),
        }
        print(dumps(shown), file=stdout, flush=True)
        return
    by_reason = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    checks = f"; checks {passed}/{len(checked)} passed" if checked else ""
    print(
        f"stayer batch: {len(results)} of {total} tasks have results ({by_reason or 'none'})"
        f"{checks}; {errors} infrastructure errors; ${cost:.4f}; {path}",
        file=stderr,
        flush=True,
    )
