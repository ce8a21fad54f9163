"""The loop (SPEC §1): `query()` hands everything to `query_loop()`, a `while True` over turns.

Each iteration streams one model response, yielding every event as it arrives. A tool_use block
seen in the stream sets `needs_follow_up`, and the call starts then and there when the rules
allow (`executor`); `stop_reason` is never consulted for that (SPEC §1.4). With tool calls,
the rest of the calls run once the response has ended, their results go back as one user
message, in tool_use order, and the loop goes round (`Continue.NEXT_TURN`). Whether to go on,
and why, is `recovery`'s decision after each response and each tool round (SPEC §3): this module
only streams, runs tools and acts on it. Input queued meanwhile (`LoopParams.take_queued`) joins
the user message each request ends with. The loop leaves only through `_finished`, which makes
the one `Finished` event; before it, every tool_use in the history has a result, so the
conversation stays valid for the API whatever happened.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from msgspec.structs import replace

from stayer.events import (
    Continuing,
    Event,
    Finished,
    MessageCompleted,
    RequestStarted,
    Terminal,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    ModelSpend,
    TextBlock,
    UserMessage,
    is_blank_text,
    without_blank_text,
)

from . import compaction, recovery
from .abort import relay, until_aborted
from .compaction import Outcome
from .executor import Executor
from .fallback import billed, billed_spends, handed_over, run_cost
from .recovery import (
    CallSummary,
    Completing,
    Finish,
    Interrupted,
    Overflowed,
    Retry,
    RunTools,
    Salvage,
    Shrink,
    Step,
    append_user,
)
from .response import Response, go_on_from_what_ran, stream_response
from .state import LoopParams, LoopState
from .stream_cut import answer_text
from .tool_round import INTERRUPTED_MARKER, AfterTools, tool_round

ABORTED_WHILE_STREAMING = Finish(
    Terminal.ABORTED_STREAMING, "Interrupted by the user while the model answered."
)
ABORTED_WHILE_CHECKING = Finish(
    Terminal.ABORTED_TOOLS, "Interrupted by the user while checking whether the work is done."
)


async def query(params: LoopParams, messages: tuple[Message, ...]) -> AsyncGenerator[Event, None]:
    """Run the loop on `messages` (ending with the new user message); yields every event."""
    async with aclosing(query_loop(params, LoopState(messages=messages))) as events:
        async for event in events:
            yield event


async def query_loop(params: LoopParams, state: LoopState) -> AsyncGenerator[Event, None]:
    """The `while True` loop; its last event is always `Finished`, exactly once."""
    started = time.monotonic()
    stream = Response(Executor(params))
    try:
        while True:
            # Holders (`Outcome`, `AfterTools`): an async generator cannot return its result.
            ready = Outcome(state)
            async for event in _before_call(params, state, ready):
                yield event
            state = ready.state
            if isinstance(ready.step, Finish):
                yield _finished(params, state, ready.step, started)
                return
            yield RequestStarted(state.turn_count)
            stream = Response(Executor(params))
            async with aclosing(stream_response(params, state, stream)) as streamed:
                async for event in streamed:
                    yield event
            after = AfterTools(state)
            async for event in _answered(params, state, stream, after):
                yield event
            state = after.state
            if after.finish is not None:
                yield _finished(params, state, after.finish, started)
                return
    finally:  # a reader that left early leaves no call running
        await stream.executor.aclose()


async def _answered(
    params: LoopParams, state: LoopState, stream: Response, out: AfterTools
) -> AsyncIterator[Event]:
    """Everything after one model call up to the next: recovery's decision acted on, the
    answer released, then the finish, the retry, or the round of tools."""
    answer = Outcome(_account(params, state, stream))
    async for event in _after_call(params, answer.state, stream, answer):
        yield event
    state, step = _settled(answer)
    for event in _release(stream, _kept_from(step, state)):
        yield event
    if isinstance(step, Finish):
        out.state, out.finish = state, step
        return
    if isinstance(step, Retry):
        for event in _announce(step):
            yield event
        out.state = replace(step.state, transition=step.reason)
        return
    async for tool_event in tool_round(params, step, stream.executor, out):
        yield tool_event
    if out.finish is None:
        assert out.state.transition is not None
        yield Continuing(out.state.transition)


def _kept_from(step: Step, state: LoopState) -> LoopState:
    return step.state if isinstance(step, Retry | RunTools) else state


def _settled(out: Outcome) -> tuple[LoopState, Step]:
    """The state and the step a model call leaves: a finish may end from a state it changed."""
    assert out.step is not None
    if isinstance(out.step, Finish) and out.step.state is not None:
        return out.step.state, out.step
    return out.state, out.step


def _release(stream: Response, state: LoopState) -> list[Event]:
    """The held completion of an answer recovery may drop, once it has decided: out as the
    conversation now holds it (whole, or only its text), or not at all when it was dropped (the
    `Withdrawn` that `_announce` yields then tells whoever saw it stream)."""
    held, stream.held = stream.held, None
    if held is None:
        return []
    for message in reversed(state.messages):
        if isinstance(message, AssistantMessage) and message.id == held.message.id:
            return [held if message is held.message else MessageCompleted(message)]
    return []


def _announce(step: Retry) -> list[Event]:
    """The events of going round again: the dropped answer withdrawn, the move to the next
    model if the request goes to it, then the reason."""
    withdrawn = (
        []
        if step.withdraw is None
        else [Withdrawn(step.withdraw, f"recovering: {step.reason.value}")]
    )
    switched = [] if step.switched is None else [step.switched]
    return [*withdrawn, *switched, Continuing(step.reason)]


async def _before_call(params: LoopParams, state: LoopState, out: Outcome) -> AsyncIterator[Event]:
    """Compact a history past the threshold first; end a run that can no longer fit, or whose
    budget what was spent on its behalf (its background children) used up."""
    params.settled(state.messages)  # on record before a summary, which can take minutes
    async for event in compaction.autocompact(params, state, out):
        yield event
    if out.step is None:
        out.step = compaction.blocked(params, out.state)
    if out.step is None:  # what was spent elsewhere meanwhile may leave no budget for a call
        out.state = billed_spends(out.state, _take_spent(params))
        out.step = recovery.over_budget(params, out.state)
    if out.step is None:  # input queued meanwhile joins the message the request ends with
        queued = recovery.with_queued(out.state, _take_queued(params))
        out.state = _reminded(params, queued)
    params.settled(out.state.messages)


def _reminded(params: LoopParams, state: LoopState) -> LoopState:
    """The state with the session's note for this call, if it has one, in the user message
    the call ends with (asked only when there is one, so no note is lost)."""
    last = state.messages[-1] if state.messages else None
    if params.reminder is None or not isinstance(last, UserMessage):
        return state
    note = params.reminder(state.messages)
    if not note:
        return state
    return replace(state, messages=append_user(state.messages, UserMessage((TextBlock(note),))))


async def _after_call(
    params: LoopParams, state: LoopState, stream: Response, out: Outcome
) -> AsyncIterator[Event]:
    """Act on recovery's decision on a finished model call (`recovery.after_call`); the step
    to take goes to `out.step`."""
    branch = recovery.after_call(params, state, _summary(params, stream))
    if isinstance(branch, Interrupted):
        async for event in _close_interrupted(state, stream, out):
            yield event
    elif isinstance(branch, Shrink):
        async for event in compaction.too_long(params, state, branch.refused, out):
            yield event
    elif isinstance(branch, Overflowed):
        async for event in compaction.window_exceeded(params, state, branch.message, out):
            yield event
    elif isinstance(branch, Salvage):
        out.step, kept = go_on_from_what_ran(state, stream)
        if stream.held is None:  # nothing showed it complete
            yield kept
    elif isinstance(branch, Completing):
        async for event in _background(params):
            yield event
        aborted = params.abort.aborted
        stopped = replace(ABORTED_WHILE_CHECKING, state=branch.state) if aborted else None
        out.step = stopped or await _completing(params, branch.state)
    else:  # a step to take as it is (mypy checks no other branch reaches here)
        out.step = branch


def _summary(params: LoopParams, stream: Response) -> CallSummary:
    """What the call produced, for `recovery.after_call`."""
    return CallSummary(
        message=stream.turn.message,
        failure=stream.failure,
        started=stream.executor.started_any,
        broke=stream.turn.broke is not None,
        aborted=params.abort.aborted,
    )


async def _completing(params: LoopParams, state: LoopState) -> Step:
    """The model would be done: the stop checks and Stop hooks may send it back (a recovery,
    which the budget bounds), and input the user queued meanwhile goes on with the run."""
    reports: list[str] = []
    if params.stop_checks:
        reports = [report async for report in relay(_stop_checks(params), params.abort) if report]
        if params.abort.aborted:
            return replace(ABORTED_WHILE_CHECKING, state=state)
    if not reports and params.stop_hook is not None:
        hook = params.stop_hook(state.stop_hook_active, answer_text(state.messages))
        verdict = await until_aborted(hook, params.abort)
        if verdict is None or params.abort.aborted:
            return replace(ABORTED_WHILE_CHECKING, state=state)
        hooked = recovery.after_stop_hook(params, state, verdict)
        if hooked is not None:
            return _bounded(params, state, hooked)
    step = _bounded(params, state, recovery.before_completing(params, state, reports))
    if isinstance(step, Finish) and step.terminal is Terminal.COMPLETED:
        state = billed_spends(step.state or state, _take_spent(params))
        return recovery.queued(state, _take_queued(params)) or replace(step, state=state)
    return step


async def _background(params: LoopParams) -> AsyncIterator[Event]:
    """The events of the work the run launched in the background, until it is done (or the run
    is aborted: then the wait stops, not the work)."""
    if params.background is not None and not params.abort.aborted:
        async for event in relay(params.background(), params.abort):
            yield event


def _take_queued(params: LoopParams) -> tuple[ContentBlock, ...]:
    """What the user queued since the last model call; an interrupted run takes none."""
    if params.take_queued is None or params.abort.aborted:
        return ()
    return params.take_queued()


def _take_spent(params: LoopParams) -> tuple[ModelSpend, ...]:
    """What was spent on the run's behalf outside its tool calls since it was last asked."""
    return () if params.take_spent is None else params.take_spent()


