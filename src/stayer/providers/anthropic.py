"""The Anthropic Messages API client: our request → streaming POST → normalised stream events.

Speaks the wire format directly over httpx and httpx-sse; the official SDK is far too slow to
import for a tool that should answer in well under a second. Owns the request body (prompt
caching breakpoints included), the decoding of the named SSE events and their order, and the
mapping of every failure onto `stayer.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import cast

import httpx
from msgspec import Struct, field

from stayer.errors import ConnectionLost
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
    JSON,
    STOP_REASONS,
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    UserMessage,
    block_to_wire,
    usage_from_wire,
    without_blank_text,
)
from stayer.providers._encoded import EncodedHistory, Memo, dumps, json_array, json_object
from stayer.providers._http import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_READ_TIMEOUT_S,
    ApiError,
    Connection,
    Endpoint,
    decode_error_body,
    decode_event_data,
    not_the_protocol,
    stream_error,
)
from stayer.providers._watchdog import AUTO, DEFAULT_IDLE_TIMEOUT_S, FirstByte, resolved
from stayer.providers.base import (
    PURPOSE_HEADER,
    THINKING_MIN_BUDGET,
    MessageAssembler,
    ModelRequest,
    Thinking,
    tool_use_from_json,
)
from stayer.providers.endpoints import ANTHROPIC_BASE_URL, ANTHROPIC_VERSION

DEFAULT_BASE_URL = ANTHROPIC_BASE_URL
_EPHEMERAL: dict[str, JSON] = {"type": "ephemeral"}
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_BLOCK_KINDS = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})


class AnthropicProvider:
    """A `Provider` for the Anthropic Messages API and gateways that speak it."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        first_byte_timeout_s: FirstByte = AUTO,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        client: httpx.AsyncClient | None = None,
        max_connections: int | None = None,
        prompt_caching: PromptCaching | None = None,
    ) -> None:
        """`read_timeout_s` bounds each silence on the socket; the stream's first-byte and idle
        timeouts (see `_watchdog`) bound waits that keep-alives would stretch; None turns one off,
        and `AUTO` scales the first-byte limit with the prompt and the server.
        `prompt_caching` says where cache breakpoints go (everywhere, by default).
        """
        self._encoder = RequestEncoder(prompt_caching)
        self._api_key = api_key
        self._auth_token = auth_token
        self._endpoint = Endpoint(
            provider="anthropic",
            base_url=base_url.rstrip("/"),
            key_hint="ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
            url_hint="ANTHROPIC_BASE_URL",
            read_timeout_s=read_timeout_s,
            connect_timeout_s=connect_timeout_s,
            first_byte_timeout_s=resolved(first_byte_timeout_s, base_url, "anthropic"),
            idle_timeout_s=idle_timeout_s,
            max_connections=max_connections,
        )
        self._connection = Connection(self._endpoint, client)

    @property
    def name(self) -> str:
        """Always ``anthropic``."""
        return "anthropic"

    def _headers(self, purpose: str, betas: tuple[str, ...]) -> dict[str, str]:
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
            PURPOSE_HEADER: purpose,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        if self._auth_token:
            headers["authorization"] = f"Bearer {self._auth_token}"
        if betas:
            headers["anthropic-beta"] = ",".join(dict.fromkeys(betas))
        return headers

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response, yielding each event as soon as it is decoded."""
        decoder = _Decoder(self._endpoint)
        watchdog, events = self._connection.events(
            "/v1/messages",
            headers=self._headers(request.purpose, request.betas),
            body=self._encoder.encode(request),
        )
        done = False
        try:
            async for sse in events:
                if sse.event == "ping" or not sse.data.strip():
                    continue  # keep-alives: the watchdog's clock runs on
                watchdog.progress()
                data = decode_event_data(sse.data, self._endpoint)
                # Unnamed events arrive as "message"; their payload still names its type.
                name = sse.event if sse.event != "message" else str(data.get("type", ""))
                for event in decoder.feed(name, data):
                    yield event
                if decoder.done:
                    done = True
                    self._connection.drain_later(events)  # act on message_stop, not the body
                    return
        finally:
            if not done:
                await events.aclose()
        if not decoder.started:
            # HTML, JSON without a type, another API's chunks: not a message that broke off.
            raise not_the_protocol(self._endpoint, "no message_start in the stream")
        raise ConnectionLost(
            "the anthropic stream ended before the message was complete; try again"
        )

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        await self._connection.aclose()


# --- request ----------------------------------------------------------------------------------


class PromptCaching(Struct, frozen=True):
    """Whether requests carry cache breakpoints: on for every model unless turned off, or off
    only for the model families named (``haiku``, ``sonnet``, ``opus``), as Claude Code's
    DISABLE_PROMPT_CACHING and DISABLE_PROMPT_CACHING_<FAMILY> do."""

    enabled: bool = True
    off_for: frozenset[str] = frozenset()

    def applies_to(self, model: str) -> bool:
        """Whether a request for `model` gets breakpoints."""
        name = model.lower()
        return self.enabled and not any(family in name for family in self.off_for)


def cacheable(block: ContentBlock) -> bool:
    """Whether a breakpoint may sit on `block` (the API refuses one on empty text)."""
    if isinstance(block, TextBlock):
        return bool(block.text.strip())
    return isinstance(block, ToolResultBlock | ImageBlock)


def message_breakpoints(messages: tuple[Message, ...]) -> dict[int, int]:
    """Where the conversation's breakpoints go, as {message index: block index}: on the last
    block that can hold one of the newest user message, which moves on every turn, and of the
    user message before it, where the previous request had its moving breakpoint.

    Keeping the previous one in place costs the fourth breakpoint (with the tools' and the
    system prompt's) and guarantees the cache read: the API looks back only about 20 blocks from
    a breakpoint for an earlier entry, and a turn of many parallel tool calls adds more.
    """
    found: dict[int, int] = {}
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, UserMessage):
            continue
        block = _last_cacheable(message.content)
        if block is not None:
            found[index] = block
            if len(found) == 2:
                break
    return found


def _last_cacheable(blocks: tuple[ContentBlock, ...]) -> int | None:
    for index in range(len(blocks) - 1, -1, -1):
        if cacheable(blocks[index]):
            return index
    return None


def _sendable(message: Message) -> tuple[ContentBlock, ...]:
    """The API refuses blank text blocks, which a model can stream; they carry nothing."""
    if not isinstance(message, AssistantMessage):
        return message.content
    kept = without_blank_text(message).content
    return kept or message.content


def _encode_message(message: Message, breakpoint_at: int | None) -> bytes:
    """The message's JSON, with a breakpoint on block `breakpoint_at` (user messages only, whose
    blocks all go out)."""
    blocks = [block_to_wire(b) for b in _sendable(message)]
    if breakpoint_at is not None:
        blocks[breakpoint_at]["cache_control"] = _EPHEMERAL
    return dumps({"role": message.role, "content": blocks})


def _encode_tools(tools: tuple[ToolSpec, ...], caching: bool) -> bytes:
    wire: list[dict[str, JSON]] = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]
    if caching:
        wire[-1]["cache_control"] = _EPHEMERAL
    return dumps(wire)


def _encode_system(system: str, caching: bool) -> bytes:
    block: dict[str, JSON] = {"type": "text", "text": system}
    if caching:
        block["cache_control"] = _EPHEMERAL
    return dumps([block])


def _encode_thinking(thinking: Thinking, max_tokens: int) -> bytes:
    """The `thinking` field. A budget is kept to what the API takes (at least 1024 tokens, and
    fewer than the call's output limit); `enabled` without one thinks as much as the limit
    allows."""
    body: dict[str, JSON] = {"type": thinking.type}
    if thinking.type == "enabled":
        budget = min(thinking.budget_tokens or max_tokens, max_tokens - 1)
        body["budget_tokens"] = max(THINKING_MIN_BUDGET, budget)
    if thinking.display is not None and thinking.type != "disabled":
        body["display"] = thinking.display
    return dumps(body)


class RequestEncoder:
    """Builds the JSON body of each streaming Messages call, encoding what was sent before
    only once (see `_encoded`).

    With caching on, breakpoints go on the last tool, the system prompt and the last block of
    the two newest user messages (`message_breakpoints`): four, the API's limit. The body lists
    `tools`, `system` and `messages` in the order the API caches them, so the prefix a cache
    entry covers is also a prefix of the bytes, unchanged from one request to the next.
    """

    def __init__(self, caching: PromptCaching | None = None) -> None:
        self.caching = caching or PromptCaching()
        self._messages = EncodedHistory()
        self._tools = Memo()
        self._system = Memo()

    def encode(self, request: ModelRequest) -> bytes:
        """The body of one request."""
        caching = self.caching.applies_to(request.model)
        fields: list[tuple[str, bytes | list[bytes]]] = [
            ("model", dumps(request.model)),
            ("max_tokens", dumps(request.max_tokens)),
            ("stream", b"true"),
        ]
        if request.tools:
            fields.append(("tools", self._encode_tools(request.tools, caching)))
        if request.system:
            fields.append(("system", self._encode_system(request.system, caching)))
        fields.append(("messages", self._encode_messages(request.messages, caching)))
        if request.temperature is not None:
            fields.append(("temperature", dumps(request.temperature)))
        if request.thinking is not None:
            fields.append(("thinking", _encode_thinking(request.thinking, request.max_tokens)))
        if request.effort is not None:
            fields.append(("output_config", dumps({"effort": request.effort})))
        return json_object(fields)

    def _encode_tools(self, tools: tuple[ToolSpec, ...], caching: bool) -> bytes:
        return self._tools.get((tools, caching), lambda: _encode_tools(tools, caching))

    def _encode_system(self, system: str, caching: bool) -> bytes:
        return self._system.get((system, caching), lambda: _encode_system(system, caching))

    def _encode_messages(self, messages: tuple[Message, ...], caching: bool) -> list[bytes]:
        marks = message_breakpoints(messages) if caching else {}
        fragments = self._messages.fragments(
            messages, lambda index, _: marks.get(index), _encode_message, marks=marks
        )
        return json_array(fragments)


# --- response ---------------------------------------------------------------------------------


class _OpenBlock(Struct):
    kind: str
    parts: list[str] = field(default_factory=list[str])
    tool_id: str = ""
    name: str = ""
    signature: str = ""
    start_input: JSON = None
    data: str = ""

    def complete(self) -> ContentBlock:
        joined = "".join(self.parts)
        match self.kind:
            case "text":
                return TextBlock(joined)
            case "thinking":
                return ThinkingBlock(joined, self.signature)
            case "redacted_thinking":
                return RedactedThinkingBlock(self.data)
            case _:
                # Some gateways send the whole input at block start and no deltas.
                if not self.parts and isinstance(self.start_input, dict) and self.start_input:
                    return ToolUseBlock(self.tool_id, self.name, dict(self.start_input))
                return tool_use_from_json(self.tool_id, self.name, joined)


def _stop_reason(value: JSON) -> StopReason | None:
    return cast(StopReason, value) if value in STOP_REASONS else None


def _index(data: Mapping[str, JSON]) -> int:
    index = data["index"]
    if not isinstance(index, int):
        raise TypeError("index is not an integer")
    return index


class _OutOfOrder(Exception):
    """An event the stream's order does not allow; `_Decoder.feed` reports it."""


class _Decoder:
    """Folds the named SSE events into stream events, refusing any that break the order."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.assembler = MessageAssembler()
        self.started = False
        self.done = False
        self.open: dict[int, _OpenBlock] = {}
        self.seen: set[int] = set()
        self.ignored: set[int] = set()
        self.usage: dict[str, JSON] = {}
        self.handlers: dict[str, Callable[[dict[str, JSON]], list[StreamEvent]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
        }

    def feed(self, name: str, data: dict[str, JSON]) -> list[StreamEvent]:
        """The stream events one SSE event stands for; raises `ModelError` on a broken stream."""
        if name == "error":
            error = decode_error_body(data) or ApiError(message="no details given")
            raise stream_error(error, self.endpoint)
        handler = self.handlers.get(name)
        if handler is None:  # ping, and event types newer than this client
            return []
        if not self.started and name != "message_start":
            raise not_the_protocol(self.endpoint, f"{name} before message_start")
        try:
            events = handler(data)
        except _OutOfOrder as exc:
            raise not_the_protocol(self.endpoint, str(exc)) from None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise not_the_protocol(self.endpoint, f"a malformed {name} event: {exc!r}") from None
        for event in events:
            if not isinstance(event, MessageCompleted):
                self.assembler.feed(event)
        return events

    def _message_start(self, data: dict[str, JSON]) -> list[StreamEvent]:
        if self.started:
            raise _OutOfOrder("a second message_start in one stream")
        self.started = True
        message = data["message"]
        usage = message.get("usage") or {}
        self.usage = {key: usage.get(key) for key in _USAGE_KEYS}
        return [
            MessageStarted(
                message_id=str(message.get("id", "")),
                model=str(message.get("model", "")),
                usage=usage_from_wire(self.usage),
            )
        ]

    def _block_start(self, data: dict[str, JSON]) -> list[StreamEvent]:
        index = _index(data)
        if index in self.seen:
            raise _OutOfOrder(f"content block {index} started twice")
        self.seen.add(index)
        raw = data["content_block"]
        kind = raw["type"]
        if kind not in _BLOCK_KINDS:  # server tool blocks and newer kinds: not ours to run
            self.ignored.add(index)
            return []
        block = _OpenBlock(
            kind=kind,
            tool_id=str(raw.get("id", "")),
            name=str(raw.get("name", "")),
            signature=str(raw.get("signature") or ""),
            start_input=raw.get("input"),
            data=str(raw.get("data") or ""),
        )
        self.open[index] = block
        events: list[StreamEvent] = [BlockStarted(index, kind, block.tool_id, block.name)]
        initial = raw.get("text") if kind == "text" else raw.get("thinking")
        if isinstance(initial, str) and initial:
            block.parts.append(initial)
            delta = TextDelta(index, initial) if kind == "text" else ThinkingDelta(index, initial)
            events.append(delta)
        return events

    def _block_delta(self, data: dict[str, JSON]) -> list[StreamEvent]:
        index = _index(data)
        if index in self.ignored:
            return []
        block = self._open_block(index, "content_block_delta")
        delta = data["delta"]
        kind = delta["type"]
        expected = {
            "text_delta": "text",
            "input_json_delta": "tool_use",
            "thinking_delta": "thinking",
            "signature_delta": "thinking",
        }.get(kind)
        if expected is None:  # citations and newer delta kinds
            return []
        if block.kind != expected:
            raise _OutOfOrder(f"a {kind} for {block.kind} block {index}")
        match kind:
            case "text_delta":
                block.parts.append(str(delta["text"]))
                return [TextDelta(index, block.parts[-1])]
            case "thinking_delta":
                block.parts.append(str(delta["thinking"]))
                return [ThinkingDelta(index, block.parts[-1])]
            case "signature_delta":
                block.signature += str(delta["signature"])
                return []
            case _:
                fragment = str(delta["partial_json"])
                block.parts.append(fragment)
                return [ToolInputDelta(index, fragment)] if fragment else []

    def _block_stop(self, data: dict[str, JSON]) -> list[StreamEvent]:
        index = _index(data)
        if index in self.ignored:
            return []
        block = self._open_block(index, "content_block_stop")
        del self.open[index]
        return [BlockCompleted(index, block.complete())]

    def _open_block(self, index: int, event: str) -> _OpenBlock:
        block = self.open.get(index)
        if block is None:
            raise _OutOfOrder(f"{event} for content block {index}, which is not open")
        return block

    def _require_closed(self, event: str) -> None:
        if self.open:
            raise _OutOfOrder(f"{event} while block {min(self.open)} was open")

    def _message_delta(self, data: dict[str, JSON]) -> list[StreamEvent]:
        self._require_closed("message_delta")
        delta = data.get("delta") or {}
        # Usage here is cumulative: each count present replaces the one we hold.
        for key, value in (data.get("usage") or {}).items():
            if key in _USAGE_KEYS and value is not None:
                self.usage[key] = value
        return [MessageDelta(_stop_reason(delta.get("stop_reason")), usage_from_wire(self.usage))]

    def _message_stop(self, data: dict[str, JSON]) -> list[StreamEvent]:
        self._require_closed("message_stop")
        self.done = True
        return [MessageCompleted(self.assembler.message())]
