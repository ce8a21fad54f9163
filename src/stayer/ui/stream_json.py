"""Events as Claude Code's stream-json messages, so programs written for it read stayer.

Shapes follow what claude-agent-sdk parses (`system`/`init`, `assistant`, `user`, `stream_event`,
`system`/`api_retry`, `result`); see shared/reference/protocols.md §1.6. Every line stays under
1 MiB, the SDK's default line limit: oversized tool output is cut, with a note saying so.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, assert_never

from stayer._version import CLAUDE_CODE_COMPAT_VERSION, __version__
from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Event,
    Finished,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    Retrying,
    SessionStarted,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.messages import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_to_wire,
    message_to_wire,
    usage_to_wire,
)

MAX_LINE_BYTES = 1_000_000
"""A little under claude-agent-sdk's 1 MiB default buffer."""

Line = dict[str, Any]


def result_subtype(terminal: Terminal) -> str:
    """The `result` subtype for a terminal reason."""
    match terminal:
        case Terminal.COMPLETED:
            return "success"
        case Terminal.MAX_TURNS:
            return "error_max_turns"
        case (
            Terminal.MODEL_ERROR
            | Terminal.PROMPT_TOO_LONG
            | Terminal.ABORTED_STREAMING
            | Terminal.ABORTED_TOOLS
            | Terminal.IMAGE_ERROR
            | Terminal.HOOK_STOPPED
            | Terminal.STOP_HOOK_PREVENTED
            | Terminal.BLOCKING_LIMIT
        ):
            return "error_during_execution"
        case _:
            assert_never(terminal)


@dataclass
class StreamJsonWriter:
    """Turns events into stream-json lines (dicts); keeps the session id and model."""

    include_partial: bool = False
    api_key_source: str = "none"
    session_id: str = ""
    model: str = ""
    _lines: list[Line] = field(default_factory=list[Line])

    def lines(self, event: Event) -> list[Line]:
        """The lines one event produces (often none)."""
        match event:
            case SessionStarted():
                self.session_id, self.model = event.session_id, event.model
                return [self._init(event)]
            case MessageCompleted(message=message):
                return [self._frame("assistant", message=message_to_wire(message))]
            case ToolResultsAppended():
                return self._tool_results(event)
            case Retrying():
                return [self._retry(event)]
            case Finished():
                return [result_line(event, self.session_id, self.model)]
            case Withdrawn() if self.include_partial:
                return [self._frame("system", subtype="withdrawn", message_id=event.message_id)]
            case _ if self.include_partial:
                raw = anthropic_event(event)
                return [] if raw is None else [self._frame("stream_event", event=raw)]
            case _:
                return []

    def _frame(self, kind: str, **fields: Any) -> Line:
        frame: Line = {"type": kind, **fields}
        if kind in ("assistant", "user", "stream_event"):
            frame["parent_tool_use_id"] = None
        frame["session_id"] = self.session_id
        frame["uuid"] = str(uuid.uuid4())
        return frame

    def _init(self, event: SessionStarted) -> Line:
        return self._frame(
            "system",
            subtype="init",
            cwd=event.cwd,
            tools=list(event.tools),
            mcp_servers=[],
            model=event.model,
            permissionMode=event.permission_mode,
            slash_commands=[],
            apiKeySource=self.api_key_source,
            claude_code_version=CLAUDE_CODE_COMPAT_VERSION,
            stayer_version=__version__,
            output_style="default",
            agents=[],
            skills=[],
            plugins=[],
        )

    def _tool_results(self, event: ToolResultsAppended) -> list[Line]:
        frames: list[Line] = []
        results = [b for b in event.message.content if isinstance(b, ToolResultBlock)]
        for index, block in enumerate(results):
            message = {"role": "user", "content": [block_to_wire(block)]}
            data = event.data[index] if index < len(event.data) else {}
            frames.append(self._frame("user", message=message, tool_use_result=data))
        others = [b for b in event.message.content if not isinstance(b, ToolResultBlock)]
        if others:
            message = {"role": "user", "content": [block_to_wire(b) for b in others]}
            frames.append(self._frame("user", message=message))
        return frames

    def _retry(self, event: Retrying) -> Line:
        return self._frame(
            "system",
            subtype="api_retry",
            attempt=event.attempt,
            max_retries=event.max_retries,
            retry_delay_ms=round(event.delay_s * 1000),
            error_status=event.status,
            error=event.error,
        )


