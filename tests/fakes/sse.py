"""Scripted model responses for the fake model server, in both wire formats.

Three kinds of response can be queued on a `FakeModelServer`:

* `Reply` — protocol-neutral content (`Text`, `Thinking`, `RedactedThinking`, `ToolCall`
  blocks) that the server renders as an Anthropic or an OpenAI stream depending on which
  endpoint was called (and, for OpenAI, on the `Gateway` the server poses as); the easiest way
  to script multi-turn loop and CLI sessions;
* `Stream` — exact SSE frames built with the `anthropic_*` / `openai_*` helpers, plus faults:
  stall before headers or before a frame, pause until the test resumes, cut the connection;
* `HttpError` — a status with a JSON or garbage body and headers such as retry-after.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from stayer.messages import JSON, Usage

WireProtocol: TypeAlias = Literal["anthropic", "openai"]
Gateway: TypeAlias = Literal["litellm"]
"""A proxy that speaks Chat Completions in front of Anthropic, with its own habits."""


DEFAULT_USAGE = Usage(input_tokens=12, output_tokens=7)
_ids = itertools.count(1)


# --- frames -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One server-sent event: an optional `event:` name and its data."""

    data: str
    event: str | None = None

    def encode(self) -> bytes:
        """The event as it goes on the wire, blank line included."""
        head = f"event: {self.event}\n" if self.event else ""
        body = "".join(f"data: {line}\n" for line in self.data.split("\n"))
        return (head + body + "\n").encode()

    @property
    def payload(self) -> JSON:
        """The decoded JSON data (tests use it to look inside a built stream)."""
        return json.loads(self.data)


@dataclass(frozen=True, slots=True)
class RawBytes:
    """Bytes sent exactly as given: for garbage and half-written events."""

    raw: bytes

    def encode(self) -> bytes:
        """The bytes themselves."""
        return self.raw


Chunk: TypeAlias = Frame | RawBytes


def garbage_frame(text: str = "{this is not json") -> RawBytes:
    """A data line whose payload is not JSON."""
    return RawBytes(f"data: {text}\n\n".encode())


# --- responses --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stream:
    """An SSE response and the faults to play while sending it.

    `stalls` maps a frame index to seconds slept before that frame; `pause_at` waits for
    `FakeModelServer.resume()` before that frame; `cut_after` drops the connection once that
    many frames are out (no end of body, as when a proxy dies).
    """

    frames: tuple[Chunk, ...]
    protocol: WireProtocol | None = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    content_type: str = "text/event-stream; charset=utf-8"
    stall_before_headers: float = 0.0
    stalls: Mapping[int, float] = field(default_factory=dict[int, float])
    pause_at: int | None = None
    cut_after: int | None = None
    event_delay: float | None = None

    def cut(self, after: int) -> Stream:
        """Drop the connection after `after` frames."""
        return replace(self, cut_after=after)

    def stalled(
        self, *, before_headers: float = 0.0, at: int | None = None, seconds: float = 0.0
    ) -> Stream:
        """Sleep before the headers, or `seconds` before frame `at`."""
        stalls = dict(self.stalls)
        if at is not None:
            stalls[at] = seconds
        before = before_headers or self.stall_before_headers
        return replace(self, stall_before_headers=before, stalls=stalls)

    def paused(self, at: int) -> Stream:
        """Hold frame `at` and everything after it until the test calls `server.resume()`."""
        return replace(self, pause_at=at)

    def with_frame(self, at: int, chunk: Chunk) -> Stream:
        """Insert `chunk` before frame `at`."""
        frames = list(self.frames)
        frames.insert(at, chunk)
        return replace(self, frames=tuple(frames))

    def truncated(self, keep: int) -> Stream:
        """Keep only the first `keep` frames, then end the body cleanly."""
        return replace(self, frames=self.frames[:keep])

    def index_of(self, needle: str) -> int:
        """Index of the first frame whose event name or data contains `needle`."""
        for index, chunk in enumerate(self.frames):
            text = chunk.encode().decode("utf-8", "replace")
            if needle in text:
                return index
        raise ValueError(f"no frame contains {needle!r}")


