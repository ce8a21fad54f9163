"""Consecutive model calls reuse one connection instead of paying a handshake each turn."""

from __future__ import annotations

from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer
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
