"""Decoding OpenAI Chat Completions stream chunks into our stream events.

Chat chunks carry no block structure, so the decoder assigns block indexes itself: one per run
of text or reasoning, one per tool call, one per redacted thinking block. It knows the dialects
of compatible servers: reasoning as `reasoning_content` or `reasoning` (vLLM, DeepSeek, Ollama),
Anthropic thinking as LiteLLM's `thinking_blocks`, tool calls without index or id, Azure's
opening report, "stop" after tool calls, usage beside the finish reason or after it (either way
a message gets one `MessageDelta`, as from Anthropic).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping

from msgspec import Struct, field

from stayer.errors import ConnectionLost, ToolInputCut
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
    ContentBlock,
    RedactedThinkingBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from stayer.providers._http import (
    ApiError,
    Endpoint,
    decode_error_body,
    not_the_protocol,
    stream_error,
)
from stayer.providers.base import MessageAssembler, json_problem, tool_use_from_json

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}

_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class _ToolCall(Struct):
    index: int
    id: str
    name: str
    arguments: list[str] = field(default_factory=list[str])

    def complete(self) -> ToolUseBlock:
        return tool_use_from_json(self.id, self.name, "".join(self.arguments))


class _TextRun(Struct):
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


def _is_usage(value: JSON) -> bool:
    """Whether `value` is a Chat Completions usage object (not, say, Anthropic's)."""
    return isinstance(value, dict) and any(key in value for key in _USAGE_KEYS)


class ChunkDecoder:
    """Folds chat chunks into stream events, giving each text run, tool call and redacted
    thinking block a block index of its own.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.assembler = MessageAssembler()
        self.started = False
        self.finished = False
        self.reported = False  # the one MessageDelta has gone out
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
            raise not_the_protocol(self.endpoint, f"a malformed chunk: {exc!r}") from None
        return self._fold(events)

    def finish(self, *, saw_done: bool) -> list[StreamEvent]:
        """The closing events once the stream ends; a stream cut short raises."""
        if not self.started:
            # HTML, JSON that names no choices, another API's events: not a message cut short.
            raise not_the_protocol(self.endpoint, "no chat completion chunk in the stream")
        events: list[StreamEvent] = []
        if not self.finished:
            if not saw_done:
                raise ConnectionLost(
                    "the openai stream ended before the message was complete; try again"
                )
            self.finished = True
            events = self._close_all()
        events.extend(self._report())
        return [*self._fold(events), MessageCompleted(self.assembler.message())]

    def _report(self) -> list[StreamEvent]:
        """The message's one MessageDelta, once: stop reason and final usage together."""
        if self.reported:
            return []
        self.reported = True
        return [MessageDelta(self.stop_reason, self.usage)]

    def _fold(self, events: list[StreamEvent]) -> list[StreamEvent]:
        for event in events:
            self.assembler.feed(event)
        return events

    def _chunk(self, chunk: dict[str, JSON]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self.started:
            if not chunk.get("choices") and not _is_usage(chunk.get("usage")):
                # Azure opens with a content-filter report that names nothing; Anthropic's
                # events (usage without prompt_tokens) begin no chat message either.
                return events
            self.started = True
            message_id, model = str(chunk.get("id") or ""), str(chunk.get("model") or "")
            events.append(MessageStarted(message_id, model, Usage()))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0 or self.finished:
                continue  # we ask for one choice; anything after finish_reason is noise
            events.extend(self._delta(choice.get("delta") or {}))
            reason = choice.get("finish_reason")
            if reason:
                events.extend(self._finish(str(reason)))
        # Usage comes in a chunk after finish_reason, or beside it, or never: the delta waits
        # for it (or the stream's end), so one MessageDelta carries both, as Anthropic sends.
        if self.finished and isinstance(usage, dict):
            events.extend(self._report())
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
        return self._close_all()

    def _refuse_cut_arguments(self) -> None:
        """A "stop" that leaves a call's arguments broken off is a cut stream, not an answer.

        LiteLLM reports a stream that broke inside the arguments as finished with "stop", so
        the loop retries it as it would a stream that lost its end. But some local servers say
        "stop" after every tool call, so arguments that are whole but invalid JSON (a trailing
        comma) are the model's, as under "tool_calls" or "length": they go to the executor,
        which tells the model.
        """
        for call in sorted(self.calls.values(), key=lambda c: c.index):
            raw = "".join(call.arguments)
            if raw.strip() and _looks_cut(raw):
                raise ToolInputCut(
                    f"the {self.endpoint.provider} stream stopped inside the arguments of its "
                    f"{call.name or 'tool'} call ({json_problem(raw)}), so the response was cut "
                    "short; try again"
                )


def _looks_cut(raw: str) -> bool:
    """Whether JSON text that does not parse reads as the start of a value that broke off:
    the parser ran out of text, a string is unterminated, or a bracket is still open."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        # An unterminated string is reported at its opening quote, not at the end.
        return (
            exc.pos >= len(raw.rstrip())
            or exc.msg.startswith("Unterminated string")
            or _left_open(raw)
        )
    return False


def _left_open(raw: str) -> bool:
    """Whether a brace or bracket is still open at the end (strings skipped); a closer that
    does not match means the text is malformed rather than cut."""
    closers = {"{": "}", "[": "]"}
    expected: list[str] = []
    in_string = escaped = False
    for char in raw:
        if escaped:
            escaped = False
        elif in_string:
            escaped = char == "\\"
            in_string = char != '"'
        elif char == '"':
            in_string = True
        elif char in closers:
            expected.append(closers[char])
        elif char in "}]" and (not expected or expected.pop() != char):
            return False
    return bool(expected)
