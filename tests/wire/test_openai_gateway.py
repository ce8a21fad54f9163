"""The OpenAI-compatible client through LiteLLM in front of Anthropic, over the real wire.

The gateway fake (`FakeModelServer(gateway="litellm")`) refuses what LiteLLM cannot translate
to Anthropic, renames the provider's headers and streams thinking as `thinking_blocks`; plain
OpenAI refuses any message field it does not know. Sessions run the real loop on the real
client, so a request the gateway would refuse ends the session as it would for a user.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from stayer.errors import ModelError, Overloaded, RateLimited, ServerError, ToolInputCut
from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Event,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    Retrying,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolInputDelta,
    Withdrawn,
)
from stayer.loop.state import RetryPolicy
from stayer.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.base import json_problem
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    RedactedThinking,
    Reply,
    Stream,
    Thinking,
    ToolCall,
    litellm_thinking_delta,
    openai_chunk,
    openai_done,
    openai_error,
    openai_stream,
    reply,
)
from tests.fakes.tools import Echo
from tests.wire.helpers import collect, failure, final_message, make_request

ECHO_HI = ToolCall("call_1", "Echo", {"text": "hi"})
CUT_ARGUMENTS = '{"text": "hel'


@pytest.fixture
def gateway() -> Iterator[FakeModelServer]:
    """LiteLLM in front of Anthropic; leftovers and refused requests fail the test."""
    with FakeModelServer(gateway="litellm") as fake:
        yield fake


@pytest.fixture
async def client(gateway: FakeModelServer) -> AsyncIterator[OpenAIChatProvider]:
    """Our OpenAI-compatible client pointed at the gateway."""
    provider = OpenAIChatProvider(api_key="k", base_url=gateway.openai_url, read_timeout_s=5.0)
    yield provider
    await provider.aclose()


async def _session(
    provider: OpenAIChatProvider, tmp_path: Path, retry: RetryPolicy | None = None
) -> list[Event]:
    return await run(make_params(provider, [Echo()], tmp_path, retry=retry), "echo hi")


def _call(arguments: str) -> dict[str, object]:
    function = {"name": "Echo", "arguments": arguments}
    return {"id": "call_1", "type": "function", "function": function}


# --- 13: tool arguments that are not JSON --------------------------------------------------


async def test_a_session_goes_on_after_the_model_wrote_bad_tool_arguments(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    gateway.enqueue(
        reply(ToolCall("call_1", "Echo", raw_input='{"text": "hi" "there"}')),
        reply("Sorry, fixed."),
    )
    events = await _session(client, tmp_path)

    assert finished(events).terminal is Terminal.COMPLETED
    assert finished(events).result_text == "Sorry, fixed."
    assistant, result = gateway.requests[1].messages[2:4]
    assert assistant == {"role": "assistant", "content": None, "tool_calls": [_call("{}")]}
    assert result == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "InputValidationError: the input was not a JSON object (Expecting ',' "
        "delimiter at line 1 column 15), so Echo did not run. Call it again with the whole "
        'input as one JSON object. The input as received:\n{"text": "hi" "there"}',
    }


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (CUT_ARGUMENTS, "Unterminated string starting at line 1 column 10"),
        ('{"text": "hi", "n": 1', "Expecting ',' delimiter at line 1 column 22"),
        ('{"text": "hi", "n":', "Expecting value at line 1 column 20"),
        ('{"text": "hi" "n": [1', "Expecting ',' delimiter at line 1 column 15"),  # left open
    ],
)
async def test_stop_inside_the_arguments_is_a_cut_stream(
    gateway: FakeModelServer, client: OpenAIChatProvider, raw: str, problem: str
) -> None:
    gateway.enqueue(openai_stream(ToolCall("call_1", "Echo", raw_input=raw), finish_reason="stop"))
    error, seen = await failure(client, make_request(model="m"), ToolInputCut)
    assert str(error) == (
        f"the openai stream stopped inside the arguments of its Echo call ({problem}), so the "
        "response was cut short; try again"
    )
    assert (error.retryable, error.retry_limit) == (True, 2)
    assert not any(isinstance(event, BlockCompleted) for event in seen)


async def test_a_session_retries_a_stream_cut_inside_the_arguments(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    cut = ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS)
    gateway.enqueue(openai_stream(cut, finish_reason="stop"), reply(ECHO_HI), reply("Done."))
    events = await _session(client, tmp_path)

    assert finished(events).terminal is Terminal.COMPLETED
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert (retrying.attempt, retrying.max_retries, retrying.status) == (1, 2, None)
    assert "stopped inside the arguments of its Echo call" in retrying.error
    assert len([e for e in events if isinstance(e, Withdrawn)]) == 1
    (ran,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (ran.status, ran.result.text) == ("completed", "hi")
    first, again, _ = gateway.requests
    assert first.body == again.body


async def test_a_server_that_always_cuts_the_arguments_is_given_up_on_after_two_retries(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    cut = openai_stream(ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS), finish_reason="stop")
    gateway.enqueue(cut, cut, cut)
    events = await _session(client, tmp_path)

    assert finished(events).terminal is Terminal.MODEL_ERROR
    assert "stopped inside the arguments of its Echo call" in finished(events).message
    retries = [(e.attempt, e.max_retries) for e in events if isinstance(e, Retrying)]
    assert retries == [(1, 2), (2, 2)]
    assert len(gateway.requests) == 3


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"text": "hi", }', "Expecting property name enclosed in double quotes"),
        ('{"text": "hi"}}', "Extra data"),
        ('{"text": ["hi"}', "Expecting ',' delimiter"),
        ('{"text": "hi" "there"}', "Expecting ',' delimiter"),
        ("hi", "Expecting value"),
    ],
)
async def test_whole_but_invalid_arguments_under_stop_are_the_model_s(
    gateway: FakeModelServer, client: OpenAIChatProvider, raw: str, problem: str
) -> None:
    # Some local servers say "stop" after every tool call: arguments that end where a value
    # would are what the model wrote, not a cut stream.
    assert problem in str(json_problem(raw))
    gateway.enqueue(openai_stream(ToolCall("call_1", "Echo", raw_input=raw), finish_reason="stop"))
    message = await final_message(client, make_request(model="m"))
    assert (message.content, message.stop_reason) == (
        (ToolUseBlock("call_1", "Echo", {}, unparsed=raw),),
        "tool_use",
    )


async def test_a_trailing_comma_under_stop_goes_back_to_the_model_and_the_session_goes_on(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    trailing = ToolCall("call_1", "Echo", raw_input='{"text": "hi", }')
    gateway.enqueue(openai_stream(trailing, finish_reason="stop"), reply("Sorry, fixed."))
    events = await _session(client, tmp_path)

    assert finished(events).terminal is Terminal.COMPLETED
    assert finished(events).result_text == "Sorry, fixed."
    assert not any(isinstance(e, Retrying) for e in events)
    assert gateway.requests[1].messages[3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "InputValidationError: the input was not a JSON object (Expecting property "
        "name enclosed in double quotes at line 1 column 16), so Echo did not run. Call it "
        "again with the whole input as one JSON object. The input as received:\n"
        '{"text": "hi", }',
    }


@pytest.mark.parametrize(("finish", "stop"), [("tool_calls", "tool_use"), ("length", "max_tokens")])
async def test_bad_arguments_under_other_finish_reasons_are_the_model_s(
    gateway: FakeModelServer, client: OpenAIChatProvider, finish: str, stop: str
) -> None:
    gateway.enqueue(
        openai_stream(ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS), finish_reason=finish)
    )
    message = await final_message(client, make_request(model="m"))
    assert message.content == (ToolUseBlock("call_1", "Echo", {}, unparsed=CUT_ARGUMENTS),)
    assert message.stop_reason == stop


async def test_stop_after_arguments_that_parse_still_runs_the_tool(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    gateway.enqueue(openai_stream(ECHO_HI, finish_reason="stop"))
    message = await final_message(client, make_request(model="m"))
    assert (message.tool_uses, message.stop_reason) == (
        (ToolUseBlock("call_1", "Echo", {"text": "hi"}),),
        "tool_use",
    )


# --- 14: the server's requested wait, under any name and any retryable status -------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"llm_provider-retry-after": "2"}, 2.0),
        ({"llm_provider-retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "oops", "llm_provider-retry-after": "4"}, 4.0),
        ({"retry-after": "1", "llm_provider-retry-after": "9"}, 1.0),
    ],
)
async def test_every_spelling_of_retry_after_is_honoured(
    server: FakeModelServer,
    openai: OpenAIChatProvider,
    headers: dict[str, str],
    expected: float,
) -> None:
    server.enqueue(openai_error(429, "slow down", code="rate_limit_exceeded", headers=headers))
    error, _ = await failure(openai, make_request(model="m"), RateLimited)
    assert error.retry_after == expected


@pytest.mark.parametrize(
    ("status", "error_type", "expected"),
    [
        (429, "rate_limit_error", RateLimited),
        (529, "overloaded_error", Overloaded),
        (503, "api_error", ServerError),
    ],
)
async def test_any_retryable_status_carries_the_wait_the_gateway_passed_on(
    gateway: FakeModelServer,
    client: OpenAIChatProvider,
    status: int,
    error_type: str,
    expected: type[ModelError],
) -> None:
    # Scripted as Anthropic sent it; the gateway hands it on as llm_provider-retry-after.
    gateway.enqueue(
        openai_error(status, "busy", error_type=error_type, headers={"retry-after": "7"})
    )
    error, _ = await failure(client, make_request(model="m"), expected)
    assert (type(error), error.status, error.retry_after) == (expected, status, 7.0)


@pytest.mark.parametrize("status", [529, 503])
async def test_the_loop_waits_as_long_as_the_server_asked_after_any_retryable_status(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path, status: int
) -> None:
    busy = openai_error(
        status, "busy", error_type="overloaded_error", headers={"retry-after": "0.05"}
    )
    gateway.enqueue(busy, reply("Made it."))
    events = await _session(client, tmp_path)

    assert finished(events).result_text == "Made it."
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert (retrying.delay_s, retrying.status) == (0.05, status)


async def test_the_server_s_wait_is_capped_whatever_the_status(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    overloaded = openai_error(
        529, "busy", error_type="overloaded_error", headers={"retry-after": "3600"}
    )
    gateway.enqueue(overloaded, reply("Made it."))
    policy = RetryPolicy(base_delay_s=0.001, max_delay_s=0.01, max_retry_after_s=0.02)
    events = await _session(client, tmp_path, retry=policy)

    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert retrying.delay_s == 0.02


# --- 15: thinking through Chat Completions ---------------------------------------------------


async def test_thinking_blocks_become_one_signed_thinking_block(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    thought = Thinking("Rain, so ask.", signature="sig-A")
    gateway.enqueue(Reply((thought, ECHO_HI), message_id="chatcmpl-gw"))
    events = await collect(client, make_request(model="m"))
    thinking = ThinkingBlock("Rain, so ask.", "sig-A")
    call = ToolUseBlock("call_1", "Echo", {"text": "hi"})
    usage = Usage(input_tokens=12, output_tokens=7)
    assert [e for e in events if not isinstance(e, ToolInputDelta)] == [
        MessageStarted("chatcmpl-gw", "m", Usage()),
        BlockStarted(0, "thinking"),
        ThinkingDelta(0, "Rain, "),
        ThinkingDelta(0, "so "),
        ThinkingDelta(0, "ask."),
        BlockCompleted(0, thinking),
        BlockStarted(1, "tool_use", "call_1", "Echo"),
        BlockCompleted(1, call),
        MessageDelta("tool_use", usage),
        MessageCompleted(
            AssistantMessage(
                (thinking, call), id="chatcmpl-gw", model="m", stop_reason="tool_use", usage=usage
            )
        ),
    ]


async def test_signature_only_repeated_text_and_redacted_thinking(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    frames = (
        openai_chunk({"role": "assistant", "content": ""}),
        openai_chunk(litellm_thinking_delta(signature="sig-omitted")),  # thinking shown as omitted
        openai_chunk(litellm_thinking_delta(data="ENC==")),
        openai_chunk(litellm_thinking_delta("one ")),
        openai_chunk(litellm_thinking_delta("two")),
        openai_chunk(litellm_thinking_delta("one two", signature="sig-2")),  # the text again
        openai_chunk({"content": "Answer."}),
        openai_chunk({}, finish_reason="stop"),
        openai_done(),
    )
    gateway.enqueue(Stream(frames, protocol="openai"))
    events = await collect(client, make_request(model="m"))
    message = events[-1]
    assert isinstance(message, MessageCompleted)
    assert message.message.content == (
        ThinkingBlock("", "sig-omitted"),
        RedactedThinkingBlock("ENC=="),
        ThinkingBlock("one two", "sig-2"),
        TextBlock("Answer."),
    )
    assert [e.thinking for e in events if isinstance(e, ThinkingDelta)] == ["one ", "two"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Answer."]


async def test_the_gateway_gets_its_thinking_back_after_a_tool_call(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    gateway.enqueue(
        reply(Thinking("Echo it.", signature="sig-1"), RedactedThinking("ENC=="), ECHO_HI),
        reply("Echoed."),
    )
    events = await _session(client, tmp_path)

    assert finished(events).result_text == "Echoed."
    assert gateway.requests[1].messages[2] == {
        "role": "assistant",
        "content": None,
        "thinking_blocks": [
            {"type": "thinking", "thinking": "Echo it.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "ENC=="},
        ],
        "tool_calls": [_call('{"text": "hi"}')],
    }


async def test_plain_openai_never_sees_thinking_blocks(
    server: FakeModelServer, openai: OpenAIChatProvider, tmp_path: Path
) -> None:
    # Plain servers stream reasoning_content, which comes back unsigned: it stays with us.
    server.enqueue(reply(Thinking("Echo it."), ECHO_HI), reply("Echoed."))
    events = await _session(openai, tmp_path)

    assert finished(events).result_text == "Echoed."
    thought = finished(events).messages[1]
    assert isinstance(thought, AssistantMessage)
    assert thought.content[0] == ThinkingBlock("Echo it.", "")
    assert server.requests[1].messages[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call('{"text": "hi"}')],
    }


async def test_signed_thinking_goes_back_only_once_the_server_has_sent_some(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    # As after resuming a conversation held with Anthropic itself: the blocks are signed, but
    # nothing yet says this server wants them.
    earlier = AssistantMessage((ThinkingBlock("Old thought.", "sig-old"), TextBlock("Hello.")))
    history = (UserMessage.of_text("hi"), earlier, UserMessage.of_text("again"))
    gateway.enqueue(reply("Plain answer."), reply(Thinking("New.", signature="sig-new"), "Hm."))
    gateway.enqueue(reply("Last."))
    for _ in range(3):
        await collect(client, make_request(*history, model="m"))

    sent = [request.messages[2] for request in gateway.requests]
    old = {"type": "thinking", "thinking": "Old thought.", "signature": "sig-old"}
    assert sent == [
        {"role": "assistant", "content": "Hello."},
        {"role": "assistant", "content": "Hello."},
        {"role": "assistant", "content": "Hello.", "thinking_blocks": [old]},
    ]


async def test_unsigned_thinking_stays_behind_even_on_the_gateway(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    gateway.enqueue(reply(Thinking("Now.", signature="sig-now"), "Hm."), reply("Fine."))
    await collect(client, make_request(model="m"))
    local = AssistantMessage((ThinkingBlock("From a local model.", ""), TextBlock("Hello.")))
    await collect(
        client, make_request(UserMessage.of_text("hi"), local, UserMessage.of_text("go"), model="m")
    )
    assert gateway.requests[1].messages[2] == {"role": "assistant", "content": "Hello."}
