"""One rate limit for the whole batch: what every task's model calls wait on.

A `FleetLimiter` is shared by every session of a batch (on Ray, through one actor), keyed by
provider. A call waits in `acquire` until the provider's requests and tokens per minute allow
it; when the provider answers 429 with a retry-after, `slow_down` holds every worker's next
call until then, so the fleet backs off together instead of each worker hammering alone.
"""

from __future__ import annotations

from typing import Protocol


class FleetLimiter(Protocol):
    async def acquire(self, provider: str, tokens: int) -> None:
        """Wait until one more request of about `tokens` input tokens may go to `provider`."""

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        """A request estimated at `estimated` tokens used `used`: correct the count."""

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        """The provider asked to wait `retry_after_s`: nobody sends to it before then."""
