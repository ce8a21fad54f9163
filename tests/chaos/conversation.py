"""What the chaos model reads in a request: the conversation, in one shape for both wire formats.

The stand-in model decides every reply from this alone, as a real model does from what it is
sent: the texts, the calls it made and the results it got back. Anthropic marks failed results
(`is_error`); Chat Completions has no such flag, so there a result says only what it says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from stayer.messages import JSON
from stayer.providers.base import PURPOSE_HEADER
from tests.fakes.model_server import RecordedRequest


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the model made, as it came back in the request."""

    id: str
    name: str
    input: dict[str, JSON]


@dataclass(frozen=True, slots=True)
class Result:
    """What a tool call gave back."""

    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of the conversation."""

    role: Literal["user", "assistant"]
    texts: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()

    @property
    def text(self) -> str:
        """All its text, joined."""
        return "".join(self.texts)


def is_summary_request(request: RecordedRequest) -> bool:
    """Whether the harness asks for a summary of the history (compaction), not for work."""
    return request.headers.get(PURPOSE_HEADER) == "compact"


def conversation(request: RecordedRequest) -> tuple[Turn, ...]:
    """The request's messages as turns (Chat Completions' system message left out)."""
    if request.protocol == "openai":
        return tuple(turn for m in request.messages if (turn := _chat_turn(m)) is not None)
    return tuple(_anthropic_turn(message) for message in request.messages)


def _anthropic_turn(message: Mapping[str, JSON]) -> Turn:
    content = message.get("content")
    blocks: list[JSON] = content if isinstance(content, list) else []
    if isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    texts = tuple(str(b["text"]) for b in blocks if b.get("type") == "text")
    calls = tuple(
        Call(str(b["id"]), str(b["name"]), dict(b.get("input") or {}))
        for b in blocks
        if b.get("type") == "tool_use"
    )
    results = tuple(
        Result(str(b["tool_use_id"]), _result_text(b.get("content")), bool(b.get("is_error")))
        for b in blocks
        if b.get("type") == "tool_result"
    )
    role: Literal["user", "assistant"] = (
        "assistant" if message.get("role") == "assistant" else "user"
    )
    return Turn(role, texts, calls, results)


def _result_text(content: JSON) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _chat_turn(message: Mapping[str, JSON]) -> Turn | None:
    role = message.get("role")
    if role == "tool":
        text = _result_text(message.get("content"))
        return Turn("user", results=(Result(str(message.get("tool_call_id")), text, False),))
    if role == "assistant":
        calls = tuple(_chat_call(call) for call in message.get("tool_calls") or [])
        said = message.get("content")
        return Turn("assistant", (said,) if isinstance(said, str) and said else (), calls)
    if role == "user":
        return Turn("user", (_result_text(message.get("content")),))
    return None


def _chat_call(call: Mapping[str, JSON]) -> Call:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        arguments = {}
    return Call(str(call.get("id")), str(function.get("name")), dict(arguments))
