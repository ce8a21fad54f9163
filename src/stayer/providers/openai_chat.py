"""The OpenAI-compatible Chat Completions client (OpenAI, Ollama, vLLM, llama.cpp and others).

Owns the translation of our Anthropic-shaped conversation into chat messages (tool results
become `tool` messages, images a following user message, thinking goes back only to a gateway
that streamed it as `thinking_blocks`) and the streaming call itself; `openai_chunks` decodes
the data-only SSE chunks into our stream events, and `_http` maps errors as it does for the
Anthropic client. Each message is encoded once and its bytes reused in every later request
(`_encoded`); OpenAI caches prompt prefixes on its own, with no breakpoints to place.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx

from stayer.events import StreamEvent
from stayer.messages import (
    JSON,
    AssistantMessage,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers._encoded import (
    EncodedHistory,
    Memo,
    dumps,
    json_array,
    json_object,
    separated,
)
from stayer.providers._http import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_READ_TIMEOUT_S,
    Connection,
    Endpoint,
    decode_event_data,
)
from stayer.providers._watchdog import (
    AUTO,
    DEFAULT_IDLE_TIMEOUT_S,
    FirstByte,
    host_of,
    resolved,
)
from stayer.providers.base import PURPOSE_HEADER, Effort, ModelRequest
from stayer.providers.endpoints import OPENAI_BASE_URL
from stayer.providers.openai_chunks import ChunkDecoder

DEFAULT_BASE_URL = OPENAI_BASE_URL

REASONING_EFFORT: dict[Effort, str] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
"""`--effort` as `reasoning_effort`: OpenAI's highest level that every reasoning model takes
is `high`, so Claude Code's two above it ask for that."""


class OpenAIChatProvider:
    """A `Provider` for any server that speaks OpenAI's streaming Chat Completions."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        first_byte_timeout_s: FirstByte = AUTO,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        client: httpx.AsyncClient | None = None,
        max_connections: int | None = None,
    ) -> None:
        """`read_timeout_s` bounds each silence on the socket; the stream's first-byte and idle
        timeouts (see `_watchdog`) bound waits that keep-alives would stretch; None turns one off,
        and `AUTO` scales the first-byte limit with the prompt and the server.
        """
        self._api_key = api_key
        self._base_url = base_url.rstrip("/")
        # OpenAI itself renamed the limit; compatible servers mostly know only the old name.
        self._limit_key = (
            "max_completion_tokens" if host_of(self._base_url) == "api.openai.com" else "max_tokens"
        )
        self._endpoint = Endpoint(
            provider="openai",
            base_url=self._base_url,
            key_hint="OPENAI_API_KEY",
            url_hint="OPENAI_BASE_URL",
            read_timeout_s=read_timeout_s,
            connect_timeout_s=connect_timeout_s,
            first_byte_timeout_s=resolved(first_byte_timeout_s, self._base_url, "openai"),
            idle_timeout_s=idle_timeout_s,
            max_connections=max_connections,
        )
        self._connection = Connection(self._endpoint, client)
        self._messages = EncodedHistory()
        self._system = Memo()
        self._tools = Memo()
        # Thinking goes back as `thinking_blocks` only once this server has streamed some: plain
        # OpenAI refuses the field, and a conversation resumed from an Anthropic transcript
        # carries signed thinking too, so the blocks alone cannot say where they may go. The
        # price: a session resumed through a gateway sends its old thinking from the gateway's
        # first thinking answer on. Which blocks go is `_thinking_blocks`' rule.
        self._send_thinking = False

    @property
    def name(self) -> str:
        """Always ``openai``."""
        return "openai"

    def _headers(self, purpose: str) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            PURPOSE_HEADER: purpose,
        }
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def encode_request(self, request: ModelRequest) -> bytes:
        """The JSON body of one streaming chat completion; what was sent before is not encoded
        again (see `_encoded`)."""
        fields: list[tuple[str, bytes | list[bytes]]] = [
            ("model", dumps(request.model)),
            ("messages", self._encode_messages(request)),
            ("stream", b"true"),
            ("stream_options", b'{"include_usage":true}'),
            (self._limit_key, dumps(request.max_tokens)),
        ]
        if request.tools:
            tools = request.tools
            fields.append(("tools", self._tools.get(tools, lambda: _encode_tools(tools))))
        if request.temperature is not None:
            fields.append(("temperature", dumps(request.temperature)))
        if request.effort is not None:
            fields.append(("reasoning_effort", dumps(REASONING_EFFORT[request.effort])))
        return json_object(fields)

    def _encode_messages(self, request: ModelRequest) -> list[bytes]:
        """Our conversation as chat messages, the system prompt first."""
        system, thinking = request.system, self._send_thinking
        head = [self._system.get(system, lambda: _encode_system(system))] if system else []
        messages = self._messages.fragments(
            request.messages,
            lambda _, message: thinking and isinstance(message, AssistantMessage),
            _encode_chat,
            context=thinking,
        )
        return json_array([*head, *messages])

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response, yielding each event as soon as it is decoded."""
        decoder = ChunkDecoder(self._endpoint)
        saw_done = False
        watchdog, events = self._connection.events(
            "/chat/completions",
            headers=self._headers(request.purpose),
            body=self.encode_request(request),
        )
        try:
            async for sse in events:
                if not sse.data.strip():
                    continue
                if sse.data.strip() == "[DONE]":
                    saw_done = True
                    self._connection.drain_later(events)  # act on [DONE], not the body's end
                    break
                produced = decoder.feed(decode_event_data(sse.data, self._endpoint))
                if produced:  # a chunk that carries nothing is a keep-alive
                    watchdog.progress()
                for event in produced:
                    yield event
                self._send_thinking = self._send_thinking or decoder.saw_thinking_blocks
        finally:
            if not saw_done:
                await events.aclose()
        for event in decoder.finish(saw_done=saw_done):
            yield event

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        await self._connection.aclose()


