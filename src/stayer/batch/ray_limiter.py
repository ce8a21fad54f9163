"""The batch's one rate limiter on Ray: an actor hosts it, each worker calls it through a proxy.

Every task of a Ray batch runs in a worker process of its own, possibly on another machine, so
no in-process limiter can be shared. `LimiterHost` is the class the driver turns into ONE Ray
actor: it holds the batch's `LocalLimiter` (the same one the local runner uses) and serves its
three async methods on the actor's event loop, so waiting callers do not block each other.
`ActorLimiter` is the `FleetLimiter` a worker wraps its model clients with: each call is a
call on that actor, awaited. A retry-after that one worker hears is set in the actor, and every
worker's next `acquire` waits for it: the fleet backs off together.

Nothing here imports Ray: the driver (`stayer.batch.ray`) makes the actor from `LimiterHost`,
and a worker receives its handle, whose `method.remote(...)` calls are awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Protocol

from .config import RateLimit
from .limits import LocalLimiter


class LimiterHost:
    """The state of the fleet's limiter, living in one Ray actor for the whole batch."""

    def __init__(self, limits: Mapping[str, RateLimit]) -> None:
        self._limiter = LocalLimiter(limits)

    async def acquire(self, provider: str, tokens: int) -> None:
        await self._limiter.acquire(provider, tokens)

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        await self._limiter.settle(provider, estimated, used)

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        await self._limiter.slow_down(provider, retry_after_s)


class _RemoteMethod(Protocol):
    def remote(self, *args: object) -> Awaitable[None]: ...


class LimiterHandle(Protocol):
    """What a worker sees of the actor: its methods, called with `.remote(...)`."""

    @property
    def acquire(self) -> _RemoteMethod: ...

    @property
    def settle(self) -> _RemoteMethod: ...

    @property
    def slow_down(self) -> _RemoteMethod: ...


class ActorLimiter:
    """A `FleetLimiter` that asks the batch's limiter actor; made on each worker."""

    def __init__(self, handle: LimiterHandle) -> None:
        self._handle = handle

    async def acquire(self, provider: str, tokens: int) -> None:
        await self._handle.acquire.remote(provider, tokens)

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        await self._handle.settle.remote(provider, estimated, used)

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        await self._handle.slow_down.remote(provider, retry_after_s)
