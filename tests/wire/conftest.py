"""Fixtures for wire tests: a fake model server and both clients pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A scripted server; leftovers and history violations fail the test at teardown."""
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
async def anthropic(server: FakeModelServer) -> AsyncIterator[AnthropicProvider]:
    """Our Anthropic client on the fake server, with a short read timeout."""
    provider = AnthropicProvider(api_key="test-key", base_url=server.url, read_timeout_s=5.0)
    yield provider
    await provider.aclose()


@pytest.fixture
async def openai(server: FakeModelServer) -> AsyncIterator[OpenAIChatProvider]:
    """Our OpenAI-compatible client on the fake server, with a short read timeout."""
    provider = OpenAIChatProvider(
        api_key="test-key", base_url=server.openai_url, read_timeout_s=5.0
    )
    yield provider
    await provider.aclose()
