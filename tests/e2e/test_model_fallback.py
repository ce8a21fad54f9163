"""`--fallback-model` over the wire: a main model that keeps answering 529 hands the run to the
next model of the chain, another provider's included, and says so on every output format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stayer.messages import Usage
from stayer.providers.profiles import cost_usd
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import HttpError, ToolCall, anthropic_error, reply

RETRY_LINE = re.compile(r"^stayer: retrying in 0\.0 s \(attempt (\d+)/10\): (.+)$")
USAGE = Usage(input_tokens=1_000, output_tokens=500)


def overloaded() -> HttpError:
    # The server's own wait (none) keeps the test fast; the count is what matters.
    return anthropic_error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0"})


def both_providers(server: FakeModelServer) -> dict[str, str]:
    return {**server.env("anthropic"), **server.env("openai")}


def test_a_chain_ends_at_another_providers_model_and_text_mode_says_so_on_stderr(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(*[overloaded()] * 6, reply("answered by gpt", usage=USAGE))
    done = stayer(
        "-p", "hi", "--model", "opus", "--fallback-model", "sonnet,openai:gpt-4.1",
        cwd=tmp_path, env=both_providers(server),
    )  # fmt: skip

    assert (done.status, done.stdout) == (0, "answered by gpt\n"), done.stderr
    lines = done.stderr.splitlines()
    assert lines[2] == (
        "stayer: switching to claude-sonnet-5-5 for the rest of this run: "
        "claude-opus-5-5 was overloaded 3 times in a row"
    )
    assert lines[5] == (
        "stayer: switching to gpt-4.1 for the rest of this run: "
        "claude-sonnet-5-5 was overloaded 3 times in a row"
    )
    retries = [RETRY_LINE.match(line) for line in lines[:2] + lines[3:5]]
    assert [m.group(1) for m in retries if m] == ["1", "2", "1", "2"], lines
    assert len(lines) == 6
    sent = [(request.protocol, request.model) for request in server.requests]
    assert sent == [
        *[("anthropic", "claude-opus-5-5")] * 3,
        *[("anthropic", "claude-sonnet-5-5")] * 3,
        ("openai", "gpt-4.1"),
    ]
    # Each model was sent the same conversation: the prompt, nothing of the failed attempts.
    assert all(
        request.messages[-1] == server.requests[0].messages[-1] for request in server.requests[:6]
    )
    assert [m["role"] for m in server.requests[6].messages] == ["system", "user"]


def test_stream_json_reports_the_switch_as_a_system_line_and_prices_the_fallback(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(*[overloaded()] * 3, reply("answered by haiku", usage=USAGE))
    done = stayer(
        "-p", "hi", "--model", "opus", "--fallback-model", "haiku",
        "--output-format", "stream-json", "--verbose", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    assert done.stderr == ""
    lines = done.json_lines()
    assert [(line["type"], line.get("subtype")) for line in lines] == [
        ("system", "init"),
        ("system", "api_retry"),
        ("system", "api_retry"),
        ("system", "model_fallback"),
        ("assistant", None),
        ("result", "success"),
    ]
    switch = lines[3]
    assert {k: v for k, v in switch.items() if k not in ("uuid", "session_id")} == {
        "type": "system",
        "subtype": "model_fallback",
        "from_model": "claude-opus-5-5",
        "to_model": "claude-haiku-5-5",
        "reason": "claude-opus-5-5 was overloaded 3 times in a row",
    }
    assert switch["session_id"] == lines[0]["session_id"]
    assert lines[4]["message"]["model"] == "claude-haiku-5-5"
    result = lines[5]
    assert result["result"] == "answered by haiku"
    assert result["total_cost_usd"] == pytest.approx(cost_usd("claude-haiku-5-5", USAGE))
    # The overloaded model never answered, so only the one that did is listed.
    assert result["modelUsage"] == {
        "claude-haiku-5-5": model_usage(USAGE, cost_usd("claude-haiku-5-5", USAGE), 1_000_000)
    }
    assert [request.model for request in server.requests] == [
        *["claude-opus-5-5"] * 3,
        "claude-haiku-5-5",
    ]


def test_after_a_switch_the_system_prompt_names_the_model_that_serves(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        *[overloaded()] * 3,
        reply(ToolCall("toolu_glob", "Glob", {"pattern": "*.md"}), usage=USAGE),
        reply("answered by haiku", usage=USAGE),
    )
    done = stayer(
        "-p", "hi", "--model", "opus", "--fallback-model", "haiku", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    named = [
        (request.model, [line for line in system_text(request.body) if line.startswith("Model:")])
        for request in server.requests
    ]
    assert named == [
        *[("claude-opus-5-5", ["Model: claude-opus-5-5"])] * 3,
        *[("claude-haiku-5-5", ["Model: claude-haiku-5-5"])] * 2,  # the switch and the next turn
    ]


def system_text(body: Any) -> list[str]:
    """The lines of an Anthropic request's system prompt."""
    system = body.get("system", [])
    return [line for block in system for line in str(block["text"]).splitlines()]


