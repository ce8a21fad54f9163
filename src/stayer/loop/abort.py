"""Interrupting a run: one signal the caller sets, and a relay that stops when it fires.

A run is interrupted by `AbortSignal.abort()`, never by cancelling the consumer: an async
generator cannot yield after it is closed, and the loop owes its caller a final `Finished` event
and a conversation in which every tool_use has its result (SPEC §1.7).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class AbortSignal:
    """Set once to interrupt the run it was given to."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        """Whether the run was interrupted."""
        return self.reason is not None

    def abort(self, reason: str = "interrupted by user") -> None:
        """Interrupt the run; safe to call more than once, and from a signal handler."""
        if self.reason is not None:
            return
        self.reason = reason
        for listener in list(self._listeners):
            listener()

    def listen(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` on abort; returns a function that stops listening."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    async def sleep(self, seconds: float) -> None:
        """Sleep, waking early if the run is interrupted."""
        if self.aborted or seconds <= 0:
            return
        woken = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        stop = self.listen(wake)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken, seconds)
        finally:
            stop()


async def until_aborted(step: Awaitable[T], abort: AbortSignal) -> T | None:
    """`step`'s result, or None once `abort` fires first (the step is then cancelled: a hook
    that hangs must not hold an interrupted run for its whole timeout)."""
    if abort.aborted:
        if isinstance(step, Coroutine):
            step.close()
        return None
    task = asyncio.ensure_future(step)
    woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not woken.done():
            woken.set_result(None)

    stop = abort.listen(wake)
    try:
        either: list[asyncio.Future[Any]] = [task, woken]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return None


class _Item(Generic[T]):
    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


_END = object()
_ABORTED = object()


async def relay(source: AsyncIterator[T], abort: AbortSignal) -> AsyncIterator[T]:
    """Yield `source`'s items until it ends or `abort` fires; then stop quietly.

    The source runs in its own task, so an abort interrupts it at whatever it awaits (a socket
    read, a subprocess) and closes it. Exceptions from the source are re-raised here.
    """
    if abort.aborted:
        await _close(source)
        return
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for item in source:
                queue.put_nowait(_Item(item))
            queue.put_nowait(_END)
        except Exception as exc:
            queue.put_nowait(exc)
        finally:
            await _close(source)

    task = asyncio.create_task(pump())
    stop = abort.listen(lambda: queue.put_nowait(_ABORTED))
    try:
        while True:
            item = await queue.get()
            if isinstance(item, _Item):
                yield item.value
            elif item is _END or item is _ABORTED:
                return
            elif isinstance(item, Exception):
                raise item
    finally:
        stop()
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _close(source: AsyncIterator[object]) -> None:
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
