"""The OpenAI-compatible Chat Completions client (OpenAI, Ollama, vLLM, llama.cpp and others).

Owns the translation of our Anthropic-shaped conversation into chat messages (tool results
become `tool` messages, images a following user message, thinking goes back only to a gateway
that streamed it as `thinking_blocks`), the decoding of data-only SSE chunks into our stream
events, and the error mapping, shared with the Anthropic client through `_http`. Chat chunks
carry no block structure, so this module assigns block indexes itself: one per run of text or
reasoning, one per tool call, one per redacted thinking block.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field

import httpx

from stayer.errors import BadResponse, ConnectionLost
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
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers._http import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_READ_TIMEOUT_S,
    ApiError,
    Connection,
    Endpoint,
    decode_error_body,
    decode_event_data,
    drain,
    stream_error,
)
from stayer.providers.base import (
    PURPOSE_HEADER,
    UNPARSED_INPUT_KEY,
    MessageAssembler,
    ModelRequest,
    json_problem,
    parse_tool_input,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


class OpenAIChatProvider:
    """A `Provider` for any server that speaks OpenAI's streaming Chat Completions."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url.rstrip("/")
        # OpenAI itself renamed the limit; compatible servers mostly know only the old name.
        self._limit_key = (
            "max_completion_tokens" if _host(self._base_url) == "api.openai.com" else "max_tokens"
        )
        self._endpoint = Endpoint(
            provider="openai",
            base_url=self._base_url,
            key_hint="OPENAI_API_KEY",
            url_hint="OPENAI_BASE_URL",
            read_timeout_s=read_timeout_s,
            connect_timeout_s=connect_timeout_s,
        )
        self._connection = Connection(self._endpoint, client)
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

    def request_body(self, request: ModelRequest) -> dict[str, JSON]:
        """The JSON body of one streaming chat completion."""
        body: dict[str, JSON] = {
            "model": request.model,
            "messages": chat_messages(request, thinking_blocks=self._send_thinking),
            "stream": True,
            "stream_options": {"include_usage": True},
            self._limit_key: request.max_tokens,
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": dict(t.input_schema),
                    },
                }
                for t in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response, yielding each event as soon as it is decoded."""
        decoder = _Decoder(self._endpoint)
        saw_done = False
        events = self._connection.events(
            "/chat/completions",
            headers=self._headers(request.purpose),
            body=self.request_body(request),
        )
        async with aclosing(events):
            async for sse in events:
                if not sse.data.strip():
                    continue
                if sse.data.strip() == "[DONE]":
                    saw_done = True
                    await drain(events)
                    break
                for event in decoder.feed(decode_event_data(sse.data, self._endpoint)):
                    yield event
                self._send_thinking = self._send_thinking or decoder.saw_thinking_blocks
        for event in decoder.finish(saw_done=saw_done):
            yield event

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        await self._connection.aclose()


def _host(url: str) -> str:
    try:
        return httpx.URL(url).host
    except httpx.InvalidURL:
        return ""


# --- request ----------------------------------------------------------------------------------


def chat_messages(request: ModelRequest, *, thinking_blocks: bool = False) -> list[JSON]:
    """Our conversation as chat messages, the system prompt first.

    With `thinking_blocks`, assistant turns carry the thinking a gateway hands back to Anthropic.
    """
    out: list[JSON] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            out.append(_assistant_message(message, thinking_blocks=thinking_blocks))
        else:
            out.extend(_user_messages(message))
    return out


def _tool_arguments(block: ToolUseBlock) -> str:
    unparsed = block.input.get(UNPARSED_INPUT_KEY)
    if isinstance(unparsed, str) and len(block.input) == 1:
        # The protocol wants a JSON object here, and a gateway that translates to Anthropic
        # parses it and refuses the whole request when it is not one. What the model wrote,
        # and why the call did not run, reaches the model in the call's error result.
        return "{}"
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


# --- response ---------------------------------------------------------------------------------


@dataclass
class _ToolCall:
    index: int
    id: str
    name: str
    arguments: list[str] = field(default_factory=list[str])

    def complete(self) -> ToolUseBlock:
        return ToolUseBlock(self.id, self.name, parse_tool_input("".join(self.arguments)))


@dataclass
class _TextRun:
    index: int
    kind: str
    parts: list[str] = field(default_factory=list[str])
    signature: str = ""

    def complete(self) -> ContentBlock:
        joined = "".join(self.parts)
        return TextBlock(joined) if self.kind == "text" else ThinkingBlock(joined, self.signature)


def _usage(data: Mapping[str, JSON]) -> Usage:
    details = data.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    prompt = int(data.get("prompt_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(data.get("completion_tokens") or 0),
        cache_read_input_tokens=cached,
    )


class _Decoder:
    """Folds chat chunks into stream events, giving each text run and tool call a block."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.assembler = MessageAssembler()
        self.started = False
        self.finished = False
        self.next_index = 0
        self.run: _TextRun | None = None
        self.calls: dict[int, _ToolCall] = {}
        self.stop_reason: StopReason | None = None
        self.usage = Usage()
        self.saw_thinking_blocks = False

    def feed(self, chunk: dict[str, JSON]) -> list[StreamEvent]:
        """The stream events one chunk stands for; raises `ModelError` on an error chunk."""
        if "error" in chunk:
            error = decode_error_body(chunk) or ApiError(message="no details given")
            raise stream_error(error, self.endpoint)
        try:
            events = self._chunk(chunk)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BadResponse(f"openai sent a malformed chunk ({exc!r})") from None
        return self._fold(events)

    def finish(self, *, saw_done: bool) -> list[StreamEvent]:
        """The closing events once the stream ends; a stream cut short raises."""
        if not self.started:
            raise BadResponse("openai ended the stream without sending a message; try again")
        events: list[StreamEvent] = []
        if not self.finished:
            if not saw_done:
                raise ConnectionLost(
                    "the openai stream ended before the message was complete; try again"
                )
            events = [*self._close_all(), MessageDelta(None, self.usage)]
        return [*self._fold(events), MessageCompleted(self.assembler.message())]

    def _fold(self, events: list[StreamEvent]) -> list[StreamEvent]:
        for event in events:
            self.assembler.feed(event)
        return events

    def _chunk(self, chunk: dict[str, JSON]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self.started:
            if not chunk.get("choices") and not chunk.get("usage"):
                return events  # Azure opens with a content-filter report that names nothing
            self.started = True
            message_id, model = str(chunk.get("id") or ""), str(chunk.get("model") or "")
            events.append(MessageStarted(message_id, model, Usage()))
        # Usage first: servers that send it with finish_reason should report it there.
        usage = chunk.get("usage")
        usage_after_finish = isinstance(usage, dict) and self.finished
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0 or self.finished:
                continue  # we ask for one choice; anything after finish_reason is noise
            events.extend(self._delta(choice.get("delta") or {}))
            reason = choice.get("finish_reason")
            if reason:
                events.extend(self._finish(str(reason)))
        if usage_after_finish:
            events.append(MessageDelta(self.stop_reason, self.usage))
        return events

    def _delta(self, delta: Mapping[str, JSON]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        thinking_blocks = delta.get("thinking_blocks")
        if isinstance(thinking_blocks, list) and thinking_blocks:
            # LiteLLM sends each piece of Anthropic thinking twice, here and as
            # reasoning_content; only this copy carries signatures and redacted blocks.
            self.saw_thinking_blocks = True
            for block in thinking_blocks:
                events.extend(self._thinking_block(block))
        else:
            # vLLM and DeepSeek call it reasoning_content, Ollama and newer vLLM reasoning.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events.extend(self._text("thinking", reasoning))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                events.extend(self._text("text", text))
        for fragment in delta.get("tool_calls") or []:
            events.extend(self._tool_fragment(fragment))
        return events

    def _new_index(self) -> int:
        self.next_index += 1
        return self.next_index - 1

    def _run_for(self, kind: str, events: list[StreamEvent]) -> _TextRun:
        """The open run of `kind`, started (and the other kind closed) if need be."""
        if self.run is None or self.run.kind != kind:
            events.extend(self._close_run())
            self.run = _TextRun(self._new_index(), kind)
            events.append(BlockStarted(self.run.index, kind))
        return self.run

    def _text(self, kind: str, text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        run = self._run_for(kind, events)
        run.parts.append(text)
        index = run.index
        events.append(TextDelta(index, text) if kind == "text" else ThinkingDelta(index, text))
        return events

    def _thinking_block(self, block: Mapping[str, JSON]) -> list[StreamEvent]:
        """One entry of LiteLLM's `thinking_blocks`.

        It is a piece of thinking, the signature that ends the block, or a whole redacted block.
        """
        events: list[StreamEvent] = []
        if block.get("type") == "redacted_thinking":
            events.extend(self._close_run())
            index = self._new_index()
            redacted = RedactedThinkingBlock(str(block.get("data") or ""))
            return [
                *events,
                BlockStarted(index, "redacted_thinking"),
                BlockCompleted(index, redacted),
            ]
        if block.get("type") != "thinking":
            return events
        text = str(block.get("thinking") or "")
        signature = str(block.get("signature") or "")
        open_run = self.run if self.run is not None and self.run.kind == "thinking" else None
        # Some versions repeat the whole text beside the signature; it is not new thinking.
        repeated = bool(signature) and open_run is not None and text == "".join(open_run.parts)
        if text and not repeated:
            events.extend(self._text("thinking", text))
        if signature:  # the block is complete; a signature alone is a block shown as omitted
            self._run_for("thinking", events).signature = signature
            events.extend(self._close_run())
        return events

    def _close_run(self) -> list[StreamEvent]:
        if self.run is None:
            return []
        run, self.run = self.run, None
        return [BlockCompleted(run.index, run.complete())]

    def _call_key(self, fragment: Mapping[str, JSON]) -> int:
        key = fragment.get("index")
        if isinstance(key, int):
            return key
        # Some servers leave out the index: a new id starts a call, anything else continues one.
        call_id = fragment.get("id")
        for existing_key, call in self.calls.items():
            if call_id and call.id == call_id:
                return existing_key
        if call_id or not self.calls:
            return len(self.calls)
        return max(self.calls)

    def _tool_fragment(self, fragment: Mapping[str, JSON]) -> list[StreamEvent]:
        key = self._call_key(fragment)
        function = fragment.get("function") or {}
        events: list[StreamEvent] = []
        call = self.calls.get(key)
        if call is None:
            events.extend(self._close_run())
            # Some local servers send no id; the history still needs one to pair the result.
            call_id = str(fragment.get("id") or f"call_{uuid.uuid4().hex[:24]}")
            if any(other.id == call_id for other in self.calls.values()):
                # Some servers number every call alike; results are paired by id, so keep apart.
                call_id = f"{call_id}_{len(self.calls)}"
            call = _ToolCall(self._new_index(), call_id, str(function.get("name") or ""))
            self.calls[key] = call
            events.append(BlockStarted(call.index, "tool_use", call.id, call.name))
        elif not call.name and function.get("name"):
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and arguments:
            call.arguments.append(arguments)
            events.append(ToolInputDelta(call.index, arguments))
        return events

    def _close_all(self) -> list[StreamEvent]:
        events = self._close_run()
        for call in sorted(self.calls.values(), key=lambda c: c.index):
            events.append(BlockCompleted(call.index, call.complete()))
        self.calls.clear()
        return sorted(events, key=lambda e: e.index if isinstance(e, BlockCompleted) else 0)

    def _finish(self, reason: str) -> list[StreamEvent]:
        self.finished = True
        stop = _FINISH_REASONS.get(reason)
        if stop == "end_turn" and self.calls:
            self._refuse_cut_arguments()
            stop = "tool_use"  # some local servers say "stop" after calling tools
        self.stop_reason = stop
        return [*self._close_all(), MessageDelta(stop, self.usage)]

    def _refuse_cut_arguments(self) -> None:
        """A "stop" that leaves a call's arguments unparseable is a cut stream, not an answer.

        LiteLLM reports a stream that broke inside the arguments as finished with "stop", so
        the loop retries it as it would a stream that lost its end. A server that says
        "tool_calls" (or "length") means what it sent; bad JSON there goes to the executor,
        which tells the model.
        """
        for call in sorted(self.calls.values(), key=lambda c: c.index):
            raw = "".join(call.arguments)
            problem = json_problem(raw) if raw.strip() else None
            if problem is not None:
                raise ConnectionLost(
                    f"the {self.endpoint.provider} stream stopped inside the arguments of its "
                    f"{call.name or 'tool'} call ({problem}), so the response was cut short; "
                    "try again"
                )