@dataclass(frozen=True, slots=True)
class HttpError:
    """A non-streaming answer: a status, a body and headers."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    content_type: str = "application/json"
    protocol: WireProtocol | None = None
    stall_before_headers: float = 0.0


@dataclass(frozen=True, slots=True)
class Text:
    """A text block of a `Reply`."""

    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """A thinking block of a `Reply` (OpenAI servers stream it as reasoning_content)."""

    thinking: str
    signature: str = "sig-fake"


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    """An encrypted thinking block of a `Reply` (plain OpenAI servers have no way to send it)."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of a `Reply`; `raw_input` sends those exact JSON characters instead."""

    id: str
    name: str
    input: Mapping[str, JSON] = field(default_factory=dict[str, JSON])
    raw_input: str | None = None

    @property
    def arguments(self) -> str:
        """The JSON text streamed for the input."""
        return self.raw_input if self.raw_input is not None else json.dumps(dict(self.input))


Block: TypeAlias = Text | Thinking | RedactedThinking | ToolCall


@dataclass(frozen=True, slots=True)
class Reply:
    """WireProtocol-neutral content; the server renders it for whichever endpoint was called.

    `stop_reason` uses Anthropic's names and defaults to tool_use when there are tool calls.
    """

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Usage = DEFAULT_USAGE
    message_id: str | None = None
    model: str | None = None

    def render(
        self, protocol: WireProtocol, *, request_model: str = "", gateway: Gateway | None = None
    ) -> Stream:
        """This reply as a stream of `protocol`, echoing the requested model by default.

        For OpenAI, thinking is sent as plain compatible servers send it, or as `gateway` does.
        """
        model = self.model or request_model or "fake-model"
        if protocol == "anthropic":
            return anthropic_stream(
                *self.blocks,
                stop_reason=self.stop_reason,
                usage=self.usage,
                message_id=self.message_id,
                model=model,
            )
        return openai_stream(
            *self.blocks,
            finish_reason=_OPENAI_FINISH.get(self.stop_reason or "", self.stop_reason),
            usage=self.usage,
            chunk_id=self.message_id,
            model=model,
            gateway=gateway,
        )


Response: TypeAlias = Stream | HttpError | Reply


def reply(
    *blocks: Block | str, stop_reason: str | None = None, usage: Usage = DEFAULT_USAGE
) -> Reply:
    """A `Reply`; plain strings become text blocks."""
    parts = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
    return Reply(parts, stop_reason=stop_reason, usage=usage)


def _default_stop(blocks: Sequence[Block]) -> str:
    return "tool_use" if any(isinstance(b, ToolCall) for b in blocks) else "end_turn"


def _words(text: str) -> list[str]:
    """Split into word-sized deltas so a stream carries several of them."""
    return re.findall(r"\S+\s*|\s+", text) or [text]


def _pieces(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _fresh_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):04d}"


# --- Anthropic --------------------------------------------------------------------------------


def anthropic_event(name: str, payload: Mapping[str, JSON]) -> Frame:
    """A named Anthropic event; its data repeats the name as `type`, as the API does."""
    return Frame(json.dumps({"type": name, **payload}), event=name)


def anthropic_message_start(
    *, message_id: str | None = None, model: str = "claude-fake", usage: Usage = DEFAULT_USAGE
) -> Frame:
    """message_start with the input side of `usage` (output starts at 1, as the API does)."""
    message: dict[str, JSON] = {
        "id": message_id or _fresh_id("msg_fake_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
        },
    }
    return anthropic_event("message_start", {"message": message})


