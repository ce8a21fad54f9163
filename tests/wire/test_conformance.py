"""The official SDKs and our clients, fed the same bytes, must assemble the same message.

The SDKs are the reference for how a stream is to be read; if our decoding drifts from theirs
(usage merging, fragment joining, stop reasons), these tests say where.
"""

from __future__ import annotations

import json

import anthropic as anthropic_sdk
import openai as openai_sdk
import pytest
from openai.types.chat import ChatCompletion

from stayer.events import TextDelta, ToolInputDelta
from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    StopReason,
    TextBlock,
    ToolUseBlock,
    Usage,
    message_from_wire,
)
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Stream,
    Text,
    Thinking,
    ToolCall,
    anthropic_event,
    anthropic_message_delta,
    anthropic_message_start,
    anthropic_message_stop,
    anthropic_stream,
    openai_stream,
)
from tests.wire.helpers import collect, final_message, make_request

CACHED = Usage(
    input_tokens=40, output_tokens=77, cache_read_input_tokens=900, cache_creation_input_tokens=120
)


def _cumulative_usage_stream() -> Stream:
    body = anthropic_stream(Text("counting")).frames[1:-2]
    return Stream(
        (
            anthropic_message_start(message_id="msg_cum", model="claude-test", usage=CACHED),
            *body,
            anthropic_message_delta(None, output_tokens=10),
            anthropic_message_delta(
                "end_turn", output_tokens=31, input_tokens=40, cache_read_input_tokens=900
            ),
            anthropic_message_stop(),
        ),
        protocol="anthropic",
    )


def _redacted_stream() -> Stream:
    frames = anthropic_stream(Text("after")).frames
    redacted = (
        anthropic_event(
            "content_block_start",
            {"index": 1, "content_block": {"type": "redacted_thinking", "data": "ENC=="}},
        ),
        anthropic_event("content_block_stop", {"index": 1}),
    )
    return Stream((*frames[:-2], *redacted, *frames[-2:]), protocol="anthropic")


ANTHROPIC_STREAMS = {
    "text": anthropic_stream(Text("Hello there, how are you?"), model="claude-test"),
    "thinking_text_tool": anthropic_stream(
        Thinking("The user wants weather. I should call the tool.", signature="Sig+/=="),
        Text("Let me check."),
        ToolCall(
            "toolu_01A", "get_weather", {"city": "São Paulo", "days": [1, 2], "nested": {"a": None}}
        ),
        usage=CACHED,
    ),
    "parallel_tools": anthropic_stream(
        ToolCall("toolu_1", "read", {"path": "a.txt"}),
        ToolCall("toolu_2", "read", {}),
        stop_reason="tool_use",
    ),
    "max_tokens": anthropic_stream(Text("This answer was cut"), stop_reason="max_tokens"),
    "cumulative_usage": _cumulative_usage_stream(),
    "redacted_thinking": _redacted_stream(),
}


async def _anthropic_sdk_message(server: FakeModelServer) -> AssistantMessage:
    client = anthropic_sdk.AsyncAnthropic(base_url=server.url, api_key="test-key", max_retries=0)
    try:
        async with client.messages.stream(
            model="claude-test", max_tokens=1024, messages=[{"role": "user", "content": "hello"}]
        ) as stream:
            final = await stream.get_final_message()
    finally:
        await client.close()
    message = message_from_wire(final.model_dump())
    assert isinstance(message, AssistantMessage)
    return message


@pytest.mark.parametrize("name", sorted(ANTHROPIC_STREAMS))
async def test_anthropic_sdk_and_our_client_agree(
    server: FakeModelServer, anthropic: AnthropicProvider, name: str
) -> None:
    stream = ANTHROPIC_STREAMS[name]
    server.enqueue(stream, stream)
    theirs = await _anthropic_sdk_message(server)
    ours = await final_message(anthropic, make_request())
    assert ours == theirs
    assert ours.content  # the comparison is not between two empty messages


_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _from_openai(completion: ChatCompletion) -> AssistantMessage:
    choice = completion.choices[0]
    blocks: list[ContentBlock] = []
    if choice.message.content:
        blocks.append(TextBlock(choice.message.content))
    for call in choice.message.tool_calls or []:
        assert call.type == "function"
        blocks.append(
            ToolUseBlock(call.id, call.function.name, json.loads(call.function.arguments))
        )
    usage = Usage()
    if completion.usage is not None:
        details = completion.usage.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details else 0
        usage = Usage(
            input_tokens=completion.usage.prompt_tokens - cached,
            output_tokens=completion.usage.completion_tokens,
            cache_read_input_tokens=cached,
        )
    return AssistantMessage(
        content=tuple(blocks),
        id=completion.id,
        model=completion.model,
        stop_reason=_FINISH[choice.finish_reason],
        usage=usage,
    )


OPENAI_STREAMS = {
    "text": openai_stream(Text("Plain words, streamed in pieces."), model="gpt-test"),
    "text_and_tools": openai_stream(
        Text("Two calls."),
        ToolCall("call_a", "get_weather", {"city": "Zürich"}),
        ToolCall("call_b", "get_time", {"tz": "UTC", "fmt": ["iso"]}),
        usage=CACHED,
        model="gpt-test",
    ),
    "length": openai_stream(Text("cut off"), finish_reason="length", model="gpt-test"),
}


def _openai_client(server: FakeModelServer) -> openai_sdk.AsyncOpenAI:
    return openai_sdk.AsyncOpenAI(base_url=server.openai_url, api_key="test-key", max_retries=0)


@pytest.mark.parametrize("name", sorted(OPENAI_STREAMS))
async def test_openai_sdk_and_our_client_agree(
    server: FakeModelServer, openai: OpenAIChatProvider, name: str
) -> None:
    stream = OPENAI_STREAMS[name]
    server.enqueue(stream, stream)
    client = _openai_client(server)
    try:
        async with client.chat.completions.stream(
            model="gpt-test", messages=[{"role": "user", "content": "hello"}]
        ) as sdk_stream:
            completion: ChatCompletion
            try:
                completion = await sdk_stream.get_final_completion()
            except openai_sdk.LengthFinishReasonError as exc:  # the helper refuses to parse these
                completion = exc.completion
    finally:
        await client.close()
    theirs = _from_openai(completion)
    ours = await final_message(openai, make_request(model="gpt-test"))
    assert ours == theirs
    assert ours.content


async def test_openai_raw_chunks_and_our_deltas_carry_the_same_fragments(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    stream = OPENAI_STREAMS["text_and_tools"]
    server.enqueue(stream, stream)
    client = _openai_client(server)
    raw_text: list[str] = []
    raw_arguments: list[str] = []
    try:
        chunks = await client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hello"}], stream=True
        )
        async for chunk in chunks:
            for choice in chunk.choices:
                if choice.delta.content:
                    raw_text.append(choice.delta.content)
                for call in choice.delta.tool_calls or []:
                    if call.function and call.function.arguments:
                        raw_arguments.append(call.function.arguments)
    finally:
        await client.close()
    events = await collect(openai, make_request(model="gpt-test"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == raw_text
    assert [e.partial_json for e in events if isinstance(e, ToolInputDelta)] == raw_arguments
    assert len(raw_text) > 1
