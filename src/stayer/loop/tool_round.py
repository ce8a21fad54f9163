"""The round of tool calls after a response, and the user message of what became of each.

The calls have been starting since their blocks completed (`executor`); here the rest run, and
every call ends with a `ToolCallFinished`: it ran, it failed, it was denied, it was answered
without running (cut by the output limit), or it was interrupted or never started. The results
go back as one user message, one `tool_result` per `tool_use`, in order (SPEC §1.5), with the
round's notes after them. What the calls spent on model calls of their own is billed here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from msgspec import Struct
from msgspec.structs import replace

from stayer.events import Event, ToolResultsAppended

from . import recovery
from .executor import Executor
from .fallback import billed_spends
from .recovery import Finish, RunTools
from .state import LoopParams, LoopState

INTERRUPTED_MARKER = "[Request interrupted by user]"
INTERRUPTED_TOOLS_MARKER = "[Request interrupted by user for tool use]"


class AfterTools(Struct):
    """Filled in by `_tool_round`: the state after the round, or how the run ends."""

    state: LoopState
    finish: Finish | None = None


async def tool_round(
    params: LoopParams, step: RunTools, executor: Executor, after: AfterTools
) -> AsyncIterator[Event]:
    """Finish one response's tool calls, append their results, and decide what comes next."""
    params.settled(step.state.messages)  # the answer is on record before its last calls run
    async for tool_event in executor.finish(step.cut):
        yield tool_event
    round_ = executor.round
    state, nudge = recovery.repeats(params, step.state, round_.failure_signature())
    aborted = params.abort.aborted
    notes = [INTERRUPTED_TOOLS_MARKER] if aborted else [n for n in (step.broken, nudge) if n]
    results = round_.message(marker="\n\n".join(notes) if notes else None)
    yield ToolResultsAppended(results, round_.data())
    state = replace(
        billed_spends(state, [spend for r in round_.results.values() for spend in r.spent]),
        messages=(*state.messages, results),
        denials=(*state.denials, *round_.denials()),
    )
    after.finish = recovery.after_tools(params, state, aborted=aborted) or step.then
    if after.finish is None:
        state = recovery.next_turn(
            state, cut=bool(step.cut), nudged=nudge is not None, broken=step.broken is not None
        )
    after.state = state
