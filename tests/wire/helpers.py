"""Small pieces the wire tests share: building requests and draining provider streams."""

from __future__ import annotations

import socket
from collections.abc import Sequence

import pytest

from stayer.errors import ModelError
from stayer.events import MessageCompleted, StreamEvent
from stayer.messages import AssistantMessage, Message, ToolSpec, UserMessage
from stayer.providers.base import ModelRequest, Provider

WEATHER_TOOL = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def make_request(
    *messages: Message,
    model: str = "claude-test",
    system: str = "You are terse.",
    tools: Sequence[ToolSpec] = (),
    purpose: str = "main",
    temperature: float | None = None,
    max_tokens: int = 1024,
    betas: Sequence[str] = (),
) -> ModelRequest:
    """A request; with no messages, one user message saying hello."""
    return ModelRequest(
        model=model,
        system=system,
        messages=tuple(messages) or (UserMessage.of_text("hello"),),
        tools=tuple(tools),
        purpose=purpose,
        temperature=temperature,
        max_tokens=max_tokens,
        betas=tuple(betas),
    )


async def collect(provider: Provider, request: ModelRequest) -> list[StreamEvent]:
    """Every event of one stream."""
    return [event async for event in provider.stream(request)]


async def final_message(provider: Provider, request: ModelRequest) -> AssistantMessage:
    """The assembled message at the end of one stream."""
    events = await collect(provider, request)
    last = events[-1]
    assert isinstance(last, MessageCompleted), f"stream ended with {last!r}"
    return last.message


async def failure(
    provider: Provider, request: ModelRequest, expected: type[ModelError]
) -> tuple[ModelError, list[StreamEvent]]:
    """The error a stream ends with, and the events that came before it."""
    seen: list[StreamEvent] = []
    with pytest.raises(expected) as caught:
        async for event in provider.stream(request):
            seen.append(event)
    error = caught.value
    assert "\n" not in str(error), "error messages are one line"
    return error, seen


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
