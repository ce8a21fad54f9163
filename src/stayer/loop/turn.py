"""One model call: build the request, stream the response, retry what may pass (SPEC §1.6).

Only a completed response or a final error leaves this module. A retry after partial output
first yields `Withdrawn`, so whoever showed the partial blocks knows they are void.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from stayer.errors import ModelError
from stayer.events import Event, MessageCompleted, MessageStarted, Retrying, Withdrawn
from stayer.messages import AssistantMessage, Message, ToolSpec
from stayer.providers.base import ModelRequest

from .state import LoopParams


@dataclass
class TurnResult:
    """Filled in by `stream_turn`: the completed message and time spent waiting on the API."""

    message: AssistantMessage | None = None
    api_duration_s: float = 0.0


async def stream_turn(
    params: LoopParams,
    messages: tuple[Message, ...],
    specs: tuple[ToolSpec, ...],
    result: TurnResult,
    *,
    max_tokens: int | None = None,
) -> AsyncIterator[Event]:
    """Stream one response into `result`, retrying retryable failures; raises the final error.

    `max_tokens` overrides the run's output limit for this call (an escalation)."""
    request = ModelRequest(
        model=params.model,
        system=params.system_prompt,
        messages=messages,
        tools=specs,
        max_tokens=max_tokens or params.max_tokens,
        purpose=params.purpose,
        betas=params.betas,
    )
    attempt = 0
    capped = 0  # retries of failures that carry their own, smaller limit
    while True:
        started = time.monotonic()
        partial_id: str | None = None
        try:
            async for event in params.provider.stream(request):
                if isinstance(event, MessageStarted):
                    partial_id = event.message_id
                elif isinstance(event, MessageCompleted):
                    result.message = event.message
                yield event
            return
        except ModelError as error:
            capped += error.retry_limit is not None
            number, limit = _retry_number(params, error, attempt + 1, capped)
            if not error.retryable or number > limit:
                raise
            failure = error
        finally:
            result.api_duration_s += time.monotonic() - started
        attempt += 1
        if partial_id is not None:
            yield Withdrawn(partial_id, reason=str(failure))
        delay = params.retry.delay(attempt, failure)
        yield Retrying(number, limit, delay, str(failure), failure.status)
        await params.abort.sleep(delay)  # waiting is not time spent in the API
        if params.abort.aborted:
            raise failure


def _retry_number(
    params: LoopParams, error: ModelError, attempt: int, capped: int
) -> tuple[int, int]:
    """Which retry this would be, and how many this failure may have in all."""
    if error.retry_limit is None:
        return attempt, params.retry.max_retries
    return capped, min(error.retry_limit, params.retry.max_retries)
