"""A strict scripted model: a list of responses and faults, played back in order.

It streams each response the way a real provider does (deltas, then complete blocks), so the loop
cannot tell it from a live model. It is strict both ways: a call past the end of the script
raises `ScriptError`, and `assert_done()` raises if steps were left unused. Every request is
recorded so tests (and the demo) can check what the model was shown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from msgspec import Struct, field

from stayer.errors import ModelError, ScriptError
from stayer.events import (
    BlockCompleted,
    BlockStarted,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from stayer.messages import (
    ContentBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from stayer.providers.base import MessageAssembler, ModelRequest


class Reply(Struct, frozen=True):
    """One scripted response: its blocks, stop reason and usage.

    `stop_reason` defaults to ``tool_use`` when the reply holds a tool call, else ``end_turn``.
    """

    content: tuple[ContentBlock, ...]
    stop_reason: StopReason | None = None
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=100, output_tokens=20))
    after_block: Callable[[int], Awaitable[None]] | None = None
    """Awaited after each block has streamed (with its index): a test holds the rest of the
    response back until it has seen what it waits for; a benchmark spaces the blocks out."""


class Fault(Struct, frozen=True):
    """A failure: `error` is raised after the first `after_blocks` blocks have streamed."""

    error: ModelError
    after_blocks: int = 0


class Cut(Struct, frozen=True):
    """A stream that breaks after some output: `blocks` stream whole, then `open` (if any)
    starts and streams all its deltas but never ends, then `error` is raised."""

    error: ModelError
    blocks: tuple[ContentBlock, ...] = ()
    open: ContentBlock | None = None


Step = Reply | Fault | Cut | Callable[[ModelRequest], "Reply | Fault | Cut"]


def text(value: str, *, stop_reason: StopReason | None = None) -> Reply:
    """A reply holding only text."""
    return Reply((TextBlock(value),), stop_reason=stop_reason)


def tool_call(name: str, tool_input: dict[str, object], *, id: str = "", say: str = "") -> Reply:
    """A reply calling one tool, optionally after some text."""
    blocks: list[ContentBlock] = [TextBlock(say)] if say else []
    blocks.append(ToolUseBlock(id=id or f"toolu_{name.lower()}", name=name, input=tool_input))
    return Reply(tuple(blocks))


class ScriptedProvider:
    """Plays a script of replies and faults; see the module docstring."""

    def __init__(
        self,
        steps: Iterable[Step],
        *,
        model: str = "scripted",
        chunk_delay_s: float = 0.0,
    ) -> None:
        self._steps = list(steps)
        self._model = model
        self._chunk_delay_s = chunk_delay_s
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def remaining(self) -> int:
        """Steps not yet played."""
        return len(self._steps) - len(self.requests)

    def assert_done(self) -> None:
        """Raise `ScriptError` if any step was never played."""
        if self.remaining > 0:
            raise ScriptError(
                f"scripted model: {self.remaining} of {len(self._steps)} steps were never used"
            )

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream the next step of the script."""
        call_number = len(self.requests) + 1
        if call_number > len(self._steps):
            raise ScriptError(
                f"scripted model: unexpected call #{call_number}; "
                f"the script has only {len(self._steps)} steps"
            )
        self.requests.append(request)
        step = self._steps[call_number - 1]
        if not isinstance(step, Reply | Fault | Cut):
            step = step(request)
        if isinstance(step, Cut):
            for event in _cut_events(step, f"msg_scripted_{call_number}", self._model):
                yield event
            raise step.error
        async for event in self._play(step, call_number):
            yield event

    async def _play(self, step: Reply | Fault, call_number: int) -> AsyncIterator[StreamEvent]:
        reply = step if isinstance(step, Reply) else Reply(())
        assembler = MessageAssembler()
        events = _reply_events(reply, f"msg_scripted_{call_number}", self._model)
        blocks_done = 0
        for event in events:
            if isinstance(step, Fault) and blocks_done >= step.after_blocks:
                raise step.error
            assembler.feed(event)
            yield event
            if isinstance(event, BlockCompleted):
                blocks_done += 1
                if reply.after_block is not None:
                    await reply.after_block(event.index)
            if self._chunk_delay_s and isinstance(event, TextDelta | ThinkingDelta):
                await asyncio.sleep(self._chunk_delay_s)
        if isinstance(step, Fault):
            raise step.error
        yield MessageCompleted(assembler.message())


def _reply_events(reply: Reply, message_id: str, model: str) -> list[StreamEvent]:
    stop_reason = reply.stop_reason or (
        "tool_use" if any(isinstance(b, ToolUseBlock) for b in reply.content) else "end_turn"
    )
    events: list[StreamEvent] = [
        MessageStarted(message_id, model, Usage(input_tokens=reply.usage.input_tokens))
    ]
    for index, block in enumerate(reply.content):
        events.extend(_block_events(index, block))
    events.append(MessageDelta(stop_reason, reply.usage))
    return events


def _cut_events(cut: Cut, message_id: str, model: str) -> list[StreamEvent]:
    events: list[StreamEvent] = [MessageStarted(message_id, model, Usage(input_tokens=100))]
    for index, block in enumerate(cut.blocks):
        events.extend(_block_events(index, block))
    if cut.open is not None:
        events.extend(_block_events(len(cut.blocks), cut.open)[:-1])  # all but its end
    return events


def _block_events(index: int, block: ContentBlock) -> list[StreamEvent]:
    match block:
        case TextBlock(text=value):
            deltas: list[StreamEvent] = [TextDelta(index, piece) for piece in _pieces(value)]
            return [BlockStarted(index, "text"), *deltas, BlockCompleted(index, block)]
        case ThinkingBlock(thinking=value):
            thoughts: list[StreamEvent] = [ThinkingDelta(index, p) for p in _pieces(value)]
            return [BlockStarted(index, "thinking"), *thoughts, BlockCompleted(index, block)]
        case ToolUseBlock(id=id_, name=name, input=tool_input):
            raw = json.dumps(dict(tool_input))
            fragments: list[StreamEvent] = [
                ToolInputDelta(index, raw[i : i + 16]) for i in range(0, len(raw), 16)
            ]
            return [
                BlockStarted(index, "tool_use", tool_use_id=id_, name=name),
                *fragments,
                BlockCompleted(index, block),
            ]
        case _:
            return [BlockStarted(index, block.type), BlockCompleted(index, block)]


def _pieces(value: str) -> list[str]:
    """Split text into word-sized deltas, as a live model streams it."""
    pieces: list[str] = []
    start = 0
    for i, char in enumerate(value):
        if char == " " and i > start:
            pieces.append(value[start : i + 1])
            start = i + 1
    if start < len(value):
        pieces.append(value[start:])
    return pieces