# --- request ----------------------------------------------------------------------------------


def _encode_chat(message: Message, thinking_blocks: bool) -> bytes:
    """One message of ours as chat messages (none, one or several), encoded and
    comma-separated; with `thinking_blocks`, an assistant turn carries the thinking a gateway
    hands back to Anthropic."""
    if isinstance(message, AssistantMessage):
        return dumps(_assistant_message(message, thinking_blocks=thinking_blocks))
    return b",".join(dumps(chat) for chat in _user_messages(message))


def _encode_system(system: str) -> bytes:
    """The system prompt as the first chat message, `separated` like the others."""
    return separated(dumps({"role": "system", "content": system}))


def _encode_tools(tools: tuple[ToolSpec, ...]) -> bytes:
    return dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                },
            }
            for t in tools
        ]
    )


def _tool_arguments(block: ToolUseBlock) -> str:
    # Never `block.unparsed`: the protocol wants a JSON object here, and a gateway that
    # translates to Anthropic parses it and refuses the whole request when it is not one. What
    # the model wrote, and why the call did not run, reaches the model in the call's error result.
    return json.dumps(dict(block.input), ensure_ascii=False)


def _thinking_blocks(message: AssistantMessage) -> list[JSON]:
    """The turn's thinking in LiteLLM's `thinking_blocks` shape, for the model behind it.

    Only blocks Anthropic can check go: signed thinking and redacted thinking. Unsigned
    reasoning (`reasoning_content` from DeepSeek, vLLM, Ollama) was never meant to come back.
    """
    blocks: list[JSON] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock) and block.signature:
            blocks.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        elif isinstance(block, RedactedThinkingBlock):
            blocks.append({"type": "redacted_thinking", "data": block.data})
    return blocks


def _assistant_message(message: AssistantMessage, *, thinking_blocks: bool) -> dict[str, JSON]:
    wire: dict[str, JSON] = {"role": "assistant", "content": message.text}
    thinking = _thinking_blocks(message) if thinking_blocks else []
    if thinking:
        wire["thinking_blocks"] = thinking
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": _tool_arguments(block)},
        }
        for block in message.tool_uses
    ]
    if calls:
        wire["tool_calls"] = calls
        if not message.text:
            wire["content"] = None
    return wire


def _image_part(block: ImageBlock) -> dict[str, JSON]:
    url = f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user_messages(message: UserMessage) -> list[JSON]:
    """Tool messages must come straight after the assistant turn; everything else follows."""
    tool_messages: list[JSON] = []
    parts: list[dict[str, JSON]] = []
    for block in message.content:
        match block:
            case ToolResultBlock(tool_use_id=tool_use_id, content=content):
                tool_messages.append(
                    {"role": "tool", "tool_call_id": tool_use_id, "content": block.text}
                )
                parts.extend(_image_part(p) for p in content if isinstance(p, ImageBlock))
            case TextBlock(text=text):
                parts.append({"type": "text", "text": text})
            case ImageBlock():
                parts.append(_image_part(block))
            case _:
                pass  # thinking and tool_use never belong to the user
    if not parts:
        return tool_messages
    if all(p["type"] == "text" for p in parts):
        # Plain strings are what the simplest compatible servers understand.
        user: JSON = {"role": "user", "content": "".join(str(p["text"]) for p in parts)}
    else:
        user = {"role": "user", "content": parts}
    return [*tool_messages, user]
