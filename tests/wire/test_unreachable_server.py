"""A connection refused before the server ever answered is a wrong address or a server not
started: two quick retries, then one line naming the URL and the setting to fix. Once the
server has answered in this process, a refusal is a restart or a blip and keeps the whole
retry schedule."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from stayer.events import Finished, Retrying, Terminal
from stayer.loop.state import RetryPolicy
from stayer.providers._http import Endpoint, transport_error
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import Provider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.loop_harness import make_params, run
from tests.wire.helpers import closed_port

_BODY = b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'
OVERLOADED = (
    b"HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_BODY), _BODY)
)


def unreachable(url: str, setting: str, why: str = "the connection was refused") -> str:
    return (
        f"could not connect to {url}: {why} and no server has answered there since stayer "
        f"started; check {setting}, or start the server"
    )


def lookup_failure(errno: int) -> httpx.ConnectError:
    """The error httpx raises when the host name cannot be looked up, with its real cause."""
    try:
        try:
            raise socket.gaierror(errno, "name lookup failed")
        except socket.gaierror as lookup:
            raise httpx.ConnectError(str(lookup)) from lookup
    except httpx.ConnectError as error:
        return error


ENDPOINT = Endpoint(
    provider="anthropic",
    base_url="http://api.exampel.invalid",
    key_hint="ANTHROPIC_API_KEY",
    url_hint="ANTHROPIC_BASE_URL",
    read_timeout_s=600.0,
    connect_timeout_s=10.0,
    first_byte_timeout_s=None,
    idle_timeout_s=None,
)


def test_a_host_name_that_does_not_exist_is_named_like_a_refusal() -> None:
    error = transport_error(lookup_failure(socket.EAI_NONAME), ENDPOINT, answered=False)
    assert (str(error), error.retry_limit) == (
        unreachable(ENDPOINT.base_url, "ANTHROPIC_BASE_URL", "its host name does not exist"),
        2,
    )


def test_a_lookup_that_fails_for_now_keeps_the_whole_schedule() -> None:
    for errno, answered in ((socket.EAI_AGAIN, False), (socket.EAI_NONAME, True)):
        error = transport_error(lookup_failure(errno), ENDPOINT, answered=answered)
        assert error.retry_limit is None, (errno, answered)
        assert "check the network" in str(error)


@pytest.mark.parametrize(
    ("make", "setting"),
    [
        (lambda url: AnthropicProvider(api_key="k", base_url=url), "ANTHROPIC_BASE_URL"),
        (lambda url: OpenAIChatProvider(api_key="k", base_url=url), "OPENAI_BASE_URL"),
    ],
    ids=["anthropic", "openai"],
)
async def test_a_refusal_before_any_answer_is_retried_twice_quickly_then_named(
    tmp_path: Path, make: Callable[[str], Provider], setting: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    provider = make(url)
    policy = RetryPolicy()  # the real schedule, whose first two waits are short
    try:
        events = await run(make_params(provider, [], tmp_path, retry=policy), "hi")
    finally:
        await provider.aclose()

    retries = [event for event in events if isinstance(event, Retrying)]
    assert [(r.attempt, r.max_retries, r.error, r.status) for r in retries] == [
        (1, 2, unreachable(url, setting), None),
        (2, 2, unreachable(url, setting), None),
    ]
    assert 0.5 <= retries[0].delay_s <= 0.625
    assert 1.0 <= retries[1].delay_s <= 1.25
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.terminal, end.message) == (Terminal.MODEL_ERROR, unreachable(url, setting))


@pytest.fixture
async def answers_once() -> AsyncIterator[str]:
    """A server that answers one request (overloaded, connection closed) and then goes away:
    its port refuses every later connection."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        server.close()  # no more connections from here on
        writer.write(OVERLOADED)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.close()
    await server.wait_closed()


async def test_a_refusal_after_the_server_answered_keeps_the_whole_schedule(
    tmp_path: Path, answers_once: str
) -> None:
    provider = AnthropicProvider(api_key="k", base_url=answers_once)
    policy = RetryPolicy(max_retries=4, base_delay_s=0.001, max_delay_s=0.01)
    try:
        events = await run(make_params(provider, [], tmp_path, retry=policy), "hi")
    finally:
        await provider.aclose()

    refused = (
        f"could not connect to {answers_once} (All connection attempts failed); check the "
        "network and ANTHROPIC_BASE_URL"
    )
    retries = [(r.attempt, r.max_retries, r.error) for r in events if isinstance(r, Retrying)]
    assert retries == [
        (1, 4, "anthropic is overloaded (529): busy; try again shortly"),
        (2, 4, refused),
        (3, 4, refused),
        (4, 4, refused),
    ]
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.terminal, end.message) == (Terminal.MODEL_ERROR, refused)
