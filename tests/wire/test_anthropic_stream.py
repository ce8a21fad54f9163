"""The Anthropic client over real HTTP: streaming, assembly, usage, headers and request body."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from stayer.events import (
    BlockCompleted,
    BlockStarted,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from stayer.messages import (
    AssistantMessage,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.anthropic import AnthropicProvider
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
    anthropic_text,
    anthropic_tool_use,
)
from tests.wire.helpers import WEATHER_TOOL, collect, final_message, make_request


async def test_text_arrives_in_pieces_while_the_server_is_still_sending(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    stream = anthropic_text("one two three four")
    server.enqueue(stream.paused(at=stream.index_of('"two "')))
    events = anthropic.stream(make_request())
    before_pause = []
    async for event in events:
        before_pause.append(event)
        if isinstance(event, TextDelta):
            break
    # The server holds the rest back, so this delta came live, not from a buffered body.
    assert before_pause[-1] == TextDelta(0, "one ")
    server.resume()
    rest = [event async for event in events]
    deltas = [e.text for e in before_pause + rest if isinstance(e, TextDelta)]
    assert deltas == ["one ", "two ", "three ", "four"]
    assert isinstance(rest[-1], MessageCompleted)
    assert rest[-1].message.content == (TextBlock("one two three four"),)


async def test_tool_use_with_fragmented_input_yields_every_event_in_order(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(
        anthropic_tool_use(
            "toolu_01",
            "get_weather",
            {"city": "Paris", "units": "metric"},
            text="Checking.",
            message_id="msg_01",
            model="claude-test",
            usage=Usage(input_tokens=25, output_tokens=30),
        )
    )
    events = await collect(anthropic, make_request(tools=[WEATHER_TOOL]))
    tool = ToolUseBlock("toolu_01", "get_weather", {"city": "Paris", "units": "metric"})
    assert events == [
        MessageStarted("msg_01", "claude-test", Usage(input_tokens=25, output_tokens=1)),
        BlockStarted(0, "text"),
        TextDelta(0, "Checking."),
        BlockCompleted(0, TextBlock("Checking.")),
        BlockStarted(1, "tool_use", "toolu_01", "get_weather"),
        ToolInputDelta(1, '{"city": "Pa'),
        ToolInputDelta(1, 'ris", "units'),
        ToolInputDelta(1, '": "metric"}'),
        BlockCompleted(1, tool),
        MessageDelta("tool_use", Usage(input_tokens=25, output_tokens=30)),
        MessageCompleted(
            AssistantMessage(
                content=(TextBlock("Checking."), tool),
                id="msg_01",
                model="claude-test",
                stop_reason="tool_use",
                usage=Usage(input_tokens=25, output_tokens=30),
            )
        ),
    ]


async def test_thinking_keeps_its_signature_and_goes_back_verbatim(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(
        anthropic_stream(
            Thinking("Let me look it up.", signature="EqQBCkYIARgCKkA+sig=="),
            ToolCall("toolu_7", "get_weather", {"city": "Oslo"}),
        ),
        anthropic_text("It is cold."),
    )
    first = make_request(tools=[WEATHER_TOOL])
    events = await collect(anthropic, first)
    thinking = [e.thinking for e in events if isinstance(e, ThinkingDelta)]
    assert thinking == ["Let ", "me ", "look ", "it ", "up."]
    message = events[-1]
    assert isinstance(message, MessageCompleted)
    assert message.message.content[0] == ThinkingBlock(
        "Let me look it up.", "EqQBCkYIARgCKkA+sig=="
    )
    result = ToolResultBlock("toolu_7", (TextBlock("-3 C"),))
    follow_up = make_request(
        *first.messages, message.message, UserMessage((result,)), tools=[WEATHER_TOOL]
    )
    assert (await final_message(anthropic, follow_up)).text == "It is cold."
    sent = server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Let me look it up.",
                "signature": "EqQBCkYIARgCKkA+sig==",
            },
            {"type": "tool_use", "id": "toolu_7", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
    }


async def test_usage_counts_are_cumulative_and_overwrite(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    start_usage = Usage(input_tokens=100, cache_read_input_tokens=50, cache_creation_input_tokens=9)
    frames = (
        anthropic_message_start(message_id="msg_u", usage=start_usage),
        *anthropic_stream(Text("hi")).frames[1:-2],
        anthropic_message_delta(None, output_tokens=5),
        anthropic_message_delta("end_turn", output_tokens=20, input_tokens=100),
        anthropic_message_stop(),
    )
    server.enqueue(Stream(frames, protocol="anthropic"))
    events = await collect(anthropic, make_request())
    deltas = [e for e in events if isinstance(e, MessageDelta)]
    total = Usage(100, 20, 50, 9)
    assert deltas == [
        MessageDelta(None, Usage(100, 5, 50, 9)),
        MessageDelta("end_turn", total),
    ]
    final = events[-1]
    assert isinstance(final, MessageCompleted)
    assert final.message.usage == total
    assert final.message.stop_reason == "end_turn"


async def test_api_key_purpose_and_version_headers_are_sent(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("ok"))
    await collect(anthropic, make_request(purpose="compact"))
    headers = server.requests[0].headers
    assert headers["x-api-key"] == "test-key"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-stayer-purpose"] == "compact"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers
    assert server.requests[0].path == "/v1/messages"


async def test_auth_token_goes_as_bearer(server: FakeModelServer) -> None:
    server.enqueue(anthropic_text("ok"))
    provider = AnthropicProvider(auth_token="gateway-token", base_url=server.url)
    try:
        await collect(provider, make_request())
    finally:
        await provider.aclose()
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer gateway-token"
    assert "x-api-key" not in headers
    assert headers["x-stayer-purpose"] == "main"


# The history of the cache-breakpoint test as it must go on the wire: the two newest user
# messages end on a breakpoint (with the tools' and the system prompt's, four in all).
EXPECTED_MESSAGES: list[object] = [
    {
        "role": "user",
        "content": [{"type": "text", "text": "start", "cache_control": {"type": "ephemeral"}}],
    },
    {
        "role": "assistant",
        # The blank text block is dropped: the API refuses empty text.
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}}],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [
                    {"type": "text", "text": "nothing"},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBO",
                        },
                    },
                ],
            },
            {"type": "text", "text": "carry on", "cache_control": {"type": "ephemeral"}},
        ],
    },
]


async def test_request_body_has_cache_breakpoints_and_only_role_and_content(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("done"))
    second_tool = ToolSpec("noop", "Does nothing.", {"type": "object"})
    earlier = AssistantMessage(
        content=(TextBlock(""), ToolUseBlock("toolu_1", "noop", {})),
        id="msg_old",
        model="claude-test",
        stop_reason="tool_use",
        usage=Usage(1, 2),
    )
    results = UserMessage(
        (
            ToolResultBlock("toolu_1", (TextBlock("nothing"), ImageBlock("image/png", "iVBO"))),
            TextBlock("carry on"),
        )
    )
    request = make_request(
        UserMessage.of_text("start"),
        earlier,
        results,
        tools=[WEATHER_TOOL, second_tool],
        temperature=0.2,
        max_tokens=2048,
    )
    await collect(anthropic, request)
    eph = {"type": "ephemeral"}
    body = server.requests[0].body
    assert body["messages"] == EXPECTED_MESSAGES
    assert {k: v for k, v in body.items() if k != "messages"} == {
        "model": "claude-test",
        "max_tokens": 2048,
        "stream": True,
        "temperature": 0.2,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": eph}],
        "tools": [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": dict(WEATHER_TOOL.input_schema),
            },
            {
                "name": "noop",
                "description": "Does nothing.",
                "input_schema": {"type": "object"},
                "cache_control": eph,
            },
        ],
    }


async def test_no_system_and_no_tools_means_no_such_fields(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("ok"))
    await collect(anthropic, make_request(system=""))
    body = server.requests[0].body
    assert "system" not in body
    assert "tools" not in body
    assert "temperature" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_unknown_events_and_server_blocks_are_skipped(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    base = anthropic_stream(Text("answer")).frames
    server_block = (
        anthropic_event(
            "content_block_start",
            {"index": 1, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1"}},
        ),
        anthropic_event(
            "content_block_delta",
            {"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        ),
        anthropic_event("content_block_stop", {"index": 1}),
        anthropic_event("brand_new_event", {"anything": True}),
        anthropic_event(
            "content_block_start",
            {"index": 2, "content_block": {"type": "redacted_thinking", "data": "opaque=="}},
        ),
        anthropic_event("content_block_stop", {"index": 2}),
    )
    frames = (*base[:-2], *server_block, *base[-2:])
    server.enqueue(Stream(frames, protocol="anthropic"))
    message = await final_message(anthropic, make_request())
    assert message.content == (TextBlock("answer"), RedactedThinkingBlock("opaque=="))


async def test_whole_input_at_block_start_is_kept(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    # Some gateways put the complete input in content_block_start and send no deltas.
    start = anthropic_event(
        "content_block_start",
        {
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "t1",
                "name": "get_weather",
                "input": {"city": "Rome"},
            },
        },
    )
    frames = (
        anthropic_message_start(),
        start,
        anthropic_event("content_block_stop", {"index": 0}),
        anthropic_message_delta("tool_use", output_tokens=3),
        anthropic_message_stop(),
    )
    server.enqueue(Stream(frames, protocol="anthropic"))
    message = await final_message(anthropic, make_request())
    assert message.tool_uses == (ToolUseBlock("t1", "get_weather", {"city": "Rome"}),)


async def test_stopping_early_closes_the_stream_cleanly(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("a b c d e f g"), anthropic_text("again"))
    stream = anthropic.stream(make_request())
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    assert isinstance(stream, AsyncGenerator)
    await stream.aclose()
    # The client is still usable afterwards.
    assert (await final_message(anthropic, make_request())).text == "again"
