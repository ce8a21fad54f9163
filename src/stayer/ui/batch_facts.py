"""What a finished batch amounts to, read from its task results: the facts both summaries
(the table a person reads, the JSON object a program reads) are made of, and the few words
every batch printer uses for a task, a sum of money and a stretch of time.

The results file holds every task that has a result, those a re-run skipped too; the facts
count them all, and say how many came from an earlier run. Rate and wall time are this run's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from pathlib import Path

import msgspec
from msgspec import Struct

from stayer.batch.results import ResultFacts, TaskResult
from stayer.events import Terminal
from stayer.messages import Usage

Outcome = TaskResult | ResultFacts
"""A task's result as it finishes, or the facts kept of it (both say how it ended)."""


class CheckFacts(Struct, frozen=True):
    """The check commands of the tasks that had one."""

    run: int
    passed: int

    @property
    def pass_rate(self) -> float | None:
        """Passed among checked (0 to 1); None when no task had a check."""
        return self.passed / self.run if self.run else None


class BatchFacts(Struct, frozen=True, kw_only=True):
    """One batch's outcome: every count a summary shows."""

    planned: int | None
    """The tasks file's tasks (None when not known)."""
    tasks: int
    """Tasks with a result, this run's and earlier ones."""
    earlier: int
    """Of `tasks`, those whose result an earlier run wrote (this run skipped them)."""
    failed: int
    """Tasks that did not succeed: an infrastructure error, a run that ended otherwise than
    completed, or a check that did not pass."""
    by_terminal_reason: dict[str, int]
    checks: CheckFacts
    infrastructure_errors: dict[str, int]
    """Tasks whose infrastructure failed, by the stage where it did."""
    cost_usd: float
    usage: Usage
    wall_s: float
    """How long this run took."""
    results_file: Path

    @property
    def ran(self) -> int:
        """Tasks this run finished."""
        return self.tasks - self.earlier

    @property
    def missing(self) -> int:
        """Tasks of the file with no result (0 when the plan is not known)."""
        return max(0, self.planned - self.tasks) if self.planned is not None else 0

    @property
    def total_tokens(self) -> int:
        return self.usage.total_input_tokens + self.usage.output_tokens

    @property
    def tasks_per_minute(self) -> float | None:
        """This run's pace; None when it took no measurable time."""
        return self.ran * 60 / self.wall_s if self.wall_s > 0 else None


def failed(result: Outcome) -> bool:
    """Whether a task did not succeed (see `BatchFacts.failed`)."""
    if result.error is not None or result.is_error:
        return True
    if result.terminal_reason != Terminal.COMPLETED.value:
        return True
    return result.check is not None and not result.check.passed


def facts_of(
    results: Iterable[ResultFacts],
    *,
    earlier: Collection[str],
    wall_s: float,
    results_file: Path,
    planned: int | None = None,
) -> BatchFacts:
    """The facts of `results` (one per task), `earlier` naming the ids an earlier run wrote."""
    results = list(results)
    reasons = Counter(result.terminal_reason for result in results)
    stages = Counter(result.error.stage for result in results if result.error is not None)
    checked = [result.check for result in results if result.check is not None]
    usage = Usage()
    for result in results:
        usage += result.usage
    return BatchFacts(
        planned=planned,
        tasks=len(results),
        earlier=sum(1 for result in results if result.id in earlier),
        failed=sum(1 for result in results if failed(result)),
        by_terminal_reason=dict(reasons.most_common()),
        checks=CheckFacts(run=len(checked), passed=sum(1 for check in checked if check.passed)),
        infrastructure_errors=dict(stages.most_common()),
        cost_usd=sum(result.cost_usd for result in results),
        usage=usage,
        wall_s=wall_s,
        results_file=results_file,
    )


def facts_json(facts: BatchFacts) -> dict[str, object]:
    """The JSON object of `--output-format json` (its fields are listed in the README)."""
    return {
        "type": "batch_summary",
        "planned": facts.planned,
        "tasks": facts.tasks,
        "earlier": facts.earlier,
        "ran": facts.ran,
        "missing": facts.missing,
        "failed": facts.failed,
        "by_terminal_reason": facts.by_terminal_reason,
        "checks": {
            "run": facts.checks.run,
            "passed": facts.checks.passed,
            "pass_rate": facts.checks.pass_rate,
        },
        "infrastructure_errors": facts.infrastructure_errors,
        "cost_usd": round(facts.cost_usd, 6),
        "usage": msgspec.to_builtins(facts.usage),
        "total_tokens": facts.total_tokens,
        "wall_s": round(facts.wall_s, 3),
        "tasks_per_minute": _rounded(facts.tasks_per_minute),
        "results_file": str(facts.results_file),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --- words ----------------------------------------------------------------------------------


def cost_text(usd: float) -> str:
    """A sum of money: cents for sums of a dollar or more, four places below."""
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"


def duration_text(seconds: float) -> str:
    """A stretch of time as a person reads it: `42s`, `3m 05s`, `1h 02m`."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def outcome_text(result: Outcome) -> str:
    """How a task ended, in a few words: its reason, its infrastructure error, its check."""
    if result.error is not None:
        return f"infrastructure error at {result.error.stage}: {result.error.message}"
    said = result.terminal_reason
    if result.check is not None:
        if result.check.passed:
            said += ", check passed"
        else:
            said += f", check failed (exit {result.check.exit_code})"
    return said
