"""The watchdog of one model stream: its first-byte and idle timeouts.

httpx's read timeout (API_TIMEOUT_MS) bounds each silence on the socket, and any byte restarts it:
a server that accepts the request and never answers holds the call for the whole read timeout,
and one that sends only keep-alives (Anthropic `ping` events, SSE comments, chunks that carry
nothing) holds it forever. The watchdog counts only progress, which the provider reports with
`progress()` once an event moved the answer on, and measures only the time spent waiting on the
server (not the time the caller spent with an event), so a slow reader cannot trip it.

Its failure is a retryable `ConnectionLost` naming the timeout, how long it waited, the URL and
the variable that tunes it; the loop's retry sends the request again and withdraws any partial
answer. The connection it was read on is closed with the response, never reused.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

from stayer.errors import ConnectionLost

T = TypeVar("T")

FIRST_BYTE_VARIABLE = "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS"
IDLE_VARIABLE = "CLAUDE_STREAM_IDLE_TIMEOUT_MS"

DEFAULT_FIRST_BYTE_TIMEOUT_S = 120.0
"""From sending the request to the first event that is not a keep-alive.

A hosted model's first event normally comes within seconds (Claude Code already calls 30 s a slow
first byte), and the most common hang is a server that accepts a request and never starts. The
slowest starts that are not hangs (prefilling a prompt near a 1M-token window without cache, a
reasoning model behind Chat Completions that sends nothing until it has thought, a gateway waking
a model) take up to a minute or so. Two minutes lets those through and gives up on a dead
server five times sooner than the 600 s read timeout did. Slower servers (a local model reading
a long prompt on a CPU, a reasoning model at high effort) need the variable raised.
"""

DEFAULT_IDLE_TIMEOUT_S = 300.0
"""The longest wait between two events that move the answer on, once it has begun.

Text arrives many times a second, but a tool call's input need not: Anthropic holds back each
input value until the model has written all of it, so a Write of a large file is minutes of
pings and nothing else (a 20k-token file at 80 tokens a second is four). Cutting such an answer
loses it whole, and again on every retry. Five minutes, Claude Code's choice too, lets all but
the very largest through; a longer silence is far more likely a stall than a model at work.
"""


class StreamWatchdog:
    """Times one stream: the first-byte limit until `progress()` is first called, then the idle
    limit between calls. A limit of None or 0 is off.
    """

    __slots__ = ("_began", "_first_byte_s", "_headers", "_idle_s", "_keepalives", "_url", "_waited")

    def __init__(self, *, url: str, first_byte_s: float | None, idle_s: float | None) -> None:
        self._url = url
        self._first_byte_s = _limit(first_byte_s, "first_byte_s")
        self._idle_s = _limit(idle_s, "idle_s")
        self._began = False
        self._headers = False
        self._keepalives = 0  # events since the last progress that carried none
        self._waited = 0.0  # seconds spent waiting on the server since the last progress

    def progress(self) -> None:
        """The last event moved the answer on: restart the clock, now under the idle limit."""
        self._began = True
        self._keepalives = 0
        self._waited = 0.0

    def answered(self) -> None:
        """The response headers are in; a stall's message says how far the server got."""
        self._headers = True

    def received(self) -> None:
        """An event arrived; until `progress()` says otherwise it counts as a keep-alive."""
        self._keepalives += 1

    async def wait(self, step: Awaitable[T]) -> T:
        """Await `step` (a send, a read) within what is left of the current limit."""
        limit = self._idle_s if self._began else self._first_byte_s
        if limit is None:
            return await step
        started = time.monotonic()
        timer = asyncio.timeout(max(0.0, limit - self._waited))
        try:
            async with timer:
                return await step
        except TimeoutError:
            if timer.expired():
                raise self._stalled(limit) from None
            raise
        finally:
            self._waited += time.monotonic() - started

    def _seen(self) -> str:
        """What did arrive, for the message."""
        if not self._headers:
            return "not even response headers"
        count = self._keepalives
        events = f"only {count} keep-alive event{'s' if count != 1 else ''}" if count else ""
        if self._began:
            return events or "no event at all"
        return f"response headers, then {events or 'no event'}"

    def _stalled(self, limit: float) -> ConnectionLost:
        if self._began:
            return ConnectionLost(
                f"the idle timeout fired: the stream from {self._url} made no progress for "
                f"{limit:g} s ({self._seen()}), so the server may be stalled; try again, or raise "
                f"{IDLE_VARIABLE} if the model pauses longer (0 turns the timeout off)"
            )
        return ConnectionLost(
            f"the first-byte timeout fired: {self._url} did not start its answer within "
            f"{limit:g} s of the request ({self._seen()}), so the server may be stalled; try "
            f"again, or raise {FIRST_BYTE_VARIABLE} if the model needs longer to start "
            "(0 turns the timeout off)"
        )


def _limit(value: float | None, name: str) -> float | None:
    if value is None or value == 0:
        return None
    if not value > 0:
        raise ValueError(f"{name} must be positive, 0 or None (off), not {value!r}")
    return float(value)
