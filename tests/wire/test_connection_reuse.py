"""Consecutive model calls reuse one connection instead of paying a handshake each turn."""

from __future__ import annotations

import asyncio

from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer, Receive, RecordedRequest, Send
from tests.fakes.sse import reply
from tests.wire.helpers import final_message, make_request


async def test_anthropic_calls_share_one_connection(
    server: FakeModelServer, anthropic: AnthropicProvider
) -> None:
    server.enqueue(reply("one"), reply("two"), reply("three"))
    for expected in ("one", "two", "three"):
        assert (await final_message(anthropic, make_request())).text == expected

    peers = {request.peer for request in server.requests}
    assert len(peers) == 1, f"each call opened a new connection: {peers}"


async def test_openai_calls_share_one_connection(
    server: FakeModelServer, openai: OpenAIChatProvider
) -> None:
    server.enqueue(reply("one"), reply("two"))
    for expected in ("one", "two"):
        assert (await final_message(openai, make_request())).text == expected

    peers = {request.peer for request in server.requests}
    assert len(peers) == 1, f"each call opened a new connection: {peers}"


class _Gathering(FakeModelServer):
    """Answers nothing until `width` requests are in: every round's calls are in flight at
    once, so a client must hold that many connections together."""

    def __init__(self, width: int) -> None:
        super().__init__(instant=True)
        self.width = width
        self._arrived = 0
        self._rounds: dict[int, asyncio.Event] = {}

    async def handle(self, request: RecordedRequest, receive: Receive, send: Send) -> None:
        number, self._arrived = self._arrived, self._arrived + 1
        full = self._rounds.setdefault(number // self.width, asyncio.Event())
        if number % self.width == self.width - 1:
            full.set()
        await full.wait()
        await super().handle(request, receive, send)


async def test_many_streams_at_once_keep_their_connections() -> None:
    # A batch's sessions share one provider: 40 calls at a time, three rounds. Each round
    # finds the last round's connections alive; httpx's own pool kept 20 and closed the rest.
    width, rounds = 40, 3
    with _Gathering(width) as server:
        server.enqueue(*(reply(f"answer {n}") for n in range(width * rounds)))
        provider = AnthropicProvider(api_key="test-key", base_url=server.url, read_timeout_s=5.0)
        try:
            for _ in range(rounds):
                answers = await asyncio.gather(
                    *(final_message(provider, make_request()) for _ in range(width))
                )
                assert all(answer.text.startswith("answer ") for answer in answers)
        finally:
            await provider.aclose()
        peers = {request.peer for request in server.requests}
    assert len(server.requests) == width * rounds
    assert len(peers) == width, f"{len(peers)} connections for {width} streams at a time"
