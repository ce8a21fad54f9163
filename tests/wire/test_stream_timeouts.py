"""A stalled server is given up on at the first-byte or idle limit, over the real wire.

Keep-alives (Anthropic `ping` events, SSE comments, chunks that carry nothing) keep the socket
busy, so the read timeout never fires; they must not keep the stream alive either. The limits
here are fractions of a second and every stall lasts far longer, so each failing test also
checks that the failure came at the limit, not at the stall's end.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from stayer.errors import ConfigError, ConnectionLost
from stayer.events import Retrying, TextDelta, Withdrawn
from stayer.messages import TextBlock
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import Provider
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.select import Timeouts, select_provider, timeouts_from_env
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Chunk,
    RawBytes,
    Stream,
    WireProtocol,
    anthropic_message_start,
    anthropic_ping,
    anthropic_text,
    openai_chunk,
    reply,
)
from tests.wire.helpers import failure, final_message, make_request

LIMIT_S = 0.4
"""The first-byte and idle limits under test."""
STALL_S = 10.0
"""How long every stall lasts."""
READ_TIMEOUT_S = 5.0
"""Longer than any test: when a stall ends a stream here, the watchdog ended it."""
PING_S = 0.02
"""Keep-alives come this often."""
SHORT_READ_TIMEOUT_S = 0.25
"""Shorter than the thinks below: only their keep-alives keep the socket from timing out."""
THINK_PINGS = 25
"""A think of 25 pings, 0.5 s or a little more: past the short read timeout."""
PATIENT_LIMIT_S = 1.5
"""The limits for thinks that must get through: well past any think here."""

FIRST_BYTE_ADVICE = (
    "so the server may be stalled; try again, or raise CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS if "
    "the model needs longer to start (0 turns the timeout off)"
)
IDLE_ADVICE = (
    "so the server may be stalled; try again, or raise CLAUDE_STREAM_IDLE_TIMEOUT_MS if the "
    "model pauses longer (0 turns the timeout off)"
)
COMMENT = RawBytes(b": keep-alive\n\n")


def watching(
    server: FakeModelServer, *, read_timeout_s: float = READ_TIMEOUT_S, limit_s: float = LIMIT_S
) -> AnthropicProvider:
    """An Anthropic client on `server` whose first-byte and idle limits are both `limit_s`."""
    return AnthropicProvider(
        api_key="k",
        base_url=server.url,
        read_timeout_s=read_timeout_s,
        first_byte_timeout_s=limit_s,
        idle_timeout_s=limit_s,
    )


def patient(server: FakeModelServer) -> AnthropicProvider:
    """A client that a long think keeps waiting only if keep-alives hold its socket open."""
    return watching(server, read_timeout_s=SHORT_READ_TIMEOUT_S, limit_s=PATIENT_LIMIT_S)


def watching_openai(server: FakeModelServer) -> OpenAIChatProvider:
    """An OpenAI-compatible client on `server` whose limits are both `LIMIT_S`."""
    return OpenAIChatProvider(
        api_key="k",
        base_url=server.openai_url,
        read_timeout_s=READ_TIMEOUT_S,
        first_byte_timeout_s=LIMIT_S,
        idle_timeout_s=LIMIT_S,
    )


def anthropic_url(server: FakeModelServer) -> str:
    return f"{server.url}/v1/messages"


def openai_url(server: FakeModelServer) -> str:
    return f"{server.openai_url}/chat/completions"


def with_keepalives(stream: Stream, at: int, keepalive: Chunk, count: int) -> Stream:
    """`count` keep-alives before frame `at`, every frame `PING_S` apart."""
    frames = (*stream.frames[:at], *[keepalive] * count, *stream.frames[at:])
    return replace(stream, frames=frames, event_delay=PING_S)


def thinking(stream: Stream) -> Stream:
    """`stream` with a think of `THINK_PINGS` pings after message_start."""
    return with_keepalives(
        stream, stream.index_of("content_block_start"), anthropic_ping(), THINK_PINGS
    )


def keepalives_only(head: Sequence[Chunk], keepalive: Chunk, protocol: WireProtocol) -> Stream:
    """`head`, then keep-alives for `STALL_S` and nothing else."""
    count = int(STALL_S / PING_S)
    return Stream((*head, *[keepalive] * count), protocol=protocol, event_delay=PING_S)


async def failure_at_the_limit(provider: Provider) -> str:
    """The one-line message a stream fails with; it must come at the limit, not later."""
    started = time.monotonic()
    try:
        error, _ = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    took = time.monotonic() - started
    assert LIMIT_S <= took < LIMIT_S + 1.5, f"gave up after {took:.2f} s, not at the limit"
    assert error.retryable
    return str(error)


def counted(message: str) -> tuple[str, int]:
    """The message with its number of keep-alives (which depends on timing) written as N."""
    match = re.search(r"only (\d+) keep-alive events", message)
    assert match is not None, message
    return message.replace(match.group(0), "only N keep-alive events"), int(match.group(1))


# --- first byte -------------------------------------------------------------------------------


async def test_a_server_that_never_sends_headers_is_given_up_on_at_the_first_byte_limit(
    server: FakeModelServer,
) -> None:
    server.enqueue(anthropic_text("late").stalled(before_headers=STALL_S))
    message = await failure_at_the_limit(watching(server))
    assert message == (
        f"the first-byte timeout fired: {anthropic_url(server)} did not start its answer "
        f"within 0.4 s of the request (not even response headers), {FIRST_BYTE_ADVICE}"
    )


async def test_headers_and_then_nothing_hit_the_first_byte_limit(server: FakeModelServer) -> None:
    server.enqueue(anthropic_text("late").stalled(at=0, seconds=STALL_S))
    message = await failure_at_the_limit(watching(server))
    assert message == (
        f"the first-byte timeout fired: {anthropic_url(server)} did not start its answer "
        f"within 0.4 s of the request (response headers, then no event), {FIRST_BYTE_ADVICE}"
    )


async def test_pings_before_the_message_starts_are_not_an_answer(server: FakeModelServer) -> None:
    server.enqueue(keepalives_only((), anthropic_ping(), "anthropic"))
    message, pings = counted(await failure_at_the_limit(watching(server)))
    assert message == (
        f"the first-byte timeout fired: {anthropic_url(server)} did not start its answer "
        "within 0.4 s of the request (response headers, then only N keep-alive events), "
        f"{FIRST_BYTE_ADVICE}"
    )
    assert pings >= 5


async def test_sse_comments_before_the_first_chunk_are_not_an_answer(
    server: FakeModelServer,
) -> None:
    server.enqueue(keepalives_only((), COMMENT, "openai"))
    message = await failure_at_the_limit(watching_openai(server))
    assert message == (
        f"the first-byte timeout fired: {openai_url(server)} did not start its answer "
        f"within 0.4 s of the request (response headers, then no event), {FIRST_BYTE_ADVICE}"
    )


async def test_a_server_that_pings_before_it_starts_is_waited_for(
    server: FakeModelServer,
) -> None:
    provider = patient(server)
    server.enqueue(with_keepalives(anthropic_text("at last"), 0, anthropic_ping(), THINK_PINGS))
    try:
        message = await final_message(provider, make_request())
    finally:
        await provider.aclose()
    assert message.content == (TextBlock("at last"),)


# --- idle ---------------------------------------------------------------------------------------


async def test_a_stream_of_nothing_but_pings_is_given_up_on_at_the_idle_limit(
    server: FakeModelServer,
) -> None:
    server.enqueue(keepalives_only((anthropic_message_start(),), anthropic_ping(), "anthropic"))
    message, pings = counted(await failure_at_the_limit(watching(server)))
    assert message == (
        f"the idle timeout fired: the stream from {anthropic_url(server)} made no progress for "
        f"0.4 s (only N keep-alive events), {IDLE_ADVICE}"
    )
    assert pings >= 5


async def test_a_model_that_pings_through_a_long_think_and_then_answers_succeeds(
    server: FakeModelServer,
) -> None:
    provider = patient(server)
    server.enqueue(thinking(anthropic_text("thought it through")))
    try:
        message = await final_message(provider, make_request())
    finally:
        await provider.aclose()
    assert message.content == (TextBlock("thought it through"),)


async def test_only_the_gaps_between_events_count_not_the_whole_answer(
    server: FakeModelServer,
) -> None:
    provider = watching(server)
    # Eleven frames 80 ms apart (a ping among them): the answer takes twice the idle limit.
    server.enqueue(replace(anthropic_text("one two three four five"), event_delay=0.08))
    try:
        message = await final_message(provider, make_request())
    finally:
        await provider.aclose()
    assert message.text == "one two three four five"


async def test_a_stream_stalled_after_partial_text_is_given_up_on_at_the_idle_limit(
    server: FakeModelServer,
) -> None:
    stream = anthropic_text("partial words then silence")
    server.enqueue(stream.stalled(at=stream.index_of('"then "'), seconds=STALL_S))
    provider = watching(server)
    started = time.monotonic()
    try:
        error, seen = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    assert time.monotonic() - started < LIMIT_S + 1.5
    assert str(error) == (
        f"the idle timeout fired: the stream from {anthropic_url(server)} made no progress for "
        f"0.4 s (no event at all), {IDLE_ADVICE}"
    )
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["partial ", "words "]


@pytest.mark.parametrize(
    ("keepalive", "seen"),
    [
        pytest.param(COMMENT, "no event at all", id="sse-comments"),  # httpx-sse drops them
        pytest.param(openai_chunk({"content": ""}), "only N keep-alive events", id="empty-delta"),
        pytest.param(
            RawBytes(b'data: {"id": "x", "choices": []}\n\n'),
            "only N keep-alive events",
            id="no-choices",
        ),
    ],
)
async def test_openai_keepalives_do_not_restart_the_idle_clock(
    server: FakeModelServer, keepalive: Chunk, seen: str
) -> None:
    head = (openai_chunk({"role": "assistant", "content": ""}), openai_chunk({"content": "Hel"}))
    server.enqueue(keepalives_only(head, keepalive, "openai"))
    message = await failure_at_the_limit(watching_openai(server))
    if "keep-alive events" in seen:
        message, _ = counted(message)
    assert message == (
        f"the idle timeout fired: the stream from {openai_url(server)} made no progress for "
        f"0.4 s ({seen}), {IDLE_ADVICE}"
    )


# --- the connection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stall",
    [
        pytest.param(anthropic_text("x").stalled(before_headers=STALL_S), id="before-headers"),
        pytest.param(anthropic_text("x").stalled(at=3, seconds=STALL_S), id="mid-stream"),
    ],
)
async def test_a_timed_out_connection_is_closed_and_the_next_calls_share_a_fresh_one(
    server: FakeModelServer, stall: Stream
) -> None:
    provider = watching(server)
    server.enqueue(stall, reply("second"), reply("third"))
    try:
        with pytest.raises(ConnectionLost):
            await final_message(provider, make_request())
        texts = [(await final_message(provider, make_request())).text for _ in range(2)]
    finally:
        await provider.aclose()
    assert texts == ["second", "third"]
    stalled, second, third = (request.peer for request in server.requests)
    assert [request.peer for request in server.wait_for_abandoned(1)] == [stalled]
    assert stalled != second, "the timed-out connection went back into the pool"
    assert second == third, "a healthy connection was not reused"


# --- through the loop ---------------------------------------------------------------------------


async def test_the_loop_retries_a_stall_after_partial_text_and_withdraws_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    stream = anthropic_text("partial words then silence", message_id="msg_stalled")
    server.enqueue(stream.stalled(at=stream.index_of('"then "'), seconds=STALL_S))
    server.enqueue(reply("the whole answer"))
    provider = watching(server)
    try:
        events = await run(make_params(provider, [], tmp_path), "hi")
    finally:
        await provider.aclose()

    end = finished(events)
    assert (end.result_text, end.is_error) == ("the whole answer", False)
    # The partial answer left no trace in the conversation.
    assert [(m.role, m.content) for m in end.messages] == [
        ("user", (TextBlock("hi"),)),
        ("assistant", (TextBlock("the whole answer"),)),
    ]
    (withdrawn,) = [e for e in events if isinstance(e, Withdrawn)]
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert withdrawn.message_id == "msg_stalled"
    assert retrying.error == (
        f"the idle timeout fired: the stream from {anthropic_url(server)} made no progress for "
        f"0.4 s (no event at all), {IDLE_ADVICE}"
    )
    partial = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert partial < events.index(withdrawn) < events.index(retrying)
    first, again = server.requests
    assert first.body == again.body


# --- the environment ----------------------------------------------------------------------------


def test_the_stream_timeouts_are_on_by_default() -> None:
    assert timeouts_from_env({}) == Timeouts(read_s=600.0, first_byte_s="auto", idle_s=300.0)


def test_the_environment_sets_both_stream_timeouts_and_zero_turns_one_off() -> None:
    env = {"CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS": "45000", "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "0"}
    assert timeouts_from_env(env) == Timeouts(read_s=600.0, first_byte_s=45.0, idle_s=None)


def test_raising_a_stream_timeout_is_enough_unless_api_timeout_ms_is_set() -> None:
    # A local model that reads a long prompt for half an hour: one variable does it...
    env = {"CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS": "1800000"}
    assert timeouts_from_env(env).read_s == 1800.0
    # ...but an API_TIMEOUT_MS that is set means what it says.
    assert timeouts_from_env({**env, "API_TIMEOUT_MS": "60000"}).read_s == 60.0


@pytest.mark.parametrize(
    "name", ["CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS", "CLAUDE_STREAM_IDLE_TIMEOUT_MS"]
)
@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "5m"])
def test_a_bad_stream_timeout_is_a_one_line_config_error(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        select_provider("sonnet", {"ANTHROPIC_API_KEY": "k", name: value})
    assert str(caught.value) == (
        f"{name} must be a number of milliseconds (0 turns the timeout off), not {value!r}"
    )


async def test_the_environment_s_idle_timeout_reaches_the_stream(server: FakeModelServer) -> None:
    provider, _ = select_provider(
        "sonnet", {**server.env(), "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "400"}
    )
    server.enqueue(keepalives_only((anthropic_message_start(),), anthropic_ping(), "anthropic"))
    message, _ = counted(await failure_at_the_limit(provider))
    assert message.startswith(
        f"the idle timeout fired: the stream from {anthropic_url(server)} made no progress for "
        "0.4 s (only N keep-alive events)"
    )


async def test_an_idle_timeout_of_zero_is_off_not_a_limit_of_nothing(
    server: FakeModelServer,
) -> None:
    provider, _ = select_provider("sonnet", {**server.env(), "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "0"})
    server.enqueue(thinking(anthropic_text("patience")))  # half a second of pings
    try:
        message = await final_message(provider, make_request())
    finally:
        await provider.aclose()
    assert message.text == "patience"
