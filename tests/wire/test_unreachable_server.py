"""A connection refused before the server ever answered is a wrong address or a server not
started: two quick retries, then one line naming the URL and the setting to fix. Once the
server has answered in this process, a refusal is a restart or a blip and keeps the whole
retry schedule."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from stayer.events import Finished, Retrying, Terminal
from stayer.loop.state import RetryPolicy
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


def unreachable(url: str, setting: str) -> str:
    return (
        f"could not connect to {url}: the connection was refused and no server has answered "
        f"there since stayer started; check {setting}, or start the server"
    )


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
