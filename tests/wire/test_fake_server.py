"""The fake model server itself: history checks, loud failures, responders, any caller."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import pytest

from stayer.errors import InvalidRequest, ServerError
from stayer.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import (
    FakeModelServer,
    RecordedRequest,
    anthropic_history_problem,
    openai_history_problem,
)
from tests.fakes.sse import (
    RedactedThinking,
    Reply,
    Text,
    Thinking,
    ToolCall,
    anthropic_text,
    openai_error,
    openai_text,
    reply,
)
from tests.wire.helpers import failure, final_message, make_request

CALL = AssistantMessage(content=(ToolUseBlock("toolu_9", "get_weather", {"city": "Nice"}),))


def _result(tool_id: str = "toolu_9") -> UserMessage:
    return UserMessage((ToolResultBlock(tool_id, (TextBlock("warm"),)),))


async def test_dangling_tool_use_gets_the_api_400(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    request = make_request(UserMessage.of_text("hi"), CALL, UserMessage.of_text("never mind"))
    error, _ = await failure(anthropic, request, InvalidRequest)
    assert "`tool_use` ids were found without `tool_result` blocks immediately after" in str(error)
    assert "toolu_9" in str(error)
    assert server.take_violations() == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_9. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message."
    ]


async def test_orphan_tool_result_gets_the_api_400(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    request = make_request(UserMessage.of_text("hi"), CALL, _result(), CALL, _result("toolu_x"))
    await failure(anthropic, request, InvalidRequest)
    (violation,) = server.take_violations()
    assert violation.startswith("messages.3: `tool_use` ids were found without")


async def test_a_valid_two_turn_tool_session_passes_the_checks(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_9", "get_weather", {"city": "Nice"})),
        reply("It is warm in Nice."),
    )
    first = make_request(UserMessage.of_text("weather in Nice?"))
    call = await final_message(anthropic, first)
    assert call.stop_reason == "tool_use"
    second = make_request(*first.messages, call, _result())
    answer = await final_message(anthropic, second)
    assert answer.text == "It is warm in Nice."
    assert [len(r.messages) for r in server.requests] == [1, 3]
    assert server.violations == []


def test_anthropic_history_rules() -> None:
    def body(*messages: object) -> dict[str, object]:
        return {"model": "m", "max_tokens": 5, "messages": list(messages)}

    user = {"role": "user", "content": "hi"}
    assistant = {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}
    assert anthropic_history_problem(body(user, assistant, user)) is None
    assert anthropic_history_problem(body(assistant)) == (
        'messages: first message must use the "user" role'
    )
    assert anthropic_history_problem(body(user, user)) == (
        'messages: roles must alternate between "user" and "assistant", '
        'but found multiple "user" roles in a row'
    )
    assert anthropic_history_problem(body({**user, "id": "x"})) == (
        "messages.0.id: Extra inputs are not permitted"
    )
    orphan = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    assert anthropic_history_problem(body(user, assistant, orphan)) == (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message."
    )
    unsigned = {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}
    assert anthropic_history_problem(body(user, unsigned)) == (
        "messages.1.content.0.thinking.signature: Field required"
    )
    cached = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    many = {"role": "user", "content": [cached] * 5}
    assert anthropic_history_problem(body(many)) == (
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    )
    assert anthropic_history_problem({"messages": [user]}) == "model: Field required"


def test_openai_history_rules() -> None:
    def calls(*ids: str) -> dict[str, object]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for i in ids
            ],
        }

    def tool(call_id: str) -> dict[str, object]:
        return {"role": "tool", "tool_call_id": call_id, "content": "ok"}

    user = {"role": "user", "content": "hi"}
    ok = {"messages": [user, calls("a", "b"), tool("b"), tool("a"), user]}
    assert openai_history_problem(ok) is None
    missing = {"messages": [user, calls("a", "b"), tool("a"), user]}
    assert openai_history_problem(missing) == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: b"
    )
    stray = {"messages": [user, tool("a")]}
    assert openai_history_problem(stray) == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )
    wrong = {"messages": [user, calls("a"), tool("z")]}
    assert openai_history_problem(wrong) == (
        "Invalid parameter: 'tool_call_id' of 'z' not found in 'tool_calls' of previous message."
    )


def test_plain_openai_refuses_fields_it_does_not_know_and_the_gateway_takes_thinking() -> None:
    user = {"role": "user", "content": "hi"}
    signed = {"type": "thinking", "thinking": "t", "signature": "sig"}
    thinking = {"role": "assistant", "content": "yo", "thinking_blocks": [signed]}
    assert openai_history_problem({"messages": [user, thinking]}) == (
        "Additional properties are not allowed ('thinking_blocks' was unexpected) - 'messages.1'"
    )
    assert openai_history_problem({"messages": [user, thinking]}, "litellm") is None
    assert openai_history_problem({"messages": [{"role": "robot", "content": "x"}]}) == (
        "Invalid value: 'robot'. Supported values are: "
        "['assistant', 'developer', 'system', 'tool', 'user']."
    )


def test_the_gateway_refuses_what_anthropic_would() -> None:
    def call(arguments: str) -> dict[str, object]:
        function = {"name": "f", "arguments": arguments}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": function}],
        }

    def body(assistant: dict[str, object]) -> dict[str, object]:
        answer = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
        return {"messages": [{"role": "user", "content": "hi"}, assistant, answer]}

    assert openai_history_problem(body(call('{"a": 1}')), "litellm") is None
    assert openai_history_problem(body(call("")), "litellm") is None
    assert openai_history_problem(body(call('{"a": 1 "b": 2}')), "litellm") == (
        "litellm.BadRequestError: AnthropicException - "
        "Expecting ',' delimiter: line 1 column 9 (char 8)"
    )
    assert openai_history_problem(body(call("[1]")), "litellm") == (
        "litellm.BadRequestError: AnthropicException - "
        "tool_use.input: Input should be a valid dictionary"
    )
    assert openai_history_problem(body(call('{"a": 1 "b": 2}'))) is None  # OpenAI does not look
    unsigned = {**call("{}"), "thinking_blocks": [{"type": "thinking", "thinking": "t"}]}
    assert openai_history_problem(body(unsigned), "litellm") == (
        "messages.1.content.0.thinking.signature: Field required"
    )
    empty = {**call("{}"), "thinking_blocks": [{"type": "redacted_thinking", "data": ""}]}
    assert openai_history_problem(body(empty), "litellm") == (
        "messages.1.content.0.redacted_thinking.data: Field required"
    )


def _chat(url: str) -> httpx.Response:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    return httpx.post(f"{url}/chat/completions", json=body)


def test_the_gateway_hands_on_the_provider_s_headers_renamed() -> None:
    with FakeModelServer(gateway="litellm") as gateway, FakeModelServer() as plain:
        for fake in (gateway, plain):
            fake.enqueue(openai_error(429, "slow down", headers={"retry-after": "3"}))
        renamed, direct = _chat(gateway.openai_url), _chat(plain.openai_url)
    assert renamed.headers["llm_provider-retry-after"] == "3"
    assert "retry-after" not in renamed.headers
    assert direct.headers["retry-after"] == "3"


def test_the_gateway_streams_thinking_as_litellm_does() -> None:
    answer = reply(Thinking("a b", signature="sig-1"), RedactedThinking("ENC=="), "done")
    with FakeModelServer(gateway="litellm") as gateway, FakeModelServer() as plain:
        gateway.enqueue(answer)
        plain.enqueue(answer)
        streams = [_chat(fake.openai_url).text for fake in (gateway, plain)]
    litellm, openai = (
        [
            json.loads(line[6:])["choices"][0]["delta"]
            for line in text.splitlines()
            if line.startswith("data: {") and '"delta"' in line
        ]
        for text in streams
    )

    def delta(**fields: object) -> dict[str, object]:
        return {"content": "", **fields}

    def thinking(text: str, signature: str = "") -> dict[str, object]:
        block = {"type": "thinking", "thinking": text, "signature": signature}
        fields = {
            "thinking_blocks": [block],
            "provider_specific_fields": {"thinking_blocks": [block]},
        }
        return delta(**fields, reasoning_content=text)

    redacted = {"type": "redacted_thinking", "data": "ENC=="}
    assert litellm[1:5] == [
        thinking("a "),
        thinking("b"),
        thinking("", "sig-1"),
        delta(thinking_blocks=[redacted], provider_specific_fields={"thinking_blocks": [redacted]}),
    ]
    assert openai[1:4] == [
        {"reasoning_content": "a "},
        {"reasoning_content": "b"},
        {"content": "done"},
    ]


async def test_openai_missing_tool_message_gets_the_api_400(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    two_calls = AssistantMessage(
        content=(ToolUseBlock("call_1", "f", {}), ToolUseBlock("call_2", "f", {}))
    )
    request = make_request(UserMessage.of_text("go"), two_calls, _result("call_1"), model="m")
    error, _ = await failure(openai, request, InvalidRequest)
    assert "did not have response messages: call_2" in str(error)
    assert len(server.take_violations()) == 1


def test_unexpected_request_gets_500_and_fails_verify() -> None:
    fake = FakeModelServer()
    with fake:
        response = httpx.post(
            f"{fake.url}/v1/messages",
            json={"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]},
        )
        assert response.status_code == 500
        assert "no scripted response left" in response.json()["error"]["message"]
        with pytest.raises(AssertionError, match="no scripted response left"):
            fake.verify()
        assert len(fake.take_unexpected()) == 1  # provoked on purpose


def test_unused_responses_fail_on_exit_unless_allowed() -> None:
    with pytest.raises(AssertionError, match="1 scripted response"), FakeModelServer() as fake:
        fake.enqueue(anthropic_text("nobody asks"))
    with FakeModelServer(allow_unused=True) as relaxed:
        relaxed.enqueue(anthropic_text("nobody asks"))


async def test_a_response_for_the_other_protocol_is_rejected(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(anthropic_text("wrong wire"))
    await failure(openai, make_request(model="m"), ServerError)
    (problem,) = server.take_unexpected()  # provoked on purpose
    assert problem.reason == "a anthropic response was scripted"


async def test_reply_renders_for_either_protocol(server: FakeModelServer) -> None:
    answer = reply(Text("same words"), ToolCall("id_1", "f", {"x": 1}))
    server.enqueue(answer, answer)
    anthropic = AnthropicProvider(api_key="k", base_url=server.url)
    openai = OpenAIChatProvider(api_key="k", base_url=server.openai_url)
    try:
        one = await final_message(anthropic, make_request())
        two = await final_message(openai, make_request(model="m"))
    finally:
        await anthropic.aclose()
        await openai.aclose()
    assert one.content == two.content
    assert (one.stop_reason, two.stop_reason) == ("tool_use", "tool_use")


async def test_reply_renders_redacted_thinking_for_anthropic(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(reply(RedactedThinking("ENC=="), "After."))
    message = await final_message(anthropic, make_request())
    assert message.content == (RedactedThinkingBlock("ENC=="), TextBlock("After."))


async def test_responder_builds_answers_from_requests(server: FakeModelServer) -> None:
    def echo(request: RecordedRequest) -> Reply:
        return reply(f"turn {len(request.messages)} via {request.protocol}")

    server.respond_with(echo)
    provider = AnthropicProvider(api_key="k", base_url=server.url)
    try:
        history: list[UserMessage | AssistantMessage] = [UserMessage.of_text("1")]
        for _ in range(3):
            message = await final_message(provider, make_request(*history))
            history += [message, UserMessage.of_text("again")]
    finally:
        await provider.aclose()
    assert [m.text for m in history if isinstance(m, AssistantMessage)] == [
        "turn 1 via anthropic",
        "turn 3 via anthropic",
        "turn 5 via anthropic",
    ]


async def test_instant_mode_and_queue_come_before_the_responder() -> None:
    with FakeModelServer(instant=True) as fake:
        fake.enqueue(openai_text("queued"))
        fake.respond_with(lambda request: reply("responder"))
        provider = OpenAIChatProvider(base_url=fake.openai_url)
        try:
            texts = [
                (await final_message(provider, make_request(model="m"))).text for _ in range(2)
            ]
        finally:
            await provider.aclose()
    assert texts == ["queued", "responder"]


async def test_serves_a_subprocess_while_the_test_awaits_it(server: FakeModelServer) -> None:
    server.enqueue(openai_text("from another process"))
    script = (
        "import sys, httpx\n"
        "r = httpx.post(sys.argv[1] + '/chat/completions', json={'model': 'm', 'messages': "
        "[{'role': 'user', 'content': 'hi'}], 'stream': True})\n"
        "print(r.status_code, r.text.strip().endswith('data: [DONE]'))\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, server.openai_url, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=20)
    assert process.returncode == 0
    assert out.decode().split() == ["200", "True"]
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "hi"}]


def test_sync_callers_work_and_see_headers() -> None:
    with FakeModelServer() as fake:
        fake.enqueue(anthropic_text("sync"))
        response = httpx.post(
            f"{fake.url}/v1/messages",
            headers={"x-api-key": "k"},
            json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
        )
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "event: message_start" in response.text
        assert fake.requests[0].headers["x-api-key"] == "k"
