"""Compaction inside the run (SPEC §3.1, §3.6): when to shrink the history, and the model call.

Before each model call, a history estimated past the threshold (the window, less the output
reserve and a buffer: about 83% of a 200k window) is summarised first, so a long tool loop
compacts inside the run and the call that follows is not wasted. When the API refuses a prompt
as too long anyway, or an answer stops at the end of the window (`model_context_window_exceeded`,
and the answer is dropped), old tool output is cleared first (`collapse_drain_retry`), then the
history is summarised (`reactive_compact_retry`), each at most once between two tool rounds, and
only then does the run end (`prompt_too_long`).
Three automatic compactions failing in a row stop further tries; a history then past the hard
limit ends the run (`blocking_limit`) without calling the model. A context that fills up again
within a few turns of each of three summaries in a row ends the run (`rapid_refill_breaker`),
naming the tool output that keeps filling it, rather than compacting forever.

A summary keeps the pinned notes word for word and shows the most recently read files again
(`reattach`). A prompt that alone fills the window is neither summarised nor refused: it is
saved to the session's folder and sent as its head and a reference (`context.saved_prompt`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Literal

from msgspec import Struct
from msgspec.structs import replace

from stayer.context.compact import (
    CHARS_PER_TOKEN,
    clear_old_tool_results,
    compacted,
    estimate_tokens,
    kept_round,
    largest_tool_output,
    summary_request,
)
from stayer.context.saved_prompt import plain_prompt, save_prompt
from stayer.events import Compacted, Continue, Event, Retrying, Terminal
from stayer.messages import AssistantMessage, Message, TextBlock

from .abort import relay, until_aborted
from .fallback import billed
from .reattach import Reattached, listing_of, reattach_skills, reread
from .recovery import WINDOW_EXCEEDED, Finish, Retry, Step, prompt_too_long
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
REFILL_TURNS = 3
"""A context past the threshold again within this many turns of a summary has refilled..."""
MAX_REFILLS = 3
"""... and after this many refills in a row, compacting again would not help."""
PROMPT_SHARE = 2
"""A prompt taking more than half of what the window holds is saved to a file, not sent whole."""
HEAD_TOKENS = 20_000
"""The most of a saved prompt sent as its head."""


def context_estimate(state: LoopState) -> int:
    """The tokens the next request will take: what the API counted last, plus an estimate of
    what was added since."""
    counted, covered = state.context_mark
    return counted + estimate_tokens(state.messages[covered:])


def threshold(params: LoopParams) -> int:
    """The context size past which the history is summarised before the next call: the window
    (or the smaller one compaction is told to use) less the output reserve and a buffer, or
    the given share of the window less the reserve if that comes first."""
    policy = params.compaction
    effective = compaction_window(params) - min(params.max_tokens, OUTPUT_RESERVE_CAP)
    usual = effective - AUTOCOMPACT_BUFFER
    return usual if policy.percent is None else min(usual, effective * policy.percent // 100)


def compaction_window(params: LoopParams) -> int:
    """The window compaction judges by: the model's, or the smaller one it is told to use."""
    return min(params.compaction.window or params.context_window, params.context_window)


def room(params: LoopParams) -> int:
    """What the model's own window holds before compaction is due, whatever brings it forward:
    what decides whether a prompt fits at all."""
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


class Outcome(Struct):
    """Filled in by the generators below (a holder: an async generator cannot return a
    value): the state to go on from, and what to do next."""

    state: LoopState
    step: Step | None = None
    summarised: LoopState | None = None
    """The state with the summarised history, when a summary was made."""
    unsummarised: LoopState | None = None
    """When the summariser answered but gave no summary: the state with its tokens billed."""


