"""Running one response's tool calls as their blocks complete, while the model still streams.

A call starts the moment its block completes when nothing else is running, or when it and every
running call are concurrency-safe, up to `LoopParams.max_concurrent_tools` at once; otherwise it
waits its turn, and the calls after it wait behind it, in order (as Claude Code's streaming
executor does). A call whose input is invalid (an unknown tool, input that is not JSON or fails
the schema) is held until the response has ended: recovery may answer it otherwise (a call cut
by the output limit), and it has no effect to hurry.

What a started call does cannot be taken back, so an answer in which a call started is never
withdrawn and sent again: the loop keeps it up to its last started call (see `run`), and the
calls that never started never start. Every call ends with a `ToolCallFinished`, and the round
(`ToolRound`) answers every tool_use in order, however the calls finished (SPEC §1.5). One call's
failure never touches its siblings: each is its own task, and its error is its own result.

Events come out in the order they happen: the model's stream and the calls' permission
requests and answers, starts, progress and results interleaved while the response streams
(`alongside`), then the rest of the calls' (`finish`). A call says `ToolCallStarted` the
moment it is taken up (right after its block), as it always has; a permission request and its
answer come after that and before its result. While someone decides, the model's answer goes
on streaming, and the calls queued behind that one wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from enum import Enum
from typing import Any, TypeAlias

from msgspec import Struct, field

from stayer.events import (
    Event,
    PermissionDenial,
    PermissionRequested,
    PermissionResolved,
    ToolCallFinished,
    ToolCallStarted,
)
from stayer.messages import JSON, ContentBlock, TextBlock, ToolUseBlock, UserMessage
from stayer.tools.base import Tool

from .state import LoopParams
from .tool_exec import (
    ASKING_TEXT,
    INTERRUPTED_TEXT,
    NOT_RUN_TEXT,
    Prepared,
    ToolEvent,
    prepare,
    run_one,
    started_event,
    synthetic_result,
)


class ToolRound(Struct):
    """The calls of one response and what became of each."""

    tool_uses: list[ToolUseBlock] = field(default_factory=list[ToolUseBlock])
    started: set[str] = field(default_factory=set[str])
    asking: set[str] = field(default_factory=set[str])
    """Started calls waiting for an answer to their permission request."""
    results: dict[str, ToolCallFinished] = field(default_factory=dict[str, ToolCallFinished])
    failure: str | None = None

    def note(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self.started.add(event.tool_use_id)
        elif isinstance(event, PermissionRequested):
            self.asking.add(event.tool_use_id)
        elif isinstance(event, PermissionResolved):
            self.asking.discard(event.tool_use_id)
        elif isinstance(event, ToolCallFinished):
            self.results[event.tool_use_id] = event

    @property
    def settled(self) -> bool:
        """Whether every call has its result."""
        return all(block.id in self.results for block in self.tool_uses)

    def unanswered(self) -> list[ToolCallFinished]:
        """Close every call that has no result: it was interrupted, or never started."""
        closed = []
        for block in self.tool_uses:
            if block.id not in self.results:
                text = INTERRUPTED_TEXT if block.id in self.started else NOT_RUN_TEXT
                text = ASKING_TEXT if block.id in self.asking else text
                text = self.failure or text
                result = synthetic_result(block, text)
                closed.append(ToolCallFinished(block.id, block.name, "failed", result, 0.0))
        return closed

    def answer_without_running(self, answers: tuple[tuple[str, str], ...]) -> list[Event]:
        """Close these calls with these texts; they never start."""
        closed: list[Event] = []
        texts = dict(answers)
        for block in self.tool_uses:
            if block.id in texts and block.id not in self.results:
                result = synthetic_result(block, texts[block.id])
                closed.append(ToolCallFinished(block.id, block.name, "failed", result, 0.0))
                self.note(closed[-1])
        return closed

    def message(self, *, marker: str | None) -> UserMessage:
        """One user message answering every tool_use, in order (SPEC §1.5), then what the
        calls left for the model to read after them (a skill's instructions), then `marker`."""
        blocks: list[ContentBlock] = [self.results[b.id].result for b in self.tool_uses]
        blocks += [
            TextBlock(f.followup) for b in self.tool_uses if (f := self.results[b.id]).followup
        ]
        if marker is not None:
            blocks.append(TextBlock(marker))
        return UserMessage(tuple(blocks))

    def failure_signature(self) -> tuple[str, ...] | None:
        """What failed in this round, call by call (name, input or the text that did not parse,
        result), when every call failed; None when any call succeeded, which is progress."""
        finished = [self.results[b.id] for b in self.tool_uses]
        if not finished or any(not f.result.is_error for f in finished):
            return None
        return tuple(
            json.dumps(
                [b.name, b.input, b.unparsed, self.results[b.id].result.text], sort_keys=True
            )
            for b in self.tool_uses
        )

    def data(self) -> tuple[dict[str, JSON], ...]:
        return tuple(self.results[b.id].data for b in self.tool_uses)

    def denials(self) -> tuple[PermissionDenial, ...]:
        return tuple(
            PermissionDenial(b.name, b.id, dict(b.input))
            for b in self.tool_uses
            if self.results[b.id].status == "denied"
        )


class _Streamed(Struct, frozen=True):
    event: Event


class _Failed(Struct, frozen=True):
    error: Exception


class _Mark(Enum):
    END = "the stream ended"
    ABORTED = "the run was interrupted"


_Item: TypeAlias = _Streamed | _Failed | ToolEvent | _Mark


class Executor:
    """The calls of one response: started as their blocks complete, and recorded in `round`."""

    def __init__(self, params: LoopParams) -> None:
        self._params = params
        self.round = ToolRound()
        self._outbox: asyncio.Queue[_Item] = asyncio.Queue()
        self._waiting: list[Prepared] = []
        self._running: dict[str, tuple[asyncio.Task[None], bool]] = {}
        self._streaming = True
        self._paused = False
        """Set between the end of the stream and `finish`: recovery decides on the answer
        first, and a call starts only once it is on record (see `finish`)."""
        self._tools: dict[str, Tool[Any]] | None = None
        self.before_start: Callable[[str], None] | None = None
        """Called just before a call starts while the response still streams, so the answer
        so far can be put on record first (a call must be on record before it runs)."""

    @property
    def started_any(self) -> bool:
        """Whether any call of this answer has started: then it can no longer be withdrawn."""
        return bool(self.round.started)

    def add(self, block: ToolUseBlock) -> None:
        """A call whose block just completed: start it now if the rules allow."""
        if self._tools is None:
            self._tools = self._params.tools.tools()
        self.round.tool_uses.append(block)
        self._waiting.append(prepare(self._tools, block))
        self._schedule()

    def discard(self) -> None:
        """The answer was withdrawn before any of its calls started: none of them ever will."""
        assert not self.started_any, "an answer whose calls started is never withdrawn"
        self.round = ToolRound()
        self._waiting.clear()

    def keep_started(self) -> None:
        """The answer broke off after some calls started: the calls up to the last started one
        stay (those held as invalid get their error at the round); the rest never start."""
        calls = self.round.tool_uses
        last = max(i for i, block in enumerate(calls) if block.id in self.round.started)
        self.round.tool_uses = calls[: last + 1]
        kept = {block.id for block in self.round.tool_uses}
        self._waiting = [item for item in self._waiting if item.block.id in kept]

    async def alongside(
        self, source: AsyncIterator[Event], follow: Callable[[Event], None]
    ) -> AsyncGenerator[Event, None]:
        """The events of `source` (the model's stream) and of the calls, as they happen, until
        `source` ends; stops quietly when the run is aborted. `follow` sees each event of
        `source` in the source's own task, right after it is passed on: a block it completes
        is added before the stream reads on, so a call is counted as started (or not) by the
        time the stream can fail."""
        abort = self._params.abort
        if abort.aborted:
            await _close(source)
            return

        async def pump() -> None:
            try:
                async for event in source:
                    self._outbox.put_nowait(_Streamed(event))
                    follow(event)
                self._outbox.put_nowait(_Mark.END)
            except Exception as exc:
                self._outbox.put_nowait(_Failed(exc))
            finally:
                await _close(source)

        task = asyncio.create_task(pump())
        stop = abort.listen(lambda: self._outbox.put_nowait(_Mark.ABORTED))
        try:
            while True:
                item = await self._outbox.get()
                if isinstance(item, _Streamed):
                    yield item.event
                elif isinstance(item, _Failed):
                    raise item.error
                elif isinstance(item, _Mark):
                    return
                else:
                    yield item
        finally:
            stop()
            self._streaming = False
            self._paused = True
            if not task.done():
                task.cancel()
            await _settle(task)

    async def finish(self, cut: tuple[tuple[str, str], ...] = ()) -> AsyncIterator[Event]:
        """The response has ended: answer the `cut` calls without running them, run the rest
        (the held invalid ones too), and yield every event until each call has its result.
        Interrupted, the running calls are stopped and every call still open is closed."""
        self._streaming = self._paused = False
        for closed in self.round.answer_without_running(cut):
            yield closed
        cut_ids = {call_id for call_id, _ in cut}
        self._waiting = [item for item in self._waiting if item.block.id not in cut_ids]
        abort = self._params.abort
        stop = abort.listen(lambda: self._outbox.put_nowait(_Mark.ABORTED))
        try:
            self._schedule()
            while not abort.aborted and not (self.round.settled and self._outbox.empty()):
                item = await self._outbox.get()
                if isinstance(item, ToolEvent):
                    yield item
        except Exception as error:  # the executor itself broke: still answer every call
            self.round.failure = f"Error: the tool could not run ({type(error).__name__}: {error})"
        finally:
            stop()
        async for event in self.interrupt():
            yield event

    async def interrupt(self) -> AsyncIterator[Event]:
        """Stop the calls still running, pass on what they reported before they stopped, and
        close every call still open (interrupted, or never started)."""
        self._waiting.clear()
        await self.aclose()
        while not self._outbox.empty():
            item = self._outbox.get_nowait()
            if isinstance(item, ToolEvent):
                yield item
        for closed in self.round.unanswered():
            self.round.note(closed)
            yield closed

    async def aclose(self) -> None:
        """Stop every call still running (the run was interrupted, or its reader left)."""
        tasks = [task for task, _ in self._running.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            await _settle(task)

    def _schedule(self) -> None:
        """Start every waiting call the rules allow now, in order."""
        for item in list(self._waiting):
            if item.call is None:
                if self._streaming:
                    continue  # held for the end of the response: it runs nothing
                self._start(item, safe=True)
                continue
            safe = item.concurrency_safe
            if not self._may_start(safe):
                break
            self._start(item, safe=safe)

    def _may_start(self, safe: bool) -> bool:
        if len(self._running) >= self._params.max_concurrent_tools:
            return False
        if not self._running:
            return True
        return safe and all(running_safe for _, running_safe in self._running.values())

    def _start(self, item: Prepared, *, safe: bool) -> None:
        if self._streaming and self.before_start is not None:
            self.before_start(item.block.id)
        self._waiting.remove(item)
        self._emit(started_event(item))  # at once, so a reader sees it right after its block
        task = asyncio.create_task(run_one(self._params, item, self._emit))
        call_id = item.block.id
        self._running[call_id] = (task, safe)
        task.add_done_callback(lambda done: self._done(call_id, done))

    def _done(self, call_id: str, task: asyncio.Task[None]) -> None:
        self._running.pop(call_id, None)
        if call_id not in self.round.results and not task.cancelled():
            # `run_one` answers every call; should it ever end without doing so, the call is
            # still closed here, so the round settles rather than waiting forever
            error = task.exception()
            why = f"{type(error).__name__}: {error}" if error else "it ended without a result"
            block = next(b for b in self.round.tool_uses if b.id == call_id)
            result = synthetic_result(block, f"Error: the tool could not finish ({why})")
            self._emit(ToolCallFinished(call_id, block.name, "failed", result, 0.0))
        if not self._params.abort.aborted and not self._paused:
            self._schedule()

    def _emit(self, event: ToolEvent) -> None:
        self.round.note(event)
        self._outbox.put_nowait(event)


async def _settle(task: asyncio.Task[None]) -> None:
    """Wait for a task being cancelled to end, without swallowing a cancellation of our own."""
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:
        pass


async def _close(source: AsyncIterator[object]) -> None:
    aclose = getattr(source, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
