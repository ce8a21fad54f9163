"""One model call: build the request, stream the response, retry what may pass (SPEC §1.6).

Only a completed response or a final error leaves this module. A failure worth retrying is
retried after the retry policy's wait, announced by `Retrying`. What streamed before it is
either withdrawn (`Withdrawn`, so whoever showed the partial blocks knows they are void) and
the request sent again whole, or, when the answer already holds text, kept (`PartialKept`) and
continued from the cut (`truncated_response_recovery`, see `stream_cut`). A switch to a
fallback model (`ModelSwitched`, see `fallback`) withdraws the partial answer and sends the
request again at once to the next model. An answer in which a tool call has already started is
never withdrawn: the call ends there, and the loop goes on from what ran (`TurnResult.broke`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Literal

from msgspec import Struct, field

from stayer.errors import ModelError, Overloaded
from stayer.events import (
    Continue,
    Continuing,
    Event,
    MessageCompleted,
    PartialKept,
    Retrying,
    Withdrawn,
)
from stayer.messages import AssistantMessage, Message, ToolSpec
from stayer.providers.base import ModelRequest, Provider

from . import fallback
from .state import LoopParams
from .stream_cut import MAX_STREAM_RESUMES, Streamed, resume_note


class TurnResult(Struct):
    """Filled in by `stream_turn`: the completed message, time spent waiting on the API, which
    model answered (see `fallback`), and the partial answers a cut stream left."""

    message: AssistantMessage | None = None
    api_duration_s: float = 0.0
    serving: int = 0
    kept: tuple[Message, ...] = ()
    """Partial answers kept at a cut, each followed by the note asking the model to go on: they
    belong in the conversation before `message` (or last, if the call failed in the end)."""
    committed: Callable[[], bool] = lambda: False
    """Whether a tool call of the answer streaming now has started (see `executor`): such an
    answer is never withdrawn or sent again, so a failure ends the call with it in `broke`."""
    broke: ModelError | None = None
    """The failure the answer broke off at after some of its calls started ..."""
    final: bool = False
    """... and whether the call would have given up on it (rather than tried again)."""


class _Failures(Struct):
    """The failures of one model call on the model serving it, as the retry policy counts them."""

    attempts: int = 0
    capped: int = 0
    """Failures that carry their own, smaller retry limit."""
    overloads: int = 0
    """Overloaded answers in a row, the latest included."""

    def count(self, error: ModelError) -> None:
        self.attempts += 1
        self.capped += error.retry_limit is not None
        self.overloads = self.overloads + 1 if isinstance(error, Overloaded) else 0

    def retry_number(self, params: LoopParams, error: ModelError) -> tuple[int, int]:
        """Which retry this would be, and how many this failure may have in all."""
        if error.retry_limit is None:
            return self.attempts, params.retry.max_retries
        return self.capped, min(error.retry_limit, params.retry.max_retries)


Plan = Literal["retry", "switch", "give_up"]


class _Call(Struct):
    """One model call across its attempts: what is sent, to whom, and what failed so far."""

    params: LoopParams
    messages: tuple[Message, ...]
    specs: tuple[ToolSpec, ...]
    max_tokens: int | None
    result: TurnResult
    resumes_left: int
    failures: _Failures = field(default_factory=_Failures)

    def request(self) -> tuple[Provider, ModelRequest]:
        """Who answers the next attempt, and the request: the conversation and what was kept."""
        messages = (*self.messages, *self.result.kept)
        serving = self.result.serving
        return fallback.request_for(self.params, serving, messages, self.specs, self.max_tokens)

    def plan(self, error: ModelError) -> Plan:
        """Count a failure and say what follows it: another attempt, a switch to the next model
        of the fallback chain, or the end of the call."""
        self.failures.count(error)
        number, limit = self.failures.retry_number(self.params, error)
        exhausted = not error.retryable or number > limit
        overloads = self.failures.overloads
        if fallback.should_switch(self.params, self.result.serving, overloads, exhausted=exhausted):
            return "switch"
        return "give_up" if exhausted else "retry"

    def settle(self, streamed: Streamed, failure: ModelError, plan: Plan) -> list[Event]:
        """The events between a failed attempt and the next: its partial answer kept or
        withdrawn, and the switch to the next model if there is one."""
        kept = streamed.kept() if plan == "retry" and self.resumes_left else None
        if kept is not None:
            self.resumes_left -= 1
            self.result.kept = (*self.result.kept, kept, resume_note())
            return [
                PartialKept(kept, str(failure)),
                Continuing(Continue.TRUNCATED_RESPONSE_RECOVERY),
            ]
        events: list[Event] = []
        if streamed.started:
            events.append(Withdrawn(streamed.message_id, reason=str(failure)))
        if plan == "switch":  # at once, with a fresh count: the next model is not the busy one
            overloads = self.failures.overloads
            events.append(fallback.switch(self.params, self.result.serving, overloads))
            self.result.serving += 1
            self.failures = _Failures()
        return events


async def stream_turn(
    params: LoopParams,
    messages: tuple[Message, ...],
    specs: tuple[ToolSpec, ...],
    result: TurnResult,
    *,
    max_tokens: int | None = None,
    serving: int = 0,
    resume: bool = False,
) -> AsyncIterator[Event]:
    """Stream one response into `result`, retrying retryable failures; raises the final error.

    `max_tokens` overrides the run's output limit for this call (an escalation); `serving` is
    the model that answers the run now, and the call may move on down the fallback chain.
    `resume` lets a cut stream's text be kept and continued (`result.kept`): only for a caller
    that reads the whole conversation, not just `result.message` (a summary must come whole)."""
    result.serving = serving
    resumes = MAX_STREAM_RESUMES if resume else 0
    call = _Call(params, messages, specs, max_tokens, result, resumes)
    while True:
        provider, request = call.request()
        streamed = Streamed()
        started = time.monotonic()
        try:
            async for event in provider.stream(request):
                streamed.feed(event)
                if isinstance(event, MessageCompleted):
                    result.message = event.message
                yield event
            return
        except ModelError as error:
            plan = call.plan(error)
            if result.committed():  # what ran must not run twice: the loop goes on from it
                result.broke, result.final = error, plan == "give_up"
                return
            if plan == "give_up":
                raise
            failure = error
        finally:
            result.api_duration_s += time.monotonic() - started
        for settled in call.settle(streamed, failure, plan):
            yield settled
        if plan == "switch":
            continue
        number, limit = call.failures.retry_number(params, failure)
        delay = params.retry.delay(call.failures.attempts, failure)
        yield Retrying(number, limit, delay, str(failure), failure.status)
        await params.abort.sleep(delay)  # waiting is not time spent in the API
        if params.abort.aborted:
            raise failure
