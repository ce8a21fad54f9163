"""How a model call that gives no answer ends the run, seen from the loop: an image the API
refuses ends it as `image_error` (Claude Code's reason), with what to do, and is not sent
again; a stream that stops before its answer is complete ends it as `model_error`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from msgspec.structs import replace

from stayer.errors import InvalidRequest
from stayer.events import (
    Continue,
    Continuing,
    Event,
    Finished,
    MessageStarted,
    RequestStarted,
    StreamEvent,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsAppended,
)
from stayer.loop.recovery import IMAGE_ADVICE
from stayer.loop.run import query
from stayer.messages import ImageBlock, TextBlock, ToolResultBlock, Usage, UserMessage
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import ModelRequest, Provider
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.scripted import Fault, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import assert_valid_history, finished, make_params, run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_error, openai_error
from tests.fakes.tools import Echo

TOO_LARGE = InvalidRequest(
    "request rejected (400 invalid_request_error): messages.0.content.1.image.source.base64: "
    "image exceeds 5 MB maximum: 6291456 bytes > 5242880 bytes; the request was not accepted "
    "as sent; check the model name and options",
    status=400,
)
PICTURE = ImageBlock("image/png", "iVBORw0KGgo=")


async def test_a_refused_image_in_the_prompt_ends_the_run_as_an_image_error(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([Fault(TOO_LARGE)])
    prompt = UserMessage((TextBlock("what is in this picture?"), PICTURE))
    params = make_params(model, [Echo()], tmp_path)
    events = [event async for event in query(params, (prompt,))]

    assert events[:-1] == [RequestStarted(1)]  # refused for good: never sent again
    end = finished(events)
    assert (end.terminal, end.is_error, end.error_status) == (Terminal.IMAGE_ERROR, True, 400)
    assert end.message == (
        "request rejected (400 invalid_request_error): messages.0.content.1.image.source.base64"
        f": image exceeds 5 MB maximum: 6291456 bytes > 5242880 bytes; {IMAGE_ADVICE}"
    )
    assert end.messages == (prompt,)
    assert_valid_history(end.messages)
    model.assert_done()


async def test_an_image_refused_after_a_tool_round_ends_the_run_there(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Echo", {"text": "look"}), Fault(TOO_LARGE)])
    events = await run(make_params(model, [Echo()], tmp_path))

    calling = tool_call("Echo", {"text": "look"})
    reference = ScriptedProvider([calling])
    request = ModelRequest(model="scripted", system="", messages=(), tools=(), max_tokens=1)
    first = [event async for event in reference.stream(request)]
    result = ToolResultBlock("toolu_echo", (TextBlock("look"),))
    timeless = [
        replace(e, duration_ms=0.0) if isinstance(e, ToolCallFinished) else e for e in events
    ]
    assert timeless[:-1] == [
        RequestStarted(1),
        *first[:4],
        ToolCallStarted("toolu_echo", "Echo", {"text": "look"}),
        *first[4:],
        ToolCallFinished("toolu_echo", "Echo", "completed", result, 0.0, {"echoed": "look"}),
        ToolResultsAppended(UserMessage((result,)), ({"echoed": "look"},)),
        Continuing(Continue.NEXT_TURN),
        RequestStarted(2),
    ]
    end = finished(events)
    assert (end.terminal, end.num_turns) == (Terminal.IMAGE_ERROR, 2)
    assert len(end.messages) == 3  # the call and its result stay: the history is valid


class StopsEarly:
    """A model whose stream starts an answer and ends without completing it."""

    name = "early"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield MessageStarted("msg_early", "early", Usage(input_tokens=10))

    async def aclose(self) -> None:
        return None


async def test_a_stream_that_ends_before_its_answer_is_complete_is_a_model_error(
    tmp_path: Path,
) -> None:
    events: list[Event] = await run(make_params(StopsEarly(), [Echo()], tmp_path))

    assert events[:-1] == [RequestStarted(1), MessageStarted("msg_early", "early", Usage(10))]
    end = finished(events)
    assert (end.terminal, end.message) == (
        Terminal.MODEL_ERROR,
        "the model's response ended before it was complete",
    )
    assert end.usage == Usage(input_tokens=10)  # what it started with is still billed


async def test_other_refusals_of_the_request_stay_model_errors(tmp_path: Path) -> None:
    refused = InvalidRequest("request rejected (400): max_tokens: too large", status=400)
    model = ScriptedProvider([Fault(refused), text("never")])
    events = await run(make_params(model, [Echo()], tmp_path), strict=False)

    end = finished(events)
    assert (end.terminal, end.message) == (Terminal.MODEL_ERROR, str(refused))
    assert model.remaining == 1


ANTHROPIC_TOO_LARGE = (
    "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 6291456 bytes > "
    "5242880 bytes"
)
OPENAI_UNSUPPORTED = (
    "You uploaded an unsupported image. Please make sure your image has of one the following "
    "formats: ['png', 'jpeg', 'gif', 'webp']."
)


async def test_anthropics_refusal_of_an_image_over_the_wire_is_an_image_error(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        server.enqueue(anthropic_error(400, "invalid_request_error", ANTHROPIC_TOO_LARGE))
        provider = AnthropicProvider(api_key="test-key", base_url=server.url)
        try:
            end = await _picture_run(tmp_path, provider)
        finally:
            await provider.aclose()
    assert (end.terminal, end.error_status) == (Terminal.IMAGE_ERROR, 400)
    assert end.message == f"request rejected (400): {ANTHROPIC_TOO_LARGE}; {IMAGE_ADVICE}"


async def test_openais_refusal_of_an_image_over_the_wire_is_an_image_error(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        server.enqueue(openai_error(400, OPENAI_UNSUPPORTED, code="invalid_image_format"))
        provider = OpenAIChatProvider(api_key="test-key", base_url=server.openai_url)
        try:
            end = await _picture_run(tmp_path, provider)
        finally:
            await provider.aclose()
    assert (end.terminal, end.error_status) == (Terminal.IMAGE_ERROR, 400)
    assert end.message.endswith(f"{OPENAI_UNSUPPORTED}; {IMAGE_ADVICE}"), end.message


async def _picture_run(tmp_path: Path, provider: Provider) -> Finished:
    prompt = UserMessage((TextBlock("what is in this picture?"), PICTURE))
    params = make_params(provider, [Echo()], tmp_path)
    events = [event async for event in query(params, (prompt,))]
    assert events[:-1] == [RequestStarted(1)]
    end = finished(events)
    assert end.messages == (prompt,)
    return end
