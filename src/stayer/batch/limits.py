"""One rate limit for the whole batch: what every task's model calls wait on.

A `FleetLimiter` is shared by every session of a batch (on Ray, through one actor), keyed by
provider. A call waits in `acquire` until the provider's requests and tokens per minute allow
it; when the provider answers 429 with a retry-after, `slow_down` holds every worker's next
call until then, so the fleet backs off together instead of each worker hammering alone.

`LocalLimiter` is the one implementation: a token bucket per provider and per measure
(requests, tokens), refilled continuously at the limit's rate, holding at most what the limit
allows in `burst_s` seconds (one request at least). So **in any span of T seconds a provider is
sent at most `limit × (T + burst_s) / 60`** requests (and tokens), never a minute's worth at
once: a provider that enforces its limit over a second or a minute is not overrun either way.
A request estimated above the bucket's size goes alone once the bucket is full and leaves it
in debt, which the next requests wait out. Tokens are estimated before the call and corrected
by `settle` with what the call really used (input, cached input and output alike).

Waiters of one provider are served in arrival order; only the first of them sleeps (until the
moment its turn allows, or until `settle` gives tokens back), the others wait their turn on a
lock, so nothing polls. A waiter cancelled while it waits takes nothing and holds nothing.
State is plain attributes and every method is async, so one Ray actor can host the limiter.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from typing import Protocol

from .config import RateLimit

ANY_PROVIDER = "*"
"""The key of `rate_limits` that applies to a provider without an entry of its own."""

DEFAULT_BURST_S = 1.0
"""How many seconds' worth of the limit may go at once (a provider that says "60 a minute"
may mean "1 a second")."""


_CLOSE_ENOUGH = 1e-9
"""A shortfall this small is rounding left by the refill, not a reason to sleep again."""


class FleetLimiter(Protocol):
    async def acquire(self, provider: str, tokens: int) -> None:
        """Wait until one more request of about `tokens` input tokens may go to `provider`."""

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        """A request estimated at `estimated` tokens used `used`: correct the count."""

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        """The provider asked to wait `retry_after_s`: nobody sends to it before then."""


class Clock(Protocol):
    """Where the limiter reads the time and waits (tests give a clock they move by hand)."""

    def now(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock."""
        ...


class MonotonicClock:
    """The real clock: `time.monotonic` and `asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Bucket:
    """A token bucket: `level` of `capacity`, refilled at `rate` a second; below 0 is debt."""

    def __init__(self, per_minute: float, burst_s: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, cost: float) -> float:
        """Seconds until `cost` may be taken (after `refill`); 0 when it may be now."""
        missing = min(cost, self.capacity) - self.level
        return missing / self.rate if missing > _CLOSE_ENOUGH else 0.0

    def take(self, amount: float) -> None:
        """Take `amount` (a negative amount gives back), never above `capacity`."""
        self.level = min(self.capacity, self.level - amount)


class Lane:
    """One provider's state: its buckets, the moment before which nobody sends, its queue."""

    def __init__(self, limit: RateLimit | None, burst_s: float, now: float) -> None:
        rpm = limit.requests_per_minute if limit else None
        tpm = limit.tokens_per_minute if limit else None
        self.requests = Bucket(rpm, burst_s, now) if rpm is not None else None
        self.tokens = Bucket(tpm, burst_s, now) if tpm is not None else None
        self.not_before = now
        self.turn = asyncio.Lock()
        """Held by the waiter being served; the others queue on it in arrival order."""
        self.changed = asyncio.Event()
        """Set when tokens come back, so the first waiter looks again before its sleep ends."""

    def wait(self, tokens: int, now: float) -> float:
        """Seconds until a request of `tokens` may go; 0 when it may go now."""
        waits = [self.not_before - now]
        if self.requests is not None:
            self.requests.refill(now)
            waits.append(self.requests.wait(1))
        if self.tokens is not None:
            self.tokens.refill(now)
            waits.append(self.tokens.wait(tokens))
        return max(0.0, *waits)

    def take(self, tokens: int) -> None:
        if self.requests is not None:
            self.requests.take(1)
        if self.tokens is not None:
            self.tokens.take(tokens)


def limit_problem(provider: str, limit: RateLimit) -> str | None:
    """Why `limit` cannot be used, in one line; None when it can."""
    for name, value in (
        ("requests per minute", limit.requests_per_minute),
        ("tokens per minute", limit.tokens_per_minute),
    ):
        if value is not None and not value > 0:
            return f"the rate limit of {provider}: {name} must be a number above 0, not {value}"
    return None


class LocalLimiter:
    """The batch's limiter in this process: per provider, `limits[name]` or `limits["*"]`."""

    def __init__(
        self,
        limits: Mapping[str, RateLimit],
        *,
        burst_s: float = DEFAULT_BURST_S,
        clock: Clock | None = None,
    ) -> None:
        for provider, limit in limits.items():
            problem = limit_problem(provider, limit)
            if problem is not None:
                raise ValueError(problem)
        if not burst_s > 0:
            raise ValueError(f"burst_s must be above 0, not {burst_s}")
        self.limits = dict(limits)
        self.burst_s = burst_s
        self.clock: Clock = clock or MonotonicClock()
        self.lanes: dict[str, Lane] = {}

    def lane(self, provider: str) -> Lane:
        lane = self.lanes.get(provider)
        if lane is None:
            limit = self.limits.get(provider, self.limits.get(ANY_PROVIDER))
            lane = self.lanes[provider] = Lane(limit, self.burst_s, self.clock.now())
        return lane

    async def acquire(self, provider: str, tokens: int) -> None:
        """Wait, in arrival order, until one more request of about `tokens` tokens may go."""
        lane = self.lane(provider)
        async with lane.turn:
            while (wait := lane.wait(tokens, self.clock.now())) > 0:
                await self._pause(lane, wait)
            lane.take(tokens)

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        """Count `used` tokens for a request that was counted as `estimated`."""
        lane = self.lane(provider)
        if lane.tokens is None or used == estimated:
            return
        lane.tokens.refill(self.clock.now())
        lane.tokens.take(used - estimated)
        if used < estimated:
            lane.changed.set()

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        """Nobody sends to `provider` for `retry_after_s` seconds from now (a wait that is no
        finite number of seconds is ignored: the caller caps what a server asks)."""
        if not math.isfinite(retry_after_s) or retry_after_s <= 0:
            return
        lane = self.lane(provider)
        lane.not_before = max(lane.not_before, self.clock.now() + retry_after_s)

    async def _pause(self, lane: Lane, seconds: float) -> None:
        """Sleep `seconds`, or less if tokens come back meanwhile."""
        lane.changed.clear()
        sleeping = asyncio.ensure_future(self.clock.sleep(seconds))
        woken = asyncio.ensure_future(lane.changed.wait())
        try:
            await asyncio.wait((sleeping, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            woken.cancel()
