"""The loop's hooks for work it launched in the background: when the model would stop, the
run waits for that work (its events pass through), then goes on with what it left; what it
spent is billed to the run; spend elsewhere counts against the run's budget."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from msgspec.structs import replace

from stayer.events import Continuing, Event, Finished, Retrying, Terminal
from stayer.messages import ContentBlock, ModelSpend, TextBlock, Usage, UserMessage
from stayer.providers.profiles import cost_usd
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo

MODEL = "claude-sonnet-4-5"
CALL = Usage(input_tokens=100, output_tokens=20)


class Work:
    """Background work standing in for a subagent: one event while the run waits, then a
    note for the model and what it spent."""

    def __init__(self) -> None:
        self.done = False
        self.notes: list[str] = []
        self.spent: list[ModelSpend] = []

    async def events(self) -> AsyncIterator[Event]:
        if self.done:
            return
        yield Retrying(attempt=1, max_retries=1, delay_s=0.0, error="the helper's", status=None)
        self.done = True
        self.notes.append("<task-notification>the helper is done</task-notification>")
        self.spent.append(ModelSpend(MODEL, CALL))

    def take_queued(self) -> tuple[ContentBlock, ...]:
        taken, self.notes = self.notes, []
        return tuple(TextBlock(note) for note in taken)

    def take_spent(self) -> tuple[ModelSpend, ...]:
        taken, self.spent = self.spent, []
        return tuple(taken)


async def test_the_run_waits_for_its_background_work_and_reads_what_it_left(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("waiting"), text("the helper is done, so am I")])
    work = Work()
    params = replace(
        make_params(model, [], tmp_path),
        model=MODEL,
        background=work.events,
        take_queued=work.take_queued,
        take_spent=work.take_spent,
    )
    events = await run(params)
    kinds = [type(e).__name__ for e in events if isinstance(e, Retrying | Continuing | Finished)]
    assert kinds == ["Retrying", "Continuing", "Finished"]
    (going_on,) = [e for e in events if isinstance(e, Continuing)]
    assert going_on.reason.value == "queued_input"
    last = model.requests[1].messages[-1]
    assert isinstance(last, UserMessage)
    assert "<task-notification>the helper is done</task-notification>" in str(last.content)
    end = finished(events)
    assert end.terminal is Terminal.COMPLETED
    assert end.usage == Usage(input_tokens=300, output_tokens=60)  # two calls and the helper's
    assert end.cost_usd == pytest.approx(3 * cost_usd(MODEL, CALL))


async def test_spend_elsewhere_counts_against_the_runs_budget(tmp_path: Path) -> None:
    one = cost_usd(MODEL, CALL)
    model = ScriptedProvider([tool_call("Echo", {"text": "a"}, id="e1")])
    params = replace(
        make_params(model, [Echo()], tmp_path),
        model=MODEL,
        max_budget_usd=1.5 * one,
        cost_elsewhere=lambda: one,  # what a sibling spent: with the run's own call, too much
    )
    end = finished(await run(params))
    assert end.terminal is Terminal.BUDGET_EXHAUSTED
    assert end.cost_usd == pytest.approx(one)  # the run bills only its own


async def test_background_spend_billed_before_a_call_can_end_the_run_on_its_budget(
    tmp_path: Path,
) -> None:
    one = cost_usd(MODEL, CALL)
    model = ScriptedProvider([tool_call("Echo", {"text": "a"}, id="e1"), text("never asked")])
    asked: list[int] = []

    def take_spent() -> tuple[ModelSpend, ...]:
        """Nothing before the first call; before the second, a background child's two calls."""
        asked.append(len(asked))
        return (ModelSpend(MODEL, CALL), ModelSpend(MODEL, CALL)) if len(asked) == 2 else ()

    params = replace(
        make_params(model, [Echo()], tmp_path),
        model=MODEL,
        max_budget_usd=2.5 * one,  # the run's own call fits; with the child's two, it is spent
        take_spent=take_spent,
    )
    events = await run(params, strict=False)
    assert outline(events) == [
        "RequestStarted",
        "MessageStarted",
        "BlockStarted",
        "BlockCompleted",
        "ToolCallStarted",  # a call starts as its block completes
        "MessageDelta",
        "MessageCompleted",
        "ToolCallFinished",
        "ToolResultsAppended",
        "Continuing next_turn",
        "Finished budget_exhausted",
    ]
    assert len(model.requests) == 1
    end = finished(events)
    assert end.message == f"Reached maximum budget (${2.5 * one:g})"
    assert end.usage == Usage(input_tokens=300, output_tokens=60)  # its call, the child's two
    assert end.cost_usd == pytest.approx(3 * one)


def outline(events: list[Event]) -> list[str]:
    """The run's events by kind, with how it went on or ended (text deltas left out)."""
    lines = []
    for event in events:
        detail = ""
        if isinstance(event, Continuing):
            detail = f" {event.reason.value}"
        if isinstance(event, Finished):
            detail = f" {event.terminal.value}"
        if type(event).__name__ not in ("TextDelta", "ToolInputDelta"):
            lines.append(f"{type(event).__name__}{detail}")
    return lines