def anthropic_block(index: int, block: Block) -> list[Frame]:
    """content_block_start, its deltas and content_block_stop for one block."""
    start: dict[str, JSON]
    if isinstance(block, Text):
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in _words(block.text)]
    elif isinstance(block, Thinking):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _words(block.thinking)]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    elif isinstance(block, RedactedThinking):
        start = {"type": "redacted_thinking", "data": block.data}
        deltas = []
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        # The API's first input fragment is usually empty; clients must cope.
        fragments = ["", *_pieces(block.arguments)]
        deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments]
    return [
        anthropic_event("content_block_start", {"index": index, "content_block": start}),
        *(anthropic_event("content_block_delta", {"index": index, "delta": d}) for d in deltas),
        anthropic_event("content_block_stop", {"index": index}),
    ]


def anthropic_message_delta(stop_reason: str | None, **usage: int) -> Frame:
    """message_delta carrying the stop reason and cumulative usage counts."""
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return anthropic_event("message_delta", {"delta": delta, "usage": usage})


def anthropic_message_stop() -> Frame:
    """message_stop: the message is complete."""
    return anthropic_event("message_stop", {})


def anthropic_ping() -> Frame:
    """A keep-alive ping."""
    return anthropic_event("ping", {})


def anthropic_error_event(
    error_type: str = "overloaded_error", message: str = "Overloaded"
) -> Frame:
    """An `event: error` as sent mid-stream after an HTTP 200."""
    return anthropic_event("error", {"error": {"type": error_type, "message": message}})


def anthropic_stream(
    *blocks: Block,
    stop_reason: str | None = None,
    usage: Usage = DEFAULT_USAGE,
    message_id: str | None = None,
    model: str = "claude-fake",
) -> Stream:
    """A complete Anthropic message stream with a ping after the first block starts."""
    frames: list[Chunk] = [anthropic_message_start(message_id=message_id, model=model, usage=usage)]
    for index, block in enumerate(blocks):
        frames.extend(anthropic_block(index, block))
        if index == 0:
            frames.insert(2, anthropic_ping())
    frames.append(
        anthropic_message_delta(
            stop_reason or _default_stop(blocks), output_tokens=usage.output_tokens
        )
    )
    frames.append(anthropic_message_stop())
    return Stream(tuple(frames), protocol="anthropic")


def anthropic_text(text: str, **options: Any) -> Stream:
    """A message of one text block."""
    return anthropic_stream(Text(text), **options)


def anthropic_tool_use(
    tool_id: str,
    name: str,
    tool_input: Mapping[str, JSON],
    *,
    text: str | None = None,
    stop_reason: str = "tool_use",
    **options: Any,
) -> Stream:
    """A message calling one tool, optionally after some text."""
    blocks: list[Block] = [Text(text)] if text else []
    blocks.append(ToolCall(tool_id, name, tool_input))
    return anthropic_stream(*blocks, stop_reason=stop_reason, **options)


def anthropic_error(
    status: int, error_type: str, message: str, *, headers: Mapping[str, str] | None = None
) -> HttpError:
    """An HTTP error with the API's JSON error body."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": _fresh_id("req_fake_"),
    }
    return HttpError(status, json.dumps(body).encode(), headers=headers or {}, protocol="anthropic")


# --- OpenAI Chat Completions ------------------------------------------------------------------

_OPENAI_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}


def openai_chunk(
    delta: Mapping[str, JSON] | None,
    *,
    finish_reason: str | None = None,
    chunk_id: str = "chatcmpl-fake",
    model: str = "gpt-fake",
    usage: Mapping[str, JSON] | None = None,
) -> Frame:
    """One chat.completion.chunk; `delta=None` gives the usage-only chunk with no choices."""
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}]
    )
    data = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": choices,
        "usage": dict(usage) if usage is not None else None,
    }
    return Frame(json.dumps(data))


def openai_usage(usage: Usage) -> dict[str, JSON]:
    """Our usage in OpenAI's shape: cached tokens are part of prompt_tokens."""
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def openai_done() -> Frame:
    """The `data: [DONE]` terminator."""
    return Frame("[DONE]")


def openai_error_chunk(
    message: str, *, error_type: str = "server_error", code: str | None = None
) -> Frame:
    """A chunk carrying an `error` object instead of choices."""
    return Frame(json.dumps({"error": {"message": message, "type": error_type, "code": code}}))


