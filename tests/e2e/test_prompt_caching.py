"""Prompt caching over the wire: breakpoints on the tools, the system prompt and the two newest
user messages; the prefix a cache entry covers goes out byte for byte the same in the next
request; the cache tokens the server reports are priced and reported per model; and
DISABLE_PROMPT_CACHING (or its per-family form) sends no breakpoint at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stayer.messages import JSON, Usage
from stayer.providers.profiles import cost_usd
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply

MARK = b'"cache_control":{"type":"ephemeral"}'
RUN = (
    "-p", "list things", "--output-format", "json", "--dangerously-skip-permissions",
    "--model", "claude-sonnet-4-5",
)  # fmt: skip
# What a server with a warm cache reports: the prefix read, the new turn written.
USAGES = (
    Usage(input_tokens=12, output_tokens=40, cache_creation_input_tokens=6_000),
    Usage(input_tokens=3, output_tokens=60, cache_read_input_tokens=6_000,
          cache_creation_input_tokens=180),
    Usage(input_tokens=3, output_tokens=25, cache_read_input_tokens=6_180,
          cache_creation_input_tokens=240),
)  # fmt: skip


def script(server: FakeModelServer) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo one"}), usage=USAGES[0]),
        reply(
            "Two more.",
            ToolCall("toolu_2", "Bash", {"command": "echo two"}),
            ToolCall("toolu_3", "Bash", {"command": "echo three"}),
            usage=USAGES[1],
        ),
        reply("one, two, three", usage=USAGES[2]),
    )


def breakpoints(body: JSON) -> list[str]:
    """Where the request's cache breakpoints are, in the order the API caches."""
    where = [
        f"tools.{i}" for i, tool in enumerate(body.get("tools", [])) if "cache_control" in tool
    ]
    where += [f"system.{i}" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    for m, message in enumerate(body["messages"]):
        where += [f"messages.{m}.{b}" for b, block in enumerate(message["content"])
                  if "cache_control" in block]  # fmt: skip
    return where


def cached_prefix(request: RecordedRequest) -> bytes:
    """The request's bytes up to the end of its newest breakpoint: what its cache entry covers."""
    return request.raw[: request.raw.rindex(MARK) + len(MARK)]


def unmarked(raw: bytes) -> bytes:
    """`raw` without its breakpoint marks: they say where to cache, they are not what is cached
    (moving them on is how the API is meant to be used)."""
    return raw.replace(b"," + MARK, b"")


def test_from_the_second_request_on_the_cached_prefix_goes_out_byte_for_byte(
    server: FakeModelServer, tmp_path: Path
) -> None:
    script(server)
    done = stayer(*RUN, cwd=tmp_path, env=server.env())
    assert done.status == 0, done.stderr

    first, second, third = server.requests
    last_tool = f"tools.{len(first.body['tools']) - 1}"
    assert [breakpoints(r.body) for r in (first, second, third)] == [
        # The first message's last block is the session's listing, after the prompt.
        [last_tool, "system.0", "messages.0.1"],
        [last_tool, "system.0", "messages.0.1", "messages.2.0"],
        # The second-newest user message keeps the breakpoint the previous request ended on.
        [last_tool, "system.0", "messages.2.0", "messages.4.1"],
    ]
    # The body lists tools, system, messages in the order the API caches them, so each
    # request's cached prefix (everything up to its newest breakpoint, that breakpoint's block
    # included) is a byte prefix of the next request, which goes on past it: nothing sent
    # before is encoded any differently. Only the older mark has moved on.
    for before, after in ((first, second), (second, third)):
        prefix = cached_prefix(before)
        assert prefix.index(b'"tools":') < prefix.index(b'"system":')
        assert prefix.index(b'"system":') < prefix.index(b'"messages":')
        assert unmarked(after.raw).startswith(unmarked(prefix))
        assert len(cached_prefix(after)) > len(prefix)
    # The newest breakpoint of one request is still marked in the next, so its whole prefix,
    # marks and all, goes out again unchanged up to the one mark that moved on.
    assert second.raw.startswith(cached_prefix(first))
    messages = second.raw.index(b'"messages":')
    moved = second.raw.index(b"," + MARK, messages)  # the older mark, on the first prompt
    assert moved < len(cached_prefix(first)) < len(cached_prefix(second))
    assert third.raw[:moved] == second.raw[:moved]


def test_cache_reads_and_writes_are_priced_and_reported_per_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    script(server)
    done = stayer(*RUN, cwd=tmp_path, env=server.env())
    assert done.status == 0, done.stderr

    result = json.loads(done.stdout)
    total = USAGES[0] + USAGES[1] + USAGES[2]
    cost = sum(cost_usd("claude-sonnet-4-5", usage) for usage in USAGES)
    assert result["usage"] == {
        "input_tokens": 18,
        "output_tokens": 125,
        "cache_read_input_tokens": 12_180,
        "cache_creation_input_tokens": 6_420,
    }
    assert result["modelUsage"] == {
        "claude-sonnet-4-5": {
            "inputTokens": total.input_tokens,
            "outputTokens": total.output_tokens,
            "cacheReadInputTokens": total.cache_read_input_tokens,
            "cacheCreationInputTokens": total.cache_creation_input_tokens,
            "webSearchRequests": 0,
            "costUSD": pytest.approx(cost),
            "contextWindow": 200_000,
            "maxOutputTokens": 32_000,
        }
    }
    assert result["total_cost_usd"] == pytest.approx(cost)
    # Sonnet 4.5: $3 input, $15 output, $0.30 cache reads, $3.75 cache writes per million.
    assert cost == pytest.approx((18 * 3 + 125 * 15 + 12_180 * 0.3 + 6_420 * 3.75) / 1e6)


@pytest.mark.parametrize(
    ("model", "variable", "cached"),
    [
        ("sonnet", "DISABLE_PROMPT_CACHING", False),
        ("sonnet", "DISABLE_PROMPT_CACHING_SONNET", False),
        ("haiku", "DISABLE_PROMPT_CACHING_SONNET", True),
        ("sonnet", "DISABLE_PROMPT_CACHING_HAIKU", True),
    ],
)
def test_disable_prompt_caching_sends_no_breakpoint(
    server: FakeModelServer, tmp_path: Path, model: str, variable: str, cached: bool
) -> None:
    script(server)
    env: dict[str, Any] = {**server.env(), variable: "1"}
    done = stayer(*RUN, "--model", model, cwd=tmp_path, env=env)
    assert done.status == 0, done.stderr

    assert [MARK in request.raw for request in server.requests] == [cached] * 3
    if not cached:
        assert server.requests[0].body["system"][0].keys() == {"type", "text"}