def _bounded(params: LoopParams, state: LoopState, step: Step) -> Step:
    """A step after the stop checks: going on is a recovery, which the budget bounds; an end
    ends from the conversation as it stands."""
    if isinstance(step, Retry):
        return recovery.over_budget(params, state) or step
    return step if step.state is not None else replace(step, state=state)


async def _stop_checks(params: LoopParams) -> AsyncIterator[str | None]:
    """Each stop check's objection, or None, in order; stops early when the run is aborted."""
    for check in params.stop_checks:
        yield await check()


async def _close_interrupted(
    state: LoopState, stream: Response, out: Outcome
) -> AsyncIterator[Event]:
    """A run interrupted while the model answered: keep what streamed completely, stop the calls
    that started and close every call; the run then ends."""
    for event in _release(stream, state):
        yield event
    state = _keep_partial(state, stream)
    async for closed in stream.executor.interrupt():
        yield closed
    round_ = stream.executor.round
    results = round_.message(marker=INTERRUPTED_MARKER)
    yield ToolResultsAppended(results, round_.data())
    out.state = replace(state, messages=append_user(state.messages, results))
    out.step = ABORTED_WHILE_STREAMING


def _account(params: LoopParams, state: LoopState, stream: Response) -> LoopState:
    """Fold one model call into the state: time, every token billed to the model that answered
    (abandoned attempts and partial answers included), the partial answers kept at a cut, and
    the message if it completed.
    """
    state = replace(
        handed_over(state, stream.turn.serving),
        api_duration_s=state.api_duration_s + stream.turn.api_duration_s,
        messages=(*state.messages, *stream.turn.kept),
    )
    state = billed(params, state, state.serving, (*stream.spent, stream.assembler.usage))
    message = stream.complete_message
    if message is None:
        return state
    message = stream.turn.message = _without_blank_text(message)
    messages = (*state.messages, message)
    counted = message.usage.total_input_tokens + message.usage.output_tokens
    return replace(
        state,
        messages=messages,
        stop_reason=message.stop_reason,
        context_mark=(counted, len(messages)) if counted else state.context_mark,
    )