def litellm_thinking_delta(
    thinking: str = "", signature: str = "", *, data: str | None = None
) -> dict[str, JSON]:
    """One delta as LiteLLM streams Anthropic thinking: the piece of text twice over (as
    `reasoning_content` and in `thinking_blocks`), the signature alone in a last delta, and a
    redacted block (`data`) whole in one delta with no `reasoning_content`.
    """
    block: dict[str, JSON]
    if data is not None:
        block = {"type": "redacted_thinking", "data": data}
    else:
        block = {"type": "thinking", "thinking": thinking, "signature": signature}
    delta: dict[str, JSON] = {
        "content": "",
        "thinking_blocks": [block],
        "provider_specific_fields": {"thinking_blocks": [block]},
    }
    if data is None:
        delta["reasoning_content"] = thinking
    return delta


def _openai_thinking(block: Thinking | RedactedThinking, gateway: Gateway | None) -> list[JSON]:
    if isinstance(block, RedactedThinking):
        return [litellm_thinking_delta(data=block.data)] if gateway == "litellm" else []
    pieces = _words(block.thinking) if block.thinking else []
    if gateway != "litellm":
        return [{"reasoning_content": piece} for piece in pieces]
    return [
        *(litellm_thinking_delta(piece) for piece in pieces),
        litellm_thinking_delta(signature=block.signature),
    ]


def _openai_block(call_index: int, block: Block, gateway: Gateway | None) -> list[JSON]:
    if isinstance(block, Text):
        return [{"content": piece} for piece in _words(block.text)]
    if isinstance(block, Thinking | RedactedThinking):
        return _openai_thinking(block, gateway)
    first = {
        "index": call_index,
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": ""},
    }
    rest = [{"index": call_index, "function": {"arguments": p}} for p in _pieces(block.arguments)]
    return [{"tool_calls": [first]}, *({"tool_calls": [r]} for r in rest)]


def openai_stream(
    *blocks: Block,
    finish_reason: str | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    chunk_id: str | None = None,
    model: str = "gpt-fake",
    gateway: Gateway | None = None,
) -> Stream:
    """A complete chat stream: role chunk, deltas, finish, usage chunk, [DONE].

    Thinking goes as plain compatible servers send it (`reasoning_content`) or as `gateway` does.
    """
    ident = chunk_id or _fresh_id("chatcmpl-fake-")
    frames: list[Chunk] = [
        openai_chunk({"role": "assistant", "content": ""}, chunk_id=ident, model=model)
    ]
    calls = 0
    for block in blocks:
        for delta in _openai_block(calls, block, gateway):
            frames.append(openai_chunk(delta, chunk_id=ident, model=model))
        calls += isinstance(block, ToolCall)
    finish = finish_reason or _OPENAI_FINISH[_default_stop(blocks)]
    frames.append(openai_chunk({}, finish_reason=finish, chunk_id=ident, model=model))
    if usage is not None:
        frames.append(openai_chunk(None, chunk_id=ident, model=model, usage=openai_usage(usage)))
    frames.append(openai_done())
    return Stream(tuple(frames), protocol="openai")


def openai_text(text: str, **options: Any) -> Stream:
    """A chat stream of plain text."""
    return openai_stream(Text(text), **options)


def openai_tool_calls(*calls: ToolCall, text: str | None = None, **options: Any) -> Stream:
    """A chat stream calling one or more tools, optionally after some text."""
    blocks: list[Block] = [Text(text)] if text else []
    blocks.extend(calls)
    return openai_stream(*blocks, **options)


def openai_error(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> HttpError:
    """An HTTP error with OpenAI's JSON error body."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return HttpError(status, json.dumps(body).encode(), headers=headers or {}, protocol="openai")


def garbage_error(
    status: int, body: str = "<html><body><h1>502 Bad Gateway</h1></body></html>"
) -> HttpError:
    """An error whose body is not JSON, as proxies send."""
    return HttpError(status, body.encode(), content_type="text/html")
