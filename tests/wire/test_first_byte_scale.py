"""The first-byte limit grows with the prompt and is longer for a local server: a stalled small
request is retried within half a minute of a hosted API, while a 1M-token prompt still gets
minutes to be read. The limit each stream computed is checked in its retry line, with scales of
fractions of a second driven through the same code path as the real ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.errors import ConnectionLost
from stayer.events import Finished, RequestStarted, Retrying, Withdrawn
from stayer.providers._watchdog import (
    HOSTED_FIRST_BYTE,
    HOSTED_SILENT_FIRST_BYTE,
    LOCAL_FIRST_BYTE,
    FirstByteScale,
    first_byte_scale,
    prompt_tokens,
)
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.select import select_provider
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.fakes.loop_harness import make_params, run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_text, openai_text, reply
from tests.wire.helpers import failure, make_request

STALL_S = 10.0
"""Far longer than any test: only the first-byte limit ends the wait."""
TINY = FirstByteScale(base_s=0.2, per_1k_tokens_s=0.1, cap_s=1.0)
"""A scale the tests can wait out: 0.2 s, plus 0.1 s per thousand prompt tokens, at most 1 s."""
ADVICE = (
    "so the server may be stalled; try again, or raise CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS if "
    "the model needs longer to start (0 turns the timeout off)"
)


@pytest.mark.parametrize(
    ("base_url", "provider", "scale"),
    [
        ("https://api.anthropic.com", "anthropic", HOSTED_FIRST_BYTE),
        ("https://gateway.eu.anthropic.com/v1", "anthropic", HOSTED_FIRST_BYTE),
        ("https://openrouter.ai/api", "anthropic", HOSTED_FIRST_BYTE),
        ("https://api.openai.com/v1", "openai", HOSTED_SILENT_FIRST_BYTE),
        ("https://me.openai.azure.com/openai", "openai", HOSTED_SILENT_FIRST_BYTE),
        ("http://127.0.0.1:8080", "anthropic", LOCAL_FIRST_BYTE),
        ("http://localhost:11434/v1", "openai", LOCAL_FIRST_BYTE),
        ("http://192.168.1.20:8000/v1", "openai", LOCAL_FIRST_BYTE),
        ("https://llm.corp.example/v1", "openai", LOCAL_FIRST_BYTE),
        ("https://notanthropic.com", "anthropic", LOCAL_FIRST_BYTE),
    ],
)
def test_the_scale_follows_the_server(base_url: str, provider: str, scale: FirstByteScale) -> None:
    assert first_byte_scale(base_url, provider) == scale


@pytest.mark.parametrize(
    ("scale", "tokens", "limit_s"),
    [
        # A hosted API: half a minute for a small request, minutes for a 1M-token prompt.
        (HOSTED_FIRST_BYTE, 0, 30.0),
        (HOSTED_FIRST_BYTE, 20_000, 33.0),
        (HOSTED_FIRST_BYTE, 200_000, 60.0),
        (HOSTED_FIRST_BYTE, 1_000_000, 180.0),
        (HOSTED_FIRST_BYTE, 5_000_000, 180.0),  # base64 images inflate the estimate: capped
        # OpenAI's reasoning models say nothing while they think.
        (HOSTED_SILENT_FIRST_BYTE, 20_000, 93.0),
        (HOSTED_SILENT_FIRST_BYTE, 1_000_000, 240.0),
        # A local server reads slowly.
        (LOCAL_FIRST_BYTE, 15_000, 60.0),
        (LOCAL_FIRST_BYTE, 100_000, 145.0),
        (LOCAL_FIRST_BYTE, 1_000_000, 600.0),
    ],
)
def test_the_limit_grows_with_the_prompt(
    scale: FirstByteScale, tokens: int, limit_s: float
) -> None:
    assert scale.limit(tokens) == limit_s


def test_a_prompt_is_counted_at_four_bytes_a_token() -> None:
    assert [prompt_tokens(size) for size in (0, 3, 4, 80_000)] == [0, 0, 1, 20_000]


async def test_stayers_own_first_request_is_retried_within_a_minute_wherever_it_goes(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """The real first request of a run (system prompt and every tool) is small: a stall is
    retried well within 100 s by a hosted API's limit and by a local server's."""
    server.enqueue(reply("hi"))
    options = QueryOptions(cwd=tmp_path, env={**server.env(), "STAYER_CONFIG_DIR": str(tmp_path)})
    async with Session(options) as session:
        async for _ in session.submit("hello"):
            pass
    size = len(server.requests[0].raw)
    assert HOSTED_FIRST_BYTE.limit(prompt_tokens(size)) <= 40
    assert LOCAL_FIRST_BYTE.limit(prompt_tokens(size)) <= 70


async def test_a_stall_after_the_headers_is_retried_at_the_limit_for_its_prompt(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(anthropic_text("late").stalled(at=0, seconds=STALL_S), reply("at last"))
    provider = AnthropicProvider(
        api_key="k", base_url=server.url, read_timeout_s=5.0, first_byte_timeout_s=TINY
    )
    prompt = "word " * 1_600  # 8,000 bytes of prompt: about 2,000 tokens with the rest
    try:
        events = await run(make_params(provider, [], tmp_path), prompt)
    finally:
        await provider.aclose()

    tokens = prompt_tokens(len(server.requests[0].raw))
    assert 2_000 <= tokens < 2_100  # so the limit is 0.4 s
    retry = next(event for event in events if isinstance(event, Retrying))
    assert retry.error == (
        f"the first-byte timeout fired: {server.url}/v1/messages did not start its answer within "
        f"0.4 s of the request, the limit for about {tokens:,} prompt tokens (response "
        f"headers, then no event), {ADVICE}"
    )
    assert (retry.attempt, retry.status) == (1, None)
    loop_events = [e for e in events if isinstance(e, RequestStarted | Retrying | Withdrawn)]
    assert loop_events == [RequestStarted(1), retry]  # nothing had streamed: nothing withdrawn
    end = events[-1]
    assert isinstance(end, Finished) and end.result_text == "at last"


async def test_a_longer_prompt_is_given_longer(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(openai_text("late").stalled(at=0, seconds=STALL_S), openai_text("at last"))
    provider = OpenAIChatProvider(
        api_key="k", base_url=server.openai_url, read_timeout_s=5.0, first_byte_timeout_s=TINY
    )
    prompt = "word " * 8_000  # 40,000 bytes: about 10,000 tokens, 0.2 + 1.0 s, capped at 1 s
    try:
        events = await run(make_params(provider, [], tmp_path), prompt)
    finally:
        await provider.aclose()

    tokens = prompt_tokens(len(server.requests[0].raw))
    retry = next(event for event in events if isinstance(event, Retrying))
    assert retry.error.startswith(
        f"the first-byte timeout fired: {server.openai_url}/chat/completions did not start its "
        f"answer within 1 s of the request, the limit for about {tokens:,} prompt tokens "
    )


async def test_a_fixed_limit_from_the_environment_replaces_the_scale(
    server: FakeModelServer,
) -> None:
    provider, _ = select_provider(
        "sonnet", {**server.env(), "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS": "300"}
    )
    server.enqueue(anthropic_text("late").stalled(at=0, seconds=STALL_S))
    try:
        error, _ = await failure(provider, make_request(), ConnectionLost)
    finally:
        await provider.aclose()
    assert str(error) == (
        f"the first-byte timeout fired: {server.url}/v1/messages did not start its answer "
        f"within 0.3 s of the request (response headers, then no event), {ADVICE}"
    )