def _without_blank_text(message: AssistantMessage) -> AssistantMessage:
    """The answer without text blocks of nothing but whitespace (models stream them between
    blocks), which the API refuses once the answer is no longer last; an answer of nothing
    else stays as it is, for recovery to see it is empty."""
    kept = without_blank_text(message)
    return kept if kept.content else message


def _keep_partial(state: LoopState, stream: Response) -> LoopState:
    """Keep the blocks of an interrupted answer that streamed completely."""
    partial = stream.assembler.message()
    blocks = tuple(block for block in partial.content if not is_blank_text(block))
    if stream.complete_message is not None or not blocks:
        return state
    return replace(state, messages=(*state.messages, replace(partial, content=blocks)))


def _finished(params: LoopParams, state: LoopState, finish: Finish, started: float) -> Finished:
    completed = finish.terminal is Terminal.COMPLETED
    result_text = answer_text(state.messages) if completed else ""
    messages = _without_empty_last(state.messages)
    params.settled(messages)
    return Finished(
        terminal=finish.terminal,
        message=finish.message or result_text,
        num_turns=state.turn_count,
        usage=state.usage,
        cost_usd=run_cost(state),
        result_text=result_text,
        stop_reason=state.stop_reason,
        duration_ms=(time.monotonic() - started) * 1000,
        duration_api_ms=state.api_duration_s * 1000,
        error_status=finish.error_status,
        permission_denials=state.denials,
        model_usage=state.model_usage,
        messages=messages,
    )


def _without_empty_last(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The conversation to continue from: an empty last answer would be refused once it is no
    longer last (the API wants content in every assistant turn but the final one), and so
    would a text block of nothing but whitespace anywhere."""
    last = messages[-1] if messages else None
    if not isinstance(last, AssistantMessage):
        return messages
    kept = tuple(block for block in last.content if not is_blank_text(block))
    if not kept:
        return messages[:-1]
    if len(kept) == len(last.content):
        return messages
    return (*messages[:-1], replace(last, content=kept))