def result_line(event: Finished, session_id: str, model: str) -> Line:
    """The closing `result` message."""
    subtype = result_subtype(event.terminal)
    line: Line = {
        "type": "result",
        "subtype": subtype,
        "is_error": event.is_error,
        "duration_ms": round(event.duration_ms),
        "duration_api_ms": round(event.duration_api_ms),
        "num_turns": event.num_turns,
        "result": event.result_text if subtype == "success" else event.message,
        "stop_reason": event.stop_reason,
        "terminal_reason": event.terminal.value,
        "session_id": session_id,
        "total_cost_usd": event.cost_usd,
        "usage": usage_to_wire(event.usage),
        "modelUsage": {model: _model_usage(event)} if model else {},
        "permission_denials": [
            {"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}
            for d in event.permission_denials
        ],
        "uuid": str(uuid.uuid4()),
    }
    if event.is_error:
        line["errors"] = [event.message]
    if event.error_status is not None:
        line["api_error_status"] = event.error_status
    return line


def _model_usage(event: Finished) -> dict[str, Any]:
    usage = event.usage
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_input_tokens,
        "cacheCreationInputTokens": usage.cache_creation_input_tokens,
        "webSearchRequests": 0,
        "costUSD": event.cost_usd,
    }


def anthropic_event(event: Event) -> dict[str, Any] | None:
    """A stream event in the Anthropic SSE shape (what `stream_event` lines carry)."""
    match event:
        case MessageStarted(message_id=message_id, model=model, usage=usage):
            message: dict[str, Any] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "usage": usage_to_wire(usage),
            }
            return {"type": "message_start", "message": message}
        case BlockStarted(index=index, block_type=kind, tool_use_id=tool_id, name=name):
            return {
                "type": "content_block_start",
                "index": index,
                "content_block": _empty(kind, tool_id, name),
            }
        case TextDelta(index=index, text=text):
            return _delta(index, {"type": "text_delta", "text": text})
        case ThinkingDelta(index=index, thinking=thinking):
            return _delta(index, {"type": "thinking_delta", "thinking": thinking})
        case ToolInputDelta(index=index, partial_json=partial):
            return _delta(index, {"type": "input_json_delta", "partial_json": partial})
        case BlockCompleted(index=index):
            return {"type": "content_block_stop", "index": index}
        case MessageDelta(stop_reason=stop_reason, usage=usage):
            delta = {"stop_reason": stop_reason, "stop_sequence": None}
            return {"type": "message_delta", "delta": delta, "usage": usage_to_wire(usage)}
        case _:
            return None


def _empty(kind: str, tool_id: str, name: str) -> dict[str, Any]:
    if kind == "tool_use":
        return block_to_wire(ToolUseBlock(tool_id, name, {}))
    if kind == "thinking":
        return block_to_wire(ThinkingBlock("", ""))
    if kind == "text":
        return block_to_wire(TextBlock(""))
    return {"type": kind}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def dumps(line: Line) -> str:
    """One line of JSON, cut to fit the SDK's line limit when a tool's output is huge."""
    text = _compact(line)
    if len(text) * 4 <= MAX_LINE_BYTES:  # no UTF-8 character takes more than 4 bytes
        return text
    limit = 20_000
    while len(text.encode()) > MAX_LINE_BYTES and limit >= 100:
        text = _compact(_shrink(line, limit))
        limit //= 4
    return text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shrink(value: Any, limit: int) -> Any:
    """Every string cut to about `limit` characters and every list to `limit // 20` items."""
    if isinstance(value, dict):
        return {key: _shrink(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        keep = max(1, limit // 20)
        items = [_shrink(item, limit) for item in value[:keep]]
        if len(value) > keep:
            items.append(f"[... {len(value) - keep} more items cut to fit the output line limit]")
        return items
    if isinstance(value, str) and len(value) > limit:
        cut = len(value) - limit
        return value[:limit] + f"\n[... {cut} characters cut to fit the output line limit]"
    return value
