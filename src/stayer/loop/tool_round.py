"""Running one response's tool calls and turning what became of each into the next user message.

Every call ends with a `ToolCallFinished`: it ran, it failed, it was denied, it was answered
without running (cut by the output limit), or it was interrupted or never started. The results
go back as one user message, one `tool_result` per `tool_use`, in order (SPEC §1.5).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from stayer.events import (
    Event,
    PermissionDenial,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsAppended,
)
from stayer.messages import JSON, ContentBlock, TextBlock, ToolUseBlock, UserMessage

from . import recovery
from .abort import relay
from .recovery import Finish, RunTools
from .state import LoopParams, LoopState
from .tool_exec import INTERRUPTED_TEXT, NOT_RUN_TEXT, batches, prepare, run_batch, synthetic_result

INTERRUPTED_MARKER = "[Request interrupted by user]"
INTERRUPTED_TOOLS_MARKER = "[Request interrupted by user for tool use]"


@dataclass
class AfterTools:
    """Filled in by `_tool_round`: the state after the round, or how the run ends."""

    state: LoopState
    finish: Finish | None = None


async def tool_round(
    params: LoopParams, step: RunTools, tool_uses: list[ToolUseBlock], after: AfterTools
) -> AsyncIterator[Event]:
    """Run one response's tool calls, append their results, and decide what comes next."""
    params.settled(step.state.messages)  # the calls are recorded before any of them runs
    round_ = ToolRound(tool_uses)
    for closed in round_.answer_without_running(step.cut):
        yield closed
    async for tool_event in run_tools(params, round_):
        yield tool_event
    state, nudge = recovery.repeats(params, step.state, round_.failure_signature())
    marker = INTERRUPTED_TOOLS_MARKER if params.abort.aborted else nudge
    results = round_.message(marker=marker)
    yield ToolResultsAppended(results, round_.data())
    state = replace(
        state,
        messages=(*state.messages, results),
        denials=(*state.denials, *round_.denials()),
    )
    after.finish = recovery.after_tools(params, state, aborted=params.abort.aborted)
    if after.finish is None:
        state = recovery.next_turn(state, cut=bool(step.cut), nudged=nudge is not None)
    after.state = state


@dataclass
class ToolRound:
    """The calls of one response and what became of each."""

    tool_uses: list[ToolUseBlock]
    started: set[str] = field(default_factory=set[str])
    results: dict[str, ToolCallFinished] = field(default_factory=dict[str, ToolCallFinished])
    failure: str | None = None

    def note(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self.started.add(event.tool_use_id)
        elif isinstance(event, ToolCallFinished):
            self.results[event.tool_use_id] = event

    def unanswered(self) -> list[ToolCallFinished]:
        """Close every call that has no result: it was interrupted, or never started."""
        closed = []
        for block in self.tool_uses:
            if block.id not in self.results:
                text = INTERRUPTED_TEXT if block.id in self.started else NOT_RUN_TEXT
                text = self.failure or text
                result = synthetic_result(block, text)
                closed.append(ToolCallFinished(block.id, block.name, "failed", result, 0.0))
        return closed

    def answer_without_running(self, answers: tuple[tuple[str, str], ...]) -> list[Event]:
        """Close these calls with these texts before the round runs; they never start."""
        closed: list[Event] = []
        texts = dict(answers)
        for block in self.tool_uses:
            if block.id in texts:
                result = synthetic_result(block, texts[block.id])
                closed.append(ToolCallFinished(block.id, block.name, "failed", result, 0.0))
                self.note(closed[-1])
        return closed

    def message(self, *, marker: str | None) -> UserMessage:
        """One user message answering every tool_use, in order (SPEC §1.5), then `marker`."""
        blocks: list[ContentBlock] = [self.results[b.id].result for b in self.tool_uses]
        if marker is not None:
            blocks.append(TextBlock(marker))
        return UserMessage(tuple(blocks))

    def failure_signature(self) -> tuple[str, ...] | None:
        """What failed in this round, call by call (name, input or the text that did not parse,
        result), when every call failed; None when any call succeeded, which is progress."""
        finished = [self.results[b.id] for b in self.tool_uses]
        if not finished or any(not f.result.is_error for f in finished):
            return None
        return tuple(
            json.dumps(
                [b.name, b.input, b.unparsed, self.results[b.id].result.text], sort_keys=True
            )
            for b in self.tool_uses
        )

    def data(self) -> tuple[dict[str, JSON], ...]:
        return tuple(self.results[b.id].data for b in self.tool_uses)

    def denials(self) -> tuple[PermissionDenial, ...]:
        return tuple(
            PermissionDenial(b.name, b.id, dict(b.input))
            for b in self.tool_uses
            if self.results[b.id].status == "denied"
        )


async def run_tools(params: LoopParams, round_: ToolRound) -> AsyncIterator[Event]:
    """Run the round's calls batch by batch; every call ends with a `ToolCallFinished`."""
    try:
        tools = params.tools.tools()
        waiting = [block for block in round_.tool_uses if block.id not in round_.results]
        prepared = [prepare(tools, block) for block in waiting]
        for batch in batches(prepared):
            async for event in relay(run_batch(params, batch), params.abort):
                round_.note(event)
                yield event
            if params.abort.aborted:
                break
    except Exception as error:  # the executor itself broke: still answer every call
        round_.failure = f"Error: the tool could not run ({type(error).__name__}: {error})"
    for closed in round_.unanswered():
        round_.note(closed)
        yield closed
