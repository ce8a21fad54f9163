"""The OpenAI-compatible client over real HTTP: chunks to events, and our history to chat."""

from __future__ import annotations

import json

import pytest

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
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Frame,
    Stream,
    Thinking,
    ToolCall,
    openai_chunk,
    openai_done,
    openai_stream,
    openai_text,
    openai_tool_calls,
)
from tests.wire.helpers import WEATHER_TOOL, collect, final_message, make_request


async def test_text_arrives_in_pieces_while_the_server_is_still_sending(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    stream = openai_text("alpha beta gamma")
    server.enqueue(stream.paused(at=stream.index_of('"beta "')))
    events = openai.stream(make_request(model="gpt-test"))
    first = []
    async for event in events:
        first.append(event)
        if isinstance(event, TextDelta):
            break
    assert first[-1] == TextDelta(0, "alpha ")
    server.resume()
    rest = [event async for event in events]
    assert [e.text for e in first + rest if isinstance(e, TextDelta)] == [
        "alpha ",
        "beta ",
        "gamma",
    ]
    assert isinstance(rest[-1], MessageCompleted)
    assert rest[-1].message.content == (TextBlock("alpha beta gamma"),)


def _interleaved_calls() -> Stream:
    """Two parallel calls whose argument fragments arrive interleaved, as OpenAI sends them."""

    def chunk(
        delta: dict[str, object] | None,
        finish_reason: str | None = None,
        usage: dict[str, object] | None = None,
    ) -> Frame:
        return openai_chunk(
            delta, chunk_id="c1", model="m", finish_reason=finish_reason, usage=usage
        )

    def call(index: int, **fields: object) -> dict[str, object]:
        return {"tool_calls": [{"index": index, **fields}]}

    def opening(index: int, call_id: str) -> dict[str, object]:
        function = {"name": "get_weather", "arguments": ""}
        return call(index, id=call_id, type="function", function=function)

    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 9,
        "prompt_tokens_details": {"cached_tokens": 20},
    }
    frames = (
        chunk({"role": "assistant", "content": None}),
        chunk({"content": "Both."}),
        chunk(opening(0, "call_a")),
        chunk(opening(1, "call_b")),
        chunk(call(0, function={"arguments": '{"city":'})),
        chunk(call(1, function={"arguments": '{"city": "Lima"}'})),
        chunk(call(0, function={"arguments": ' "Quito"}'})),
        chunk({}, finish_reason="tool_calls"),
        chunk(None, usage=usage),
        openai_done(),
    )
    return Stream(frames, protocol="openai")


async def test_parallel_tool_calls_with_interleaved_fragments(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(_interleaved_calls())
    events = await collect(openai, make_request(model="m", tools=[WEATHER_TOOL]))
    quito = ToolUseBlock("call_a", "get_weather", {"city": "Quito"})
    lima = ToolUseBlock("call_b", "get_weather", {"city": "Lima"})
    usage = Usage(input_tokens=30, output_tokens=9, cache_read_input_tokens=20)
    assert events == [
        MessageStarted("c1", "m", Usage()),
        BlockStarted(0, "text"),
        TextDelta(0, "Both."),
        BlockCompleted(0, TextBlock("Both.")),
        BlockStarted(1, "tool_use", "call_a", "get_weather"),
        BlockStarted(2, "tool_use", "call_b", "get_weather"),
        ToolInputDelta(1, '{"city":'),
        ToolInputDelta(2, '{"city": "Lima"}'),
        ToolInputDelta(1, ' "Quito"}'),
        BlockCompleted(1, quito),
        BlockCompleted(2, lima),
        MessageDelta("tool_use", usage),
        MessageCompleted(
            AssistantMessage(
                content=(TextBlock("Both."), quito, lima),
                id="c1",
                model="m",
                stop_reason="tool_use",
                usage=usage,
            )
        ),
    ]


async def test_reasoning_content_becomes_a_thinking_block(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(
        openai_stream(Thinking("think first"), ToolCall("call_1", "get_weather", {"city": "Bern"}))
    )
    events = await collect(openai, make_request(model="deepseek-reasoner"))
    assert [e.thinking for e in events if isinstance(e, ThinkingDelta)] == ["think ", "first"]
    message = events[-1]
    assert isinstance(message, MessageCompleted)
    assert message.message.content == (
        ThinkingBlock("think first", ""),
        ToolUseBlock("call_1", "get_weather", {"city": "Bern"}),
    )


async def test_ollama_style_reasoning_field_and_calls_without_index_or_id(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    frames = (
        openai_chunk({"role": "assistant", "reasoning": "hmm"}),
        openai_chunk(
            {"tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Baku"}}}]}
        ),
        openai_chunk({}, finish_reason="stop"),
        openai_done(),
    )
    server.enqueue(Stream(frames, protocol="openai"))
    message = await final_message(openai, make_request(model="qwen3:8b"))
    thinking, call = message.content
    assert thinking == ThinkingBlock("hmm", "")
    assert isinstance(call, ToolUseBlock)
    assert (call.name, dict(call.input)) == ("get_weather", {"city": "Baku"})
    assert call.id.startswith("call_")
    # "stop" after a tool call still means the model wants the tool run.
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal")],
)
async def test_finish_reasons(
    server: FakeModelServer, openai: OpenAIChatProvider, finish: str, expected: StopReason
) -> None:
    server.enqueue(openai_text("x", finish_reason=finish))
    assert (await final_message(openai, make_request(model="m"))).stop_reason == expected