async def autocompact(params: LoopParams, state: LoopState, out: Outcome) -> AsyncIterator[Event]:
    """Shrink the history first if it has passed the threshold (no model call is wasted): save
    a prompt that alone is too large, else summarise; end a run that keeps refilling."""
    out.state = state
    limit = threshold(params)
    if not params.compaction.auto or context_estimate(state) < limit:
        return
    saved = _saved(params, state, "auto", largest=room(params) // PROMPT_SHARE)
    if saved is not None:
        yield saved[0]
        out.state = state = saved[1]
        if context_estimate(state) < limit:
            return
    if state.compact_failures >= MAX_COMPACT_FAILURES:
        return
    if not any(isinstance(message, AssistantMessage) for message in state.messages):
        return  # nothing has been done yet: a summary would only rewrite the user's request
    refilled = state.compacted_at is not None and state.turn_count - state.compacted_at <= (
        REFILL_TURNS
    )
    refills = state.refills + 1 if refilled else 0
    if refills >= MAX_REFILLS:
        out.step = _thrashing(state, refills)
        return
    async for event in _summarise(params, state, "auto", out):
        yield event
    if out.summarised is None:  # it failed: count it and go on with the history as it is
        base = out.unsummarised or state
        out.state = replace(base, compact_failures=state.compact_failures + 1)
    else:
        out.state = replace(out.summarised, compacted_at=state.turn_count, refills=refills)


def _thrashing(state: LoopState, refills: int) -> Finish:
    """The end of a run whose context fills up again right after every summary."""
    culprit = largest_tool_output(state.messages)
    blame = "One tool output is likely too large for the window"
    if culprit is not None:
        call, tokens = culprit
        shown = json.dumps(dict(call.input), ensure_ascii=False)
        shown = shown if len(shown) <= 200 else shown[:200] + "…"
        blame = f"The largest tool output is {call.name} {shown}, at about {tokens:,} tokens"
    return Finish(
        Terminal.RAPID_REFILL,
        f"The context filled up again within {REFILL_TURNS} turns of each of the last "
        f"{refills} summaries, so summarising again would not help. {blame}: have it produce "
        "less (read a file in parts with offset and limit, filter a command's output), or "
        "start a new session with the essentials.",
    )


def _saved(
    params: LoopParams, state: LoopState, trigger: Literal["auto", "reactive"], *, largest: int
) -> tuple[Compacted, LoopState] | None:
    """The state with a last prompt larger than `largest` tokens saved to the session's folder
    and replaced by its head, and the event saying so; None if there is nothing to save."""
    folder = params.compaction.saved_prompts
    prompt = plain_prompt(state.messages[-1]) if state.messages else None
    if folder is None or prompt is None or state.prompt_saved:
        return None
    if estimate_tokens((prompt,)) <= largest:
        return None
    rest = estimate_tokens(state.messages[:-1])
    head = max(min(HEAD_TOKENS, (room(params) - rest) // 2), 1_000)
    saved = save_prompt(prompt, folder, head_tokens=head)
    if saved is None:
        return None
    message, path = saved
    messages = (*state.messages[:-1], message)
    before, after = context_estimate(state), estimate_tokens(messages)
    event = Compacted(trigger, "saved_prompt", before, after, reattached=(str(path),))
    return event, replace(state, messages=messages, prompt_saved=True, context_mark=(0, 0))


async def too_long(
    params: LoopParams, state: LoopState, refused: Finish, out: Outcome
) -> AsyncIterator[Event]:
    """The API refused the prompt as too long: clear old tool output, then summarise, then give
    up with the refusal."""
    out.state, out.step = state, refused
    saved = _saved(params, state, "reactive", largest=params.context_window // 4)
    if saved is not None:
        yield saved[0]
        out.step = Retry(saved[1], Continue.PROMPT_AS_FILE)
        return
    if not state.drained:
        messages, cleared = clear_old_tool_results(state.messages)
        if cleared:
            before, after = estimate_tokens(state.messages), estimate_tokens(messages)
            yield Compacted("reactive", "cleared_tool_results", before, after)
            drained = replace(state, messages=messages, drained=True, context_mark=(0, 0))
            out.step = Retry(drained, Continue.COLLAPSE_DRAIN_RETRY)
            return
    if state.reactive_compacted or not params.compaction.reactive:
        return
    async for event in _summarise(params, state, "reactive", out):
        yield event
    if out.summarised is not None:
        summarised = replace(out.summarised, reactive_compacted=True)
        out.step = Retry(summarised, Continue.REACTIVE_COMPACT_RETRY)
    elif out.unsummarised is not None:
        out.state = out.unsummarised  # the run ends with the refusal, the summary's cost counted


async def window_exceeded(
    params: LoopParams, state: LoopState, message: AssistantMessage, out: Outcome
) -> AsyncIterator[Event]:
    """An answer cut off by the end of the context window (`model_context_window_exceeded`):
    dropped, none of its calls run, and the history shrunk as for a too-long prompt; if nothing
    shrinks it, the run ends keeping what the model wrote."""
    refused = prompt_too_long(WINDOW_EXCEEDED)
    async for event in too_long(params, replace(state, messages=state.messages[:-1]), refused, out):
        yield event
    if isinstance(out.step, Retry):
        out.step = replace(out.step, withdraw=message.id)
        return
    words = tuple(block for block in message.content if isinstance(block, TextBlock))
    kept = (replace(message, content=words),) if words else ()  # its calls never ran
    out.state = replace(state, messages=(*state.messages[:-1], *kept))


async def _with_summary(
    params: LoopParams, state: LoopState, summary: str
) -> tuple[tuple[Message, ...], list[Reattached]]:
    """The history replaced by `summary`, with the latest round of work, the pinned notes and
    the files read most recently and the skills invoked shown again; and those files."""
    keep = compaction_window(params) // KEEP_RECENT_SHARE
    kept = kept_round(state.messages, keep_recent_tokens=keep)
    share = threshold(params) // 4  # what shown-again files and skills may take together
    files = await reread(params, state.messages, kept, budget_tokens=share)
    took = sum(len(file.text) for file in files) // CHARS_PER_TOKEN
    skills = reattach_skills(params, kept, budget_tokens=share - took)
    messages = compacted(
        state.messages,
        summary,
        keep_recent_tokens=keep,
        pins=tuple(params.tool_context.pins),
        files=[*(shown.text for shown in (*files, *skills)), *listing_of(state.messages)],
    )
    return messages, files


async def compact_now(
    params: LoopParams, messages: tuple[Message, ...], focus: str | None = None
) -> AsyncGenerator[Event | Summarised, None]:
    """Summarise `messages` now, as the user asked (`/compact`, `Session.compact`), with
    `focus` added to the instructions: its `Compacted` (trigger `manual`) and, last, the
    conversation to go on from (the same one when no summary came)."""
    out = Outcome(LoopState(messages=messages))
    async for event in _summarise(params, out.state, "manual", out, focus=focus):
        yield event
    yield Summarised(out.summarised.messages if out.summarised is not None else messages)


class Summarised(Struct, frozen=True):
    """`compact_now`'s last word: the conversation after it."""

    messages: tuple[Message, ...]


async def _summarise(
    params: LoopParams,
    state: LoopState,
    trigger: Literal["auto", "reactive", "manual"],
    out: Outcome,
    *,
    focus: str | None = None,
) -> AsyncIterator[Event]:
    """Ask the model for the summary; on success `out.summarised` holds the new history.
    PreCompact hooks run first (`trigger` auto: the run chose to, whether ahead of the limit
    or after a refusal, as Claude Code counts both; manual: the user asked)."""
    if params.before_compact is not None:
        hook_trigger: Literal["auto", "manual"] = "manual" if trigger == "manual" else "auto"
        await until_aborted(params.before_compact(hook_trigger), params.abort)
    budget = params.context_window - SUMMARY_MAX_TOKENS - AUTOCOMPACT_BUFFER
    request = summary_request(state.messages, budget_tokens=budget, focus=focus)
    summariser = replace(params, system_prompt=request.system, purpose="compact")
    turn = TurnResult()
    streaming = stream_turn(
        summariser,
        request.messages,
        (),
        turn,
        max_tokens=SUMMARY_MAX_TOKENS,
        serving=state.serving,  # the model answering the run now summarises it
    )
    try:
        async for event in relay(streaming, params.abort):  # an interrupt stops it at once
            if isinstance(event, Retrying):
                yield event  # the wait is worth showing; the summary's words are not
    except Exception:  # a summary that failed, whatever broke, leaves the history as it was
        return
    message = turn.message
    if message is None or params.abort.aborted:  # a stopped summary is no summary
        return
    # An empty or declined summary (`refusal`: its words are the model's reason, not a summary)
    # is no summary, and still a call that was paid for.
    if not message.text.strip() or message.stop_reason == "refusal":
        out.unsummarised = billed(params, state, turn.serving, (message.usage,))
        return
    messages, files = await _with_summary(params, state, message.text)
    before, after = context_estimate(state), estimate_tokens(messages)
    yield Compacted(
        trigger,
        "summary",
        before,
        after,
        left_out=request.left_out,
        reattached=tuple(file.path for file in files),
    )
    new = replace(
        billed(params, state, turn.serving, (message.usage,)),  # the model that summarised
        messages=messages,
        api_duration_s=state.api_duration_s + turn.api_duration_s,
        context_mark=(0, 0),
        compact_failures=0,
    )
    out.summarised = new
