"""The one small contract every model client keeps, and the pieces they share.

A provider turns a `ModelRequest` into an async stream of normalised `StreamEvent`s that ends
with `MessageCompleted`, or raises a `ModelError` subclass (see `stayer.errors`). Providers never
retry: the loop owns the one retry policy (SPEC §1.6), so policies never multiply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Literal, Protocol

from msgspec import Struct, field

from stayer.errors import BadResponse
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
    AssistantMessage,
    ContentBlock,
    Message,
    StopReason,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

PURPOSE_HEADER = "x-stayer-purpose"
"""Sent on every request so gateways and cost reports can tell the loop's own calls apart."""


Effort = Literal["low", "medium", "high", "xhigh", "max"]
"""How hard the model should work at its answer (`--effort`), in Claude Code's levels."""
EFFORTS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")

ThinkingDisplay = Literal["summarized", "omitted"]
THINKING_MIN_BUDGET = 1024
"""The smallest thinking budget the Messages API takes."""


class Thinking(Struct, frozen=True):
    """Extended thinking asked of the model: `enabled` with `budget_tokens` of it, `adaptive`
    (the model decides how much), or `disabled`; `display` is how the thinking comes back."""

    type: Literal["enabled", "adaptive", "disabled"]
    budget_tokens: int | None = None
    display: ThinkingDisplay | None = None


class ModelRequest(Struct, frozen=True):
    """Everything one model call needs; providers translate it to their wire format."""

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 32_000
    purpose: str = "main"
    temperature: float | None = None
    betas: tuple[str, ...] = ()
    """Anthropic beta features to turn on (the ``anthropic-beta`` header); others ignore it."""
    thinking: Thinking | None = None
    """Extended thinking (None: the model's default, nothing sent)."""
    effort: Effort | None = None
    """The effort level (None: the model's default, nothing sent)."""


class Provider(Protocol):
    """A model client: one streaming call per request."""

    @property
    def name(self) -> str:
        """Short provider name (``anthropic``, ``openai``, ``scripted``)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response; the last event is `MessageCompleted`. Raises `ModelError`."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def json_problem(raw: str) -> str | None:
    """Why `raw` is not JSON, in the parser's words with line and column; None if it parses."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        at = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at"
        return f"{exc.msg}{at} line {exc.lineno} column {exc.colno}"
    return None


def tool_use_from_json(tool_id: str, name: str, raw: str) -> ToolUseBlock:
    """The call whose streamed input is `raw`; text that is not a JSON object is kept in
    `unparsed` (with an empty `input`) for the executor to explain."""
    if not raw.strip():
        return ToolUseBlock(tool_id, name, {})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        return ToolUseBlock(tool_id, name, {}, unparsed=raw)
    return ToolUseBlock(tool_id, name, value)


class MessageAssembler(Struct):
    """Folds a stream of events into the `AssistantMessage` it describes.

    Providers feed every event they produce and emit `MessageCompleted(assembler.message())`
    last; the loop uses the same fold to keep what arrived before a stream broke.
    """

    message_id: str = ""
    model: str = ""
    stop_reason: StopReason | None = None
    usage: Usage = field(default_factory=Usage)
    blocks: dict[int, ContentBlock] = field(default_factory=dict[int, ContentBlock])

    def feed(self, event: StreamEvent) -> None:
        """Take one event into account."""
        match event:
            case MessageStarted(message_id=message_id, model=model, usage=usage):
                self.message_id, self.model, self.usage = message_id, model, usage
            case BlockCompleted(index=index, block=block):
                self.blocks[index] = block
            case MessageDelta(stop_reason=stop_reason, usage=usage):
                if stop_reason is not None:
                    self.stop_reason = stop_reason
                self.usage = usage
            case BlockStarted() | TextDelta() | ThinkingDelta() | ToolInputDelta():
                pass
            case MessageCompleted():
                raise BadResponse("stream continued after its message completed")

    def message(self) -> AssistantMessage:
        """The message as assembled so far (complete blocks only)."""
        return AssistantMessage(
            content=tuple(self.blocks[index] for index in sorted(self.blocks)),
            id=self.message_id,
            model=self.model,
            stop_reason=self.stop_reason,
            usage=self.usage,
        )
