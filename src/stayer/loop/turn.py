"""One model call: build the request, stream the response, retry what may pass (SPEC §1.6).

Only a completed response or a final error leaves this module. A retry after partial output
first yields `Withdrawn`, so whoever showed the partial blocks knows they are void; so does a
switch to a fallback model (`ModelSwitched`, see `fallback`), which sends the request again at
once to the next model.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from stayer.errors import ModelError, Overloaded
from stayer.events import Event, MessageCompleted, MessageStarted, Retrying, Withdrawn
from stayer.messages import AssistantMessage, Message, ToolSpec

from . import fallback
from .state import LoopParams


@dataclass
class TurnResult:
    """Filled in by `stream_turn`: the completed message, time spent waiting on the API, and
    which model answered (see `fallback`)."""

    message: AssistantMessage | None = None
    api_duration_s: float = 0.0
    serving: int = 0


@dataclass
class _Failures:
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


async def stream_turn(
    params: LoopParams,
    messages: tuple[Message, ...],
    specs: tuple[ToolSpec, ...],
    result: TurnResult,
    *,
    max_tokens: int | None = None,
    serving: int = 0,
) -> AsyncIterator[Event]:
    """Stream one response into `result`, retrying retryable failures; raises the final error.

    `max_tokens` overrides the run's output limit for this call (an escalation); `serving` is
    the model that answers the run now, and the call may move on down the fallback chain."""
    result.serving = serving
    provider, request = fallback.request_for(params, serving, messages, specs, max_tokens)
    failures = _Failures()
    while True:
        started = time.monotonic()
        partial_id: str | None = None
        try:
            async for event in provider.stream(request):
                if isinstance(event, MessageStarted):
                    partial_id = event.message_id
                elif isinstance(event, MessageCompleted):
                    result.message = event.message
                yield event
            return
        except ModelError as error:
            failures.count(error)
            number, limit = failures.retry_number(params, error)
            exhausted = not error.retryable or number > limit
            switching = fallback.should_switch(
                params, result.serving, failures.overloads, exhausted=exhausted
            )
            if exhausted and not switching:
                raise
            failure = error
        finally:
            result.api_duration_s += time.monotonic() - started
        if partial_id is not None:
            yield Withdrawn(partial_id, reason=str(failure))
        if switching:  # at once, with a fresh count: the next model is not the busy one
            yield fallback.switch(params, result.serving, failures.overloads)
            result.serving += 1
            provider, request = fallback.request_for(
                params, result.serving, messages, specs, max_tokens
            )
            failures = _Failures()
            continue
        delay = params.retry.delay(failures.attempts, failure)
        yield Retrying(number, limit, delay, str(failure), failure.status)
        await params.abort.sleep(delay)  # waiting is not time spent in the API
        if params.abort.aborted:
            raise failure