async def test_missing_done_after_finish_reason_still_completes(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    stream = openai_text("done", usage=None)
    server.enqueue(stream.truncated(len(stream.frames) - 1))
    message = await final_message(openai, make_request(model="m"))
    assert (message.text, message.stop_reason) == ("done", "end_turn")


async def test_bad_tool_json_is_kept_for_the_executor_and_sent_back_as_an_empty_object(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(openai_tool_calls(ToolCall("call_x", "get_weather", raw_input='{"city": "Ri')))
    server.enqueue(openai_text("sorry"))
    message = await final_message(openai, make_request(model="m"))
    assert message.tool_uses[0] == ToolUseBlock(
        "call_x", "get_weather", {}, unparsed='{"city": "Ri'
    )
    result = ToolResultBlock("call_x", (TextBlock("invalid JSON"),), is_error=True)
    follow = make_request(UserMessage.of_text("hello"), message, UserMessage((result,)), model="m")
    await collect(openai, follow)
    call = server.requests[1].body["messages"][2]["tool_calls"][0]
    assert call["function"]["arguments"] == "{}"


async def test_headers_bearer_and_purpose(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(openai_text("ok"))
    await collect(openai, make_request(model="m", purpose="title"))
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.headers["x-stayer-purpose"] == "title"


async def test_no_key_sends_no_authorization(server: FakeModelServer) -> None:
    server.enqueue(openai_text("ok"))
    provider = OpenAIChatProvider(base_url=server.openai_url)
    try:
        await collect(provider, make_request(model="llama3:8b"))
    finally:
        await provider.aclose()
    assert "authorization" not in server.requests[0].headers


async def test_any_base_path_works(server: FakeModelServer) -> None:
    server.enqueue(openai_text("ok"))
    provider = OpenAIChatProvider(base_url=f"{server.url}/api/openai/v1")
    try:
        assert (await final_message(provider, make_request(model="m"))).text == "ok"
    finally:
        await provider.aclose()
    assert server.requests[0].path == "/api/openai/v1/chat/completions"


# What the history in test_history_translation must become on the wire.
EXPECTED_CHAT_HISTORY: list[object] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": json.dumps({"city": "Kyiv"}),
                },
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "screenshot", "arguments": "{}"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
    {"role": "tool", "tool_call_id": "call_2", "content": "see image"},
    {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "and hurry"},
        ],
    },
]


async def test_history_translation(server: FakeModelServer, openai: OpenAIChatProvider) -> None:
    server.enqueue(openai_text("fine"))
    assistant = AssistantMessage(
        content=(
            ThinkingBlock("private", "sig"),
            TextBlock("Looking."),
            ToolUseBlock("call_1", "get_weather", {"city": "Kyiv"}),
            ToolUseBlock("call_2", "screenshot", {}),
        ),
        stop_reason="tool_use",
    )
    results = UserMessage(
        (
            ToolResultBlock("call_1", (TextBlock("sunny, "), TextBlock("21 C"))),
            ToolResultBlock(
                "call_2", (TextBlock("see image"), ImageBlock("image/png", "AAAA")), is_error=False
            ),
            TextBlock("and hurry"),
        )
    )
    request = make_request(
        UserMessage.of_text("weather?"),
        assistant,
        results,
        model="m",
        tools=[WEATHER_TOOL],
        temperature=0.0,
    )
    await collect(openai, request)
    body = server.requests[0].body
    assert body["messages"] == EXPECTED_CHAT_HISTORY
    assert {k: v for k, v in body.items() if k != "messages"} == {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 1024,
        "temperature": 0.0,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": dict(WEATHER_TOOL.input_schema),
                },
            }
        ],
    }


