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
) -> AsyncIterator[Event]:
    """Stream one response into `result`, retrying retryable failures; raises the final error."""
    request = ModelRequest(
        model=params.model,
        system=params.system_prompt,
        messages=messages,
        tools=specs,
        max_tokens=params.max_tokens,
        purpose=params.purpose,
    )
    attempt = 0
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
            if not error.retryable or attempt >= params.retry.max_retries:
                raise
            failure = error
        finally:
            result.api_duration_s += time.monotonic() - started
        attempt += 1
        if partial_id is not None:
            yield Withdrawn(partial_id, reason=str(failure))
        delay = params.retry.delay(attempt, failure)
        yield Retrying(attempt, params.retry.max_retries, delay, str(failure), failure.status)
        await params.abort.sleep(delay)  # waiting is not time spent in the API
        if params.abort.aborted:
            raise failure
