"""The HTTP clients one provider's calls go through: as many small ones as its streams need.

httpx's connection pool (httpcore's) looks over every connection it holds, and every request
waiting for one, each time a request starts or ends, asking each idle connection's socket
whether it was closed (a system call, and anyio building a dict of the socket's attributes,
some 30 us a connection). One pool carrying a batch's hundreds of sessions spends its time
there: 128 streams at once through a pool without limits cost 15 ms of CPU a call and seconds
before the first byte (`benchmarks/client_load.py`). With httpx's default limits the pool
keeps only 20 connections alive, so at 32 streams most calls pay a new connection, and past
100 they queue. So a provider keeps a few small clients, each carrying at most
`STREAMS_PER_CLIENT` streams at once, and starts a call on the first with room: a session
making one call at a time uses the first client only, as it always did; a batch's calls spread
over as many clients as
they fill, each keeping its connections alive and with next to nothing to scan. A client the
caller gave is used alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TypeVar

import httpx

STREAMS_PER_CLIENT = 1
"""Streams one client carries at once; a call beyond them goes to another client. One: at 128
streams at once a call then costs 1.15 ms of CPU, against 1.23 ms with 4 a client and 2.0 ms
with 16 (`benchmarks/client_load.py`; at 8 streams 1.14, 1.18 and 1.36 ms)."""

T = TypeVar("T")


class _Held:
    __slots__ = ("client", "streams")

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.streams = 0


class Clients:
    """The clients of one provider connection: another is made when all are full."""

    def __init__(
        self,
        make: Callable[[], httpx.AsyncClient],
        given: httpx.AsyncClient | None = None,
        *,
        most: int | None = None,
    ) -> None:
        """`make` makes a client for `STREAMS_PER_CLIENT` streams; with `most`, no more clients
        are made than that many streams need, and a stream beyond waits on the least busy."""
        self._make = make
        self._given = given
        self._most = most
        self._held: list[_Held] = [] if given is None else [_Held(given)]

    @property
    def count(self) -> int:
        """How many clients there are now."""
        return len(self._held)

    async def stream(
        self,
        start: Callable[[httpx.AsyncClient], AsyncGenerator[T, None]],
        *,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> AsyncGenerator[T, None]:
        """`start(client)`'s items, on a client with room, counted against it until the
        stream is done with (read to its end, failed, or closed). `settle` is awaited before
        a client is chosen: streams still being read to their end free their room and their
        connection first, so the call goes out on one of those rather than a new one."""
        if settle is not None:
            await settle()
        held = self._room()
        held.streams += 1
        try:
            async with contextlib.aclosing(start(held.client)) as items:
                async for item in items:
                    yield item
        finally:
            held.streams -= 1

    def _room(self) -> _Held:
        for held in self._held:
            if held.streams < STREAMS_PER_CLIENT or self._given is not None:
                return held
        if self._most is not None and len(self._held) * STREAMS_PER_CLIENT >= self._most:
            return min(self._held, key=lambda held: held.streams)
        held = _Held(self._make())
        self._held.append(held)
        return held

    async def aclose(self) -> None:
        """Close the clients made here (never a given one)."""
        made, self._held = self._held, []
        if self._given is not None:
            self._held = [_Held(self._given)]
            return
        for held in made:
            await held.client.aclose()
