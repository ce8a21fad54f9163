"""Every way an OpenAI-compatible call fails becomes one typed error with a one-line message."""

from __future__ import annotations

import json

import pytest

from stayer.errors import (
    AuthenticationFailed,
    BadResponse,
    ConnectionLost,
    InvalidRequest,
    ModelError,
    Overloaded,
    PromptTooLong,
    ProtocolMismatch,
    RateLimited,
    ServerError,
)
from stayer.events import TextDelta
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    HttpError,
    Stream,
    garbage_error,
    garbage_frame,
    openai_chunk,
    openai_done,
    openai_error,
    openai_error_chunk,
    openai_text,
)
from tests.wire.helpers import failure, make_request

REQUEST = make_request(model="gpt-test")


async def test_context_length_exceeded_is_prompt_too_long_with_numbers(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    message = (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130512 tokens. Please reduce the length of the messages."
    )
    server.enqueue(openai_error(400, message, code="context_length_exceeded"))
    error, _ = await failure(openai, REQUEST, PromptTooLong)
    assert isinstance(error, PromptTooLong)
    assert (error.tokens, error.limit) == (130512, 128000)


async def test_context_length_code_without_numbers(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(openai_error(400, "too long", code="context_length_exceeded"))
    error, _ = await failure(openai, REQUEST, PromptTooLong)
    assert isinstance(error, PromptTooLong)
    assert (error.tokens, error.limit) == (None, None)


async def test_error_chunk_mid_stream(server: FakeModelServer, openai: OpenAIChatProvider) -> None:
    stream = openai_text("so far so good")
    at = stream.index_of('"far "')
    server.enqueue(
        stream.truncated(at).with_frame(at, openai_error_chunk("The server had an error"))
    )
    error, seen = await failure(openai, REQUEST, ServerError)
    assert "server_error during the stream" in str(error)
    assert seen[-1] == TextDelta(0, "so ")


async def test_error_chunk_for_context_length(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    chunk = openai_error_chunk(
        "prompt too big", error_type="invalid_request_error", code="context_length_exceeded"
    )
    server.enqueue(Stream((chunk,), protocol="openai"))
    await failure(openai, REQUEST, PromptTooLong)


async def test_rate_limit_with_retry_after(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(
        openai_error(
            429, "Rate limit reached", code="rate_limit_exceeded", headers={"retry-after": "2"}
        )
    )
    error, _ = await failure(openai, REQUEST, RateLimited)
    assert isinstance(error, RateLimited)
    assert error.retry_after == 2.0


async def test_insufficient_quota_is_not_retried(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(openai_error(429, "You exceeded your quota", error_type="insufficient_quota"))
    error, _ = await failure(openai, REQUEST, InvalidRequest)
    assert not error.retryable
    assert "billing" in str(error)


@pytest.mark.parametrize(
    ("status", "expected", "hint"),
    [
        (400, InvalidRequest, "not accepted"),
        (404, InvalidRequest, "OPENAI_BASE_URL"),
        (401, AuthenticationFailed, "OPENAI_API_KEY"),
        (403, AuthenticationFailed, "OPENAI_API_KEY"),
        (500, ServerError, "try again"),
        (503, ServerError, "try again"),
        (529, Overloaded, "try again"),
    ],
)
async def test_status_mapping(
    server: FakeModelServer,
    openai: OpenAIChatProvider,
    status: int,
    expected: type[ModelError],
    hint: str,
) -> None:
    server.enqueue(openai_error(status, "nope"))
    error, _ = await failure(openai, REQUEST, expected)
    assert type(error) is expected
    assert error.status == status
    assert hint in str(error)


async def test_ollama_plain_string_error(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    body = json.dumps({"error": "model 'llama9' not found, try pulling it first"}).encode()
    server.enqueue(HttpError(404, body))
    error, _ = await failure(openai, REQUEST, InvalidRequest)
    assert "model 'llama9' not found" in str(error)


async def test_vllm_top_level_error_object(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    body = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
        "5000 tokens in the messages.",
        "type": "BadRequestError",
        "code": 400,
    }
    server.enqueue(HttpError(400, json.dumps(body).encode()))
    error, _ = await failure(openai, REQUEST, PromptTooLong)
    assert isinstance(error, PromptTooLong)
    assert (error.tokens, error.limit) == (5000, 4096)


async def test_garbage_error_body(server: FakeModelServer, openai: OpenAIChatProvider) -> None:
    server.enqueue(garbage_error(500, "<html><title>oops</title></html>"))
    error, _ = await failure(openai, REQUEST, ServerError)
    assert "<" not in str(error)


async def test_cut_connection(server: FakeModelServer, openai: OpenAIChatProvider) -> None:
    server.enqueue(openai_text("one two three").cut(after=2))
    await failure(openai, REQUEST, ConnectionLost)


async def test_stream_ending_without_finish_or_done_is_connection_lost(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    frames = (openai_chunk({"role": "assistant"}), openai_chunk({"content": "half"}))
    server.enqueue(Stream(frames, protocol="openai"))
    error, seen = await failure(openai, REQUEST, ConnectionLost)
    assert TextDelta(0, "half") in seen
    assert "before the message was complete" in str(error)


async def test_done_without_finish_reason_completes(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    frames = (openai_chunk({"content": "ok"}), openai_done())
    server.enqueue(Stream(frames, protocol="openai"))
    events = [event async for event in openai.stream(REQUEST)]
    assert events[-1].type == "message_completed"


async def test_an_empty_stream_is_not_the_protocol(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(Stream((openai_done(),), protocol="openai"))
    error, _ = await failure(openai, REQUEST, ProtocolMismatch)
    assert "(no chat completion chunk in the stream)" in str(error)


async def test_garbage_data_line(server: FakeModelServer, openai: OpenAIChatProvider) -> None:
    server.enqueue(openai_text("hello").with_frame(1, garbage_frame("<<garbage>>")))
    await failure(openai, REQUEST, BadResponse)


async def test_stall_hits_a_short_read_timeout(server: FakeModelServer) -> None:
    server.enqueue(openai_text("zzz").stalled(at=1, seconds=2.0))
    provider = OpenAIChatProvider(base_url=server.openai_url, read_timeout_s=0.2)
    try:
        error, _ = await failure(provider, REQUEST, ConnectionLost)
    finally:
        await provider.aclose()
    assert "read timeout" in str(error)
