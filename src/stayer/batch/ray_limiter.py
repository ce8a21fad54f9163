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

import time
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, Protocol

from .config import RateLimit
from .limits import LocalLimiter


class LimiterHost:
    """The state of the fleet's limiter, living in one Ray actor for the whole batch. It also
    keeps when each attempt of a task began on its worker (a task may wait its turn on the
    cluster long after the driver sent it), for the driver's watchdog."""

    def __init__(self, limits: Mapping[str, RateLimit]) -> None:
        self._limiter = LocalLimiter(limits)
        self._began: dict[str, float] = {}

    async def began(self, attempt: str) -> None:
        self._began[attempt] = time.monotonic()

    async def running_for(self, attempts: Iterable[str]) -> dict[str, float]:
        """How long each of `attempts` has run on its worker; one not begun is left out."""
        now = time.monotonic()
        return {key: now - self._began[key] for key in attempts if key in self._began}

    async def acquire(self, provider: str, tokens: int) -> None:
        await self._limiter.acquire(provider, tokens)

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        await self._limiter.settle(provider, estimated, used)

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        await self._limiter.slow_down(provider, retry_after_s)


class _RemoteMethod(Protocol):
    def remote(self, *args: object) -> Awaitable[Any]: ...


class LimiterHandle(Protocol):
    """What a worker sees of the actor: its methods, called with `.remote(...)`."""

    @property
    def acquire(self) -> _RemoteMethod: ...

    @property
    def settle(self) -> _RemoteMethod: ...

    @property
    def slow_down(self) -> _RemoteMethod: ...

    @property
    def began(self) -> _RemoteMethod: ...

    @property
    def running_for(self) -> _RemoteMethod: ...


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

    async def began(self, attempt: str) -> None:
        """Tell the driver's watchdog that `attempt` (`attempt_key`) runs from now."""
        await self._handle.began.remote(attempt)


def attempt_key(task_id: str, attempt: int) -> str:
    """How the actor names one attempt of one task."""
    return f"{attempt}:{task_id}"
