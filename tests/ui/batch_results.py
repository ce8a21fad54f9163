"""Task results as a batch writes them, made by hand for the batch view's tests."""

from __future__ import annotations

from stayer.batch.results import CheckOutcome, Stage, TaskError, TaskResult
from stayer.messages import Usage


def result(
    task_id: str,
    reason: str = "completed",
    *,
    cost: float = 0.01,
    duration: float = 10.0,
    turns: int = 3,
    usage: Usage | None = None,
    check: bool | None = None,
    error: tuple[Stage, str] | None = None,
) -> TaskResult:
    """One task's result: `check` True or False gives it a check that passed (exit 0) or
    failed (exit 1); `error` (stage, message) makes it an infrastructure failure."""
    outcome = None if check is None else CheckOutcome(0 if check else 1, check)
    return TaskResult(
        id=task_id,
        terminal_reason="error" if error else reason,
        is_error=bool(error) or reason != "completed",
        turns=0 if error else turns,
        usage=usage or Usage(input_tokens=100, output_tokens=20),
        cost_usd=cost,
        duration_s=duration,
        check=outcome,
        diff="",
        transcript=None,
        result="",
        error=TaskError(*error) if error else None,
    )
