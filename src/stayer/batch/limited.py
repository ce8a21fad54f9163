"""A model client that keeps the batch's rate limit: every call waits its turn at the fleet's
limiter, and a refusal to go faster holds every worker, not just the one refused.

`LimitedProvider` wraps the shared client of one provider. Before each call it waits in
`FleetLimiter.acquire` with the request's estimated tokens; after the call it settles the
estimate with the usage the answer reported. When the provider refuses with 429 it asks the
limiter to hold the whole fleet (`slow_down`) for as long as the server said (retry-after), or,
when it said nothing, for the loop's own backoff, then re-raises: the loop retries after its
own wait as ever, and that retry, like every other worker's next call, waits at the limiter
until the pause is over. Waiting at the limiter is no failure, so it costs no task a retry.

While a call waits at the limiter it counts itself in the task's `Hold` (`HOLD`, a context
variable `run_task` sets before the session opens; asyncio tasks copy their context when made,
so every model call of the session sees it): a task whose time runs out while a call of its is
held knows the batch's rate limit, not its agent, kept it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar

from stayer.context.compact import estimate_tokens
from stayer.errors import ModelError, RateLimited
from stayer.events import MessageCompleted, StreamEvent
from stayer.loop.state import RetryPolicy
from stayer.mcp.tokens import CHARS_PER_TOKEN, spec_tokens
from stayer.messages import Usage
from stayer.providers.base import ModelRequest, Provider

from .limits import FleetLimiter


class Hold:
    """How many of one task's model calls wait at the fleet's limiter right now."""

    def __init__(self) -> None:
        self.waiting = 0

    @property
    def held(self) -> bool:
        return self.waiting > 0


HOLD: ContextVar[Hold | None] = ContextVar("stayer_batch_hold", default=None)
"""The running task's `Hold`; None outside a batch task."""


async def _acquire(limiter: FleetLimiter, provider: str, tokens: int) -> None:
    """`limiter.acquire`, counted in the task's `Hold` while it waits."""
    hold = HOLD.get()
    if hold is None:
        await limiter.acquire(provider, tokens)
        return
    hold.waiting += 1
    try:
        await limiter.acquire(provider, tokens)
    finally:
        hold.waiting -= 1


def limited_by(
    limiter: FleetLimiter, *, retry: RetryPolicy | None = None, count_tokens: bool = True
) -> Callable[[Provider], Provider]:
    """What `ProviderPool`'s `wrap` takes: each shared client put under `limiter`."""

    def wrap(provider: Provider) -> Provider:
        return LimitedProvider(provider, limiter, retry=retry, count_tokens=count_tokens)

    return wrap


def request_tokens(request: ModelRequest) -> int:
    """About how many input tokens `request` sends: its messages, system prompt and tools."""
    system = len(request.system) // CHARS_PER_TOKEN
    return estimate_tokens(request.messages) + system + spec_tokens(request.tools)


def used_tokens(usage: Usage) -> int:
    """What a call counts against a tokens-per-minute limit: everything it read and wrote."""
    return usage.total_input_tokens + usage.output_tokens


class LimitedProvider:
    """`inner`, with every call under `limiter`'s limit for `inner.name`."""

    def __init__(
        self,
        inner: Provider,
        limiter: FleetLimiter,
        *,
        retry: RetryPolicy | None = None,
        count_tokens: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.limiter = limiter
        self.retry = retry or RetryPolicy()
        """The loop's policy: its backoff is the pause when the server names none."""
        self.count_tokens = count_tokens
        """False when no tokens-per-minute limit applies: no estimate, no settling (on Ray,
        a round trip to the limiter's actor saved on every call)."""
        self.clock = clock
        self._streak = 0
        """Refusals in a row, fleet-wide, each counted once however many calls it refused."""
        self._paused_until = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The inner client's stream, once the limiter lets the call go."""
        estimated = request_tokens(request) if self.count_tokens else 0
        await _acquire(self.limiter, self.name, estimated)
        usage: Usage | None = None
        try:
            async for event in self.inner.stream(request):
                if isinstance(event, MessageCompleted):
                    usage = event.message.usage
                yield event
        except ModelError as error:
            if isinstance(error, RateLimited) or error.retry_after is not None:
                await self.limiter.slow_down(self.name, self._pause(error))
            raise
        self._streak = 0
        if usage is not None and self.count_tokens:
            await self.limiter.settle(self.name, estimated, used_tokens(usage))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _pause(self, error: ModelError) -> float:
        """How long the fleet holds off after `error`: the server's word, or the loop's
        backoff for the fleet's refusals in a row (as the loop itself would wait)."""
        now = self.clock()
        if now >= self._paused_until:  # a new refusal, not one more of those already paused for
            self._streak += 1
        pause = self.retry.delay(max(1, self._streak), error)
        self._paused_until = max(self._paused_until, now + pause)
        return pause