def test_openai_itself_gets_max_completion_tokens() -> None:
    request = make_request(model="gpt-4.1", max_tokens=500)
    official = json.loads(OpenAIChatProvider(api_key="k").encode_request(request))
    local = json.loads(
        OpenAIChatProvider(base_url="http://localhost:11434/v1").encode_request(request)
    )
    assert official["max_completion_tokens"] == 500
    assert "max_tokens" not in official
    assert local["max_tokens"] == 500
    assert "max_completion_tokens" not in local


async def test_azure_opening_chunk_and_usage_alongside_finish(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    azure_opening = Frame(
        json.dumps({"id": "", "model": "", "choices": [], "prompt_filter_results": []})
    )
    usage = {"prompt_tokens": 8, "completion_tokens": 2}
    frames = (
        azure_opening,
        openai_chunk({"role": "assistant", "content": "hi"}, chunk_id="az1", model="gpt-4o"),
        openai_chunk({}, finish_reason="stop", chunk_id="az1", model="gpt-4o", usage=usage),
        openai_done(),
    )
    server.enqueue(Stream(frames, protocol="openai"))
    events = await collect(openai, make_request(model="gpt-4o"))
    assert events[0] == MessageStarted("az1", "gpt-4o", Usage())
    assert [e for e in events if isinstance(e, MessageDelta)] == [
        MessageDelta("end_turn", Usage(input_tokens=8, output_tokens=2))
    ]


async def test_calls_sharing_one_id_are_kept_apart(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(
        openai_tool_calls(
            ToolCall("call_0", "get_weather", {"city": "Quito"}),
            ToolCall("call_0", "get_weather", {"city": "Lima"}),
        )
    )
    message = await final_message(openai, make_request(model="m", tools=[WEATHER_TOOL]))
    ids = [block.id for block in message.tool_uses]
    assert len(set(ids)) == 2 and ids[0] == "call_0"
    assert [block.input for block in message.tool_uses] == [{"city": "Quito"}, {"city": "Lima"}]


_USAGE = {"prompt_tokens": 8, "completion_tokens": 2}
_FINISH = openai_chunk({}, finish_reason="stop", chunk_id="c1", model="m")
_USAGE_CHUNK = openai_chunk(None, chunk_id="c1", model="m", usage=_USAGE)
_FINISH_WITH_USAGE = openai_chunk({}, finish_reason="stop", chunk_id="c1", model="m", usage=_USAGE)


@pytest.mark.parametrize(
    ("tail", "stop", "usage"),
    [
        pytest.param((_FINISH, _USAGE_CHUNK, openai_done()), "end_turn", True, id="usage-after"),
        pytest.param((_FINISH_WITH_USAGE, openai_done()), "end_turn", True, id="usage-beside"),
        pytest.param((_FINISH, _USAGE_CHUNK), "end_turn", True, id="usage-after-no-done"),
        pytest.param((_FINISH, openai_done()), "end_turn", False, id="no-usage"),
        pytest.param((_FINISH,), "end_turn", False, id="no-usage-no-done"),
        pytest.param((_USAGE_CHUNK, openai_done()), None, True, id="done-without-finish"),
    ],
)
async def test_one_message_delta_carries_the_stop_reason_and_the_final_usage(
    server: FakeModelServer,
    openai: OpenAIChatProvider,
    tail: tuple[Frame, ...],
    stop: StopReason | None,
    usage: bool,
) -> None:
    # Anthropic sends one message_delta per message, and stream-json relays ours as it.
    frames = (openai_chunk({"role": "assistant", "content": "hi"}, chunk_id="c1", model="m"), *tail)
    server.enqueue(Stream(frames, protocol="openai"))
    events = await collect(openai, make_request(model="m"))
    final = Usage(input_tokens=8, output_tokens=2) if usage else Usage()
    assert events == [
        MessageStarted("c1", "m", Usage()),
        BlockStarted(0, "text"),
        TextDelta(0, "hi"),
        BlockCompleted(0, TextBlock("hi")),
        MessageDelta(stop, final),
        MessageCompleted(
            AssistantMessage((TextBlock("hi"),), id="c1", model="m", stop_reason=stop, usage=final)
        ),
    ]
