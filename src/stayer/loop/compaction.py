"""Compaction inside the run (SPEC §3.1, §3.6): when to shrink the history, and the model call.

Before each model call, a history estimated past the threshold (the window, less the output
reserve and a buffer: about 83% of a 200k window) is summarised first, so a long tool loop
compacts inside the run and the call that follows is not wasted. When the API refuses a prompt
as too long anyway, old tool output is cleared first (`collapse_drain_retry`), then the history
is summarised (`reactive_compact_retry`), each at most once between two tool rounds, and only
then does the run end (`prompt_too_long`).
Three automatic compactions failing in a row stop further tries; a history then past the hard
limit ends the run (`blocking_limit`) without calling the model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Literal

from stayer.context.compact import (
    clear_old_tool_results,
    compacted,
    estimate_tokens,
    summary_request,
)
from stayer.events import Compacted, Continue, Event, Retrying, Terminal
from stayer.messages import AssistantMessage

from .recovery import Finish, Retry, Step
from .state import LoopParams, LoopState
from .turn import TurnResult, stream_turn

AUTOCOMPACT_BUFFER = 13_000
OUTPUT_RESERVE_CAP = 20_000
"""At most this much of the window is kept free for the answer when judging the threshold."""
BLOCKING_MARGIN = 3_000
SUMMARY_MAX_TOKENS = 16_000
MAX_COMPACT_FAILURES = 3
KEEP_RECENT_SHARE = 4
"""The latest round of work stays verbatim when it takes at most a quarter of the window."""


def context_estimate(state: LoopState) -> int:
    """The tokens the next request will take: what the API counted last, plus an estimate of
    what was added since."""
    counted, covered = state.context_mark
    return counted + estimate_tokens(state.messages[covered:])


def threshold(params: LoopParams) -> int:
    """The context size past which the history is summarised before the next call."""
    reserve = min(params.max_tokens, OUTPUT_RESERVE_CAP)
    return params.context_window - reserve - AUTOCOMPACT_BUFFER


def blocked(params: LoopParams, state: LoopState) -> Finish | None:
    """The end of a run whose history no longer fits and cannot be compacted any more."""
    if state.compact_failures < MAX_COMPACT_FAILURES:
        return None
    if context_estimate(state) < params.context_window - BLOCKING_MARGIN:
        return None
    return Finish(
        Terminal.BLOCKING_LIMIT,
        f"The conversation (about {context_estimate(state):,} tokens) no longer fits the "
        f"model's {params.context_window:,}-token window, and summarising it failed "
        f"{state.compact_failures} times; start a new session with the essentials.",
    )


@dataclass
class Outcome:
    """Filled in by the generators below: the state to go on from, and what to do next."""

    state: LoopState
    step: Step | None = None
    summarised: LoopState | None = None
    """The state with the summarised history, when a summary was made."""


async def autocompact(params: LoopParams, state: LoopState, out: Outcome) -> AsyncIterator[Event]:
    """Summarise the history first if it has passed the threshold (no model call is wasted)."""
    out.state = state
    if not params.autocompact or state.compact_failures >= MAX_COMPACT_FAILURES:
        return
    if context_estimate(state) < threshold(params):
        return
    if not any(isinstance(message, AssistantMessage) for message in state.messages):
        return  # nothing has been done yet: a summary would only rewrite the user's request
    async for event in _summarise(params, state, "auto", out):
        yield event
    if out.summarised is None:  # it failed: count it and go on with the history as it is
        out.state = replace(state, compact_failures=state.compact_failures + 1)
    else:
        out.state = out.summarised


async def too_long(
    params: LoopParams, state: LoopState, refused: Finish, out: Outcome
) -> AsyncIterator[Event]:
    """The API refused the prompt as too long: clear old tool output, then summarise, then give
    up with the refusal."""
    out.state, out.step = state, refused
    if not state.drained:
        messages, cleared = clear_old_tool_results(state.messages)
        if cleared:
            before, after = estimate_tokens(state.messages), estimate_tokens(messages)
            yield Compacted("reactive", "cleared_tool_results", before, after)
            drained = replace(state, messages=messages, drained=True, context_mark=(0, 0))
            out.step = Retry(drained, Continue.COLLAPSE_DRAIN_RETRY)
            return
    if state.reactive_compacted:
        return
    async for event in _summarise(params, state, "reactive", out):
        yield event
    if out.summarised is not None:
        summarised = replace(out.summarised, reactive_compacted=True)
        out.step = Retry(summarised, Continue.REACTIVE_COMPACT_RETRY)


async def _summarise(
    params: LoopParams, state: LoopState, trigger: Literal["auto", "reactive"], out: Outcome
) -> AsyncIterator[Event]:
    """Ask the model for the summary; on success `out.summarised` holds the new history."""
    budget = params.context_window - SUMMARY_MAX_TOKENS - AUTOCOMPACT_BUFFER
    request = summary_request(state.messages, budget_tokens=budget)
    summariser = replace(params, system_prompt=request.system, purpose="compact")
    turn = TurnResult()
    try:
        async for event in stream_turn(
            summariser,
            request.messages,
            (),
            turn,
            max_tokens=SUMMARY_MAX_TOKENS,
            serving=state.serving,  # the model answering the run now summarises it
        ):
            if isinstance(event, Retrying):
                yield event  # the wait is worth showing; the summary's words are not
    except Exception:  # a summary that failed, whatever broke, leaves the history as it was
        return
    message = turn.message
    if message is None or not message.text.strip():
        return
    usage = state.usage + message.usage
    keep = params.context_window // KEEP_RECENT_SHARE
    messages = compacted(state.messages, message.text, keep_recent_tokens=keep)
    before, after = context_estimate(state), estimate_tokens(messages)
    yield Compacted(trigger, "summary", before, after)
    new = replace(
        state,
        messages=messages,
        usage=usage,
        api_duration_s=state.api_duration_s + turn.api_duration_s,
        context_mark=(0, 0),
        compact_failures=0,
    )
    out.summarised = new
