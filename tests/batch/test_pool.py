"""The batch's model clients: one per provider and endpoint, sized for the batch's streams."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from stayer.batch.pool import ProviderPool
from stayer.errors import ConfigError
from stayer.messages import UserMessage
from stayer.providers.base import ModelRequest
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(allow_unused=True) as fake:
        yield fake


async def test_one_client_per_provider_and_endpoint(server: FakeModelServer) -> None:
    pool = ProviderPool(concurrency=8)
    here = server.env()
    elsewhere = {**here, "ANTHROPIC_BASE_URL": server.url + "/other"}

    first = pool.client("claude-one", here)
    second = pool.client("anthropic:claude-two", here)
    third = pool.client("claude-one", elsewhere)
    openai = pool.client("gpt-batch", {**here, **server.env("openai")})

    assert first.provider is second.provider
    assert (first.choice.model, second.choice.model) == ("claude-one", "claude-two")
    assert third.provider is not first.provider
    assert openai.choice.provider == "openai" and openai.provider is not first.provider
    assert pool.size == 3
    await pool.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        pool.client("claude-one", here)


def test_a_model_no_provider_serves_is_a_one_line_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^no API key for anthropic: set ANTHROPIC_API_KEY"):
        ProviderPool(concurrency=1).client("claude-one", {})
    with pytest.raises(ConfigError, match=r"^no model provider is configured"):
        ProviderPool(concurrency=1).client(None, {})


@pytest.mark.timeout(90)
async def test_more_streams_than_httpx_allows_by_default_go_out_at_once(
    server: FakeModelServer,
) -> None:
    """httpx keeps 100 connections unless told: a batch of 64 tasks gets room for each of
    them and their side calls, so 110 streams held open by the server are all sent."""
    streams = 110
    held = reply("held").render("anthropic").stalled(before_headers=600)
    server.respond_with(lambda request: held)
    pool = ProviderPool(concurrency=64)
    client = pool.client("claude-batch", server.env())
    request = ModelRequest(model="claude-batch", system="", messages=(UserMessage.of_text("hi"),))

    async def one() -> None:
        async for _ in client.provider.stream(request):
            pass

    running = [asyncio.ensure_future(one()) for _ in range(streams)]
    try:
        await asyncio.to_thread(server.wait_for_requests, streams, 60.0)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await pool.aclose()
    assert pool.max_connections == 128
