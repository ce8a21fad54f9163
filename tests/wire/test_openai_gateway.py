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

from stayer.errors import ConnectionLost, ModelError, Overloaded, RateLimited, ServerError
from stayer.events import (
    BlockCompleted,
    Event,
    Retrying,
    Terminal,
    ToolCallFinished,
    Withdrawn,
)
from stayer.loop.state import RetryPolicy
from stayer.messages import (
    ToolUseBlock,
)
from stayer.providers.base import UNPARSED_INPUT_KEY
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    ToolCall,
    openai_error,
    openai_stream,
    reply,
)
from tests.fakes.tools import Echo
from tests.wire.helpers import failure, final_message, make_request

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


async def test_stop_inside_the_arguments_is_a_cut_stream(
    gateway: FakeModelServer, client: OpenAIChatProvider
) -> None:
    gateway.enqueue(
        openai_stream(ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS), finish_reason="stop")
    )
    error, seen = await failure(client, make_request(model="m"), ConnectionLost)
    assert str(error) == (
        "the openai stream stopped inside the arguments of its Echo call (Unterminated string "
        "starting at line 1 column 10), so the response was cut short; try again"
    )
    assert error.retryable
    assert not any(isinstance(event, BlockCompleted) for event in seen)


async def test_a_session_retries_a_stream_cut_inside_the_arguments(
    gateway: FakeModelServer, client: OpenAIChatProvider, tmp_path: Path
) -> None:
    cut = ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS)
    gateway.enqueue(openai_stream(cut, finish_reason="stop"), reply(ECHO_HI), reply("Done."))
    events = await _session(client, tmp_path)

    assert finished(events).terminal is Terminal.COMPLETED
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert (retrying.attempt, retrying.status) == (1, None)
    assert "stopped inside the arguments of its Echo call" in retrying.error
    assert len([e for e in events if isinstance(e, Withdrawn)]) == 1
    (ran,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (ran.status, ran.result.text) == ("completed", "hi")
    first, again, _ = gateway.requests
    assert first.body == again.body


@pytest.mark.parametrize(("finish", "stop"), [("tool_calls", "tool_use"), ("length", "max_tokens")])
async def test_bad_arguments_under_other_finish_reasons_are_the_model_s(
    gateway: FakeModelServer, client: OpenAIChatProvider, finish: str, stop: str
) -> None:
    gateway.enqueue(
        openai_stream(ToolCall("call_1", "Echo", raw_input=CUT_ARGUMENTS), finish_reason=finish)
    )
    message = await final_message(client, make_request(model="m"))
    assert message.content == (ToolUseBlock("call_1", "Echo", {UNPARSED_INPUT_KEY: CUT_ARGUMENTS}),)
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
