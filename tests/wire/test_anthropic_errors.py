"""Every way an Anthropic call fails becomes one typed error with a one-line message."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from stayer.errors import (
    AuthenticationFailed,
    BadResponse,
    ConnectionLost,
    InvalidRequest,
    ModelError,
    Overloaded,
    PromptTooLong,
    RateLimited,
    ServerError,
)
from stayer.events import MessageStarted, TextDelta
from stayer.providers.anthropic import AnthropicProvider
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Frame,
    HttpError,
    Stream,
    anthropic_error,
    anthropic_error_event,
    anthropic_event,
    anthropic_message_start,
    anthropic_text,
    garbage_error,
    garbage_frame,
)
from tests.wire.helpers import closed_port, collect, failure, make_request


async def test_rate_limit_carries_retry_after_seconds(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(
        anthropic_error(
            429, "rate_limit_error", "Number of requests exceeded", headers={"retry-after": "7"}
        )
    )
    error, _ = await failure(anthropic, make_request(), RateLimited)
    assert isinstance(error, RateLimited)
    assert (error.status, error.retry_after, error.retryable) == (429, 7.0, True)
    assert str(error) == ("rate limited (429): Number of requests exceeded; retry after 7 s")


async def test_retry_after_ms_wins_over_retry_after(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "30"}
    server.enqueue(anthropic_error(429, "rate_limit_error", "slow down", headers=headers))
    error, _ = await failure(anthropic, make_request(), RateLimited)
    assert isinstance(error, RateLimited)
    assert error.retry_after == 1.5


async def test_retry_after_as_http_date(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    when = formatdate(time.time() + 30, usegmt=True)
    server.enqueue(anthropic_error(429, "rate_limit_error", "later", headers={"retry-after": when}))
    error, _ = await failure(anthropic, make_request(), RateLimited)
    assert isinstance(error, RateLimited)
    assert error.retry_after is not None
    assert 25 < error.retry_after <= 31


async def test_529_is_overloaded(server: FakeModelServer, anthropic: AnthropicProvider) -> None:
    server.enqueue(anthropic_error(529, "overloaded_error", "Overloaded"))
    error, _ = await failure(anthropic, make_request(), Overloaded)
    assert error.status == 529
    assert error.retryable
    assert str(error) == "anthropic is overloaded (529): Overloaded; try again shortly"


async def test_529_carries_the_wait_the_server_asked_for(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    headers = {"retry-after": "12"}
    server.enqueue(anthropic_error(529, "overloaded_error", "Overloaded", headers=headers))
    error, _ = await failure(anthropic, make_request(), Overloaded)
    assert (error.status, error.retry_after) == (529, 12.0)


async def test_overloaded_error_type_wins_over_a_plain_5xx(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_error(503, "overloaded_error", "Overloaded"))
    error, _ = await failure(anthropic, make_request(), Overloaded)
    assert error.status == 503


async def test_mid_stream_overloaded_error_after_http_200(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    stream = anthropic_text("partial answer here")
    at = stream.index_of('"answer "')
    server.enqueue(stream.truncated(at).with_frame(at, anthropic_error_event()))
    error, seen = await failure(anthropic, make_request(), Overloaded)
    assert error.status == 529
    assert "overloaded_error during the stream" in str(error)
    # What streamed before the error was already delivered.
    assert isinstance(seen[0], MessageStarted)
    assert seen[-1] == TextDelta(0, "partial ")


async def test_mid_stream_error_of_another_type(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    frames = (anthropic_message_start(), anthropic_error_event("api_error", "Internal error"))
    server.enqueue(Stream(frames, protocol="anthropic"))
    error, _ = await failure(anthropic, make_request(), ServerError)
    assert error.status == 500


async def test_prompt_too_long_carries_both_numbers(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    message = "prompt is too long: 210345 tokens > 200000 maximum"
    server.enqueue(anthropic_error(400, "invalid_request_error", message))
    error, _ = await failure(anthropic, make_request(), PromptTooLong)
    assert isinstance(error, PromptTooLong)
    assert (error.tokens, error.limit, error.status) == (210345, 200000, 400)
    assert not error.retryable
    assert str(error) == (
        "the conversation is too long for the model (210345 tokens, limit 200000); "
        "compact it or start a new session"
    )


@pytest.mark.parametrize(
    ("status", "error_type", "expected", "hint"),
    [
        (400, "invalid_request_error", InvalidRequest, "not accepted"),
        (404, "not_found_error", InvalidRequest, "ANTHROPIC_BASE_URL"),
        (413, "request_too_large", InvalidRequest, "size limit"),
        (422, "invalid_request_error", InvalidRequest, "not accepted"),
        (401, "authentication_error", AuthenticationFailed, "ANTHROPIC_API_KEY"),
        (403, "permission_error", AuthenticationFailed, "ANTHROPIC_API_KEY"),
        (408, "timeout_error", ServerError, "try again"),
        (409, "conflict_error", ServerError, "try again"),
        (500, "api_error", ServerError, "try again"),
        (504, "timeout_error", ServerError, "try again"),
    ],
)
async def test_status_mapping(
    server: FakeModelServer,
    anthropic: AnthropicProvider,
    status: int,
    error_type: str,
    expected: type[ModelError],
    hint: str,
) -> None:
    server.enqueue(anthropic_error(status, error_type, "the server says no"))
    error, _ = await failure(anthropic, make_request(), expected)
    assert type(error) is expected
    assert error.status == status
    assert f"({status}): " in str(error)
    assert "the server says no" in str(error)
    assert hint in str(error)


async def test_401_message_says_what_to_do(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    error, _ = await failure(anthropic, make_request(), AuthenticationFailed)
    assert str(error) == (
        "authentication failed (401): the API key was refused: invalid x-api-key; "
        "check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
    )


async def test_html_error_body_still_gives_a_clean_error(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(garbage_error(502))
    error, _ = await failure(anthropic, make_request(), ServerError)
    assert error.status == 502
    assert "<" not in str(error)
    assert "502 Bad Gateway" in str(error)


async def test_garbage_400_body_is_an_invalid_request(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(HttpError(400, b"\xff\xfe not json at all", content_type="text/plain"))
    await failure(anthropic, make_request(), InvalidRequest)


async def test_cut_connection_is_connection_lost(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("never finished").cut(after=4))
    error, seen = await failure(anthropic, make_request(), ConnectionLost)
    assert error.retryable
    assert any(isinstance(e, TextDelta) for e in seen)


async def test_stream_ending_before_message_stop_is_connection_lost(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    stream = anthropic_text("short")
    server.enqueue(stream.truncated(len(stream.frames) - 1))
    error, _ = await failure(anthropic, make_request(), ConnectionLost)
    assert "before the message was complete" in str(error)


async def test_stall_before_headers_hits_the_read_timeout(server: FakeModelServer) -> None:
    server.enqueue(anthropic_text("late").stalled(before_headers=2.0))
    provider = AnthropicProvider(api_key="k", base_url=server.url, read_timeout_s=0.2)
    try:
        error, _ = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    assert "sent nothing for 0.2 s" in str(error)


async def test_stall_between_events_hits_the_read_timeout(server: FakeModelServer) -> None:
    stream = anthropic_text("slow words here")
    server.enqueue(stream.stalled(at=stream.index_of('"words "'), seconds=2.0))
    provider = AnthropicProvider(api_key="k", base_url=server.url, read_timeout_s=0.2)
    try:
        _, seen = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    assert TextDelta(0, "slow ") in seen


async def test_garbage_data_line_is_a_bad_response(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(anthropic_text("fine until").with_frame(3, garbage_frame()))
    error, _ = await failure(anthropic, make_request(), BadResponse)
    assert "not JSON" in str(error)
    assert error.retryable  # a garbled line mid-stream may not happen again


async def test_json_instead_of_an_event_stream_is_a_bad_response(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(HttpError(200, b'{"content": []}'))
    error, _ = await failure(anthropic, make_request(), BadResponse)
    assert "expected an event stream" in str(error)
    assert not error.retryable  # the base URL points at something else: retrying cannot help


async def test_a_redirect_is_not_retried(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(HttpError(301, b"moved", headers={"location": "https://elsewhere"}))
    error, _ = await failure(anthropic, make_request(), BadResponse)
    assert error.status == 301
    assert not error.retryable


@pytest.mark.parametrize(
    "first",
    [
        anthropic_event(
            "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "x"}}
        ),
        anthropic_event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {}}),
    ],
)
async def test_events_before_message_start_are_a_bad_response(
    server: FakeModelServer, anthropic: AnthropicProvider, first: Frame
) -> None:
    rest = anthropic_text("x").frames
    server.enqueue(Stream((first, *rest), protocol="anthropic"))
    await failure(anthropic, make_request(), BadResponse)


async def test_delta_for_a_block_never_started_is_a_bad_response(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    frames = (
        anthropic_message_start(),
        anthropic_event(
            "content_block_delta", {"index": 3, "delta": {"type": "text_delta", "text": "x"}}
        ),
    )
    server.enqueue(Stream(frames, protocol="anthropic"))
    error, _ = await failure(anthropic, make_request(), BadResponse)
    assert "block 3" in str(error)


async def test_delta_of_the_wrong_kind_is_a_bad_response(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    stream = anthropic_text("x")
    wrong = anthropic_event(
        "content_block_delta",
        {"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}},
    )
    server.enqueue(stream.with_frame(3, wrong))
    await failure(anthropic, make_request(), BadResponse)


async def test_nobody_listening_is_connection_lost() -> None:
    provider = AnthropicProvider(api_key="k", base_url=f"http://127.0.0.1:{closed_port()}")
    try:
        error, _ = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    assert "could not connect" in str(error)


async def test_a_base_url_that_is_not_http_is_an_invalid_request() -> None:
    provider = AnthropicProvider(api_key="k", base_url="ftp://127.0.0.1")
    try:
        error, _ = await failure(provider, make_request(), InvalidRequest)
    finally:
        await provider.aclose()
    assert "ANTHROPIC_BASE_URL" in str(error)


@pytest.mark.parametrize(
    ("status", "header", "retryable"), [(500, "false", False), (400, "true", True)]
)
async def test_the_servers_x_should_retry_overrides_the_status(
    server: FakeModelServer,
    anthropic: AnthropicProvider,
    status: int,
    header: str,
    retryable: bool,
) -> None:
    body = b'{"type":"error","error":{"type":"api_error","message":"hmm"}}'
    server.enqueue(HttpError(status, body, headers={"x-should-retry": header}))
    with pytest.raises(ModelError) as caught:
        await collect(anthropic, make_request())
    assert caught.value.retryable is retryable