def model_usage(usage: Usage, cost: float, window: int, output: int = 32_000) -> dict[str, Any]:
    """One `modelUsage` entry as Claude Code's SDK types spell it."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_input_tokens,
        "cacheCreationInputTokens": usage.cache_creation_input_tokens,
        "webSearchRequests": 0,
        "costUSD": pytest.approx(cost),
        "contextWindow": window,
        "maxOutputTokens": output,
    }


def test_model_usage_has_an_entry_for_each_model_that_served_and_the_total_adds_them(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cached = Usage(input_tokens=300, output_tokens=50, cache_read_input_tokens=4_000)
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo hi"}), usage=USAGE),
        *[overloaded()] * 3,
        reply("done by haiku", usage=cached),
    )
    done = stayer(
        "-p", "hi", "--model", "claude-opus-4-6[1m]", "--fallback-model", "haiku",
        "--output-format", "json",
        "--dangerously-skip-permissions", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    result = json.loads(done.stdout)
    opus, haiku = cost_usd("claude-opus-4-6", USAGE), cost_usd("claude-haiku-5-5", cached)
    assert result["modelUsage"] == {
        "claude-opus-4-6[1m]": model_usage(USAGE, opus, 1_000_000),
        "claude-haiku-5-5": model_usage(cached, haiku, 1_000_000),
    }
    assert result["total_cost_usd"] == pytest.approx(opus + haiku)
    assert result["usage"] == {
        "input_tokens": 1_300,
        "output_tokens": 550,
        "cache_read_input_tokens": 4_000,
        "cache_creation_input_tokens": 0,
    }


def test_no_model_fallback_in_the_environment_keeps_the_main_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(*[overloaded()] * 3, reply("the main model, at last"))
    env = {**server.env(), "CLAUDE_CODE_NO_MODEL_FALLBACK": "1"}
    done = stayer("-p", "hi", "--model", "opus", "--fallback-model", "haiku", cwd=tmp_path, env=env)

    assert (done.status, done.stdout) == (0, "the main model, at last\n"), done.stderr
    assert [RETRY_LINE.match(line) is not None for line in done.stderr.splitlines()] == [True] * 3
    assert [request.model for request in server.requests] == ["claude-opus-5-5"] * 4


@pytest.mark.parametrize(
    ("chain", "complaint"),
    [
        ("openai:", "--fallback-model: 'openai:' names no model: write it as openai:MODEL"),
        (
            "claude-haiku-4-5[1m]",
            "--fallback-model: 'claude-haiku-4-5[1m]': claude-haiku-4-5 has no 1M-token context",
        ),
        ("gpt-4.1", "--fallback-model gpt-4.1: no API key for openai: set OPENAI_API_KEY"),
        ("opus", "--fallback-model opus is the main model itself; name another model"),
        ("haiku,claude-haiku-5-5", "--fallback-model names claude-haiku-5-5 twice"),
        (" , ", "--fallback-model needs a model name, such as --fallback-model sonnet"),
    ],
)
def test_an_unusable_fallback_is_one_line_before_any_request(
    server: FakeModelServer, tmp_path: Path, chain: str, complaint: str
) -> None:
    done = stayer("-p", "hi", "--fallback-model", chain, cwd=tmp_path, env=server.env())

    assert (done.status, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"stayer: {complaint}"), line
    assert server.requests == []
