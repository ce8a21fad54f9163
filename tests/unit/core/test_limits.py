"""The run's limits from its options and the environment, and the one-line refusals of values
that cannot be used."""

from __future__ import annotations

import pytest

from stayer.errors import ConfigError
from stayer.loop.state import RetryPolicy
from stayer.session.limits import Limits, run_limits
from stayer.session.options import QueryOptions


def limits(env: dict[str, str] | None = None, **options: object) -> Limits:
    return run_limits(QueryOptions(**options), env or {}, ceiling=64_000)  # type: ignore[arg-type]


def test_the_defaults() -> None:
    assert limits() == Limits(RetryPolicy(), 32_000, 64_000, 10)


def test_the_tool_concurrency_comes_from_the_option_then_claude_codes_variable() -> None:
    env = {"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": "3"}
    assert limits(env).max_concurrent_tools == 3
    assert limits(env, max_concurrent_tools=16).max_concurrent_tools == 16
    assert limits({"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": "25"}).max_concurrent_tools == 25


@pytest.mark.parametrize(
    ("env", "options", "message"),
    [
        (
            {"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": "many"},
            {},
            "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY must be a whole number, not 'many'",
        ),
        (
            {"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": "0"},
            {},
            "the tool concurrency must be at least 1, not 0 "
            "(CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY or max_concurrent_tools)",
        ),
        ({"CLAUDE_CODE_MAX_RETRIES": "x"}, {}, "CLAUDE_CODE_MAX_RETRIES must be a whole number"),
        (
            {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1e4"},
            {},
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS must be a whole number, not '1e4'",
        ),
    ],
)
def test_unusable_values_are_refused_in_one_line(
    env: dict[str, str], options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        limits(env, **options)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_a_chosen_output_budget_is_never_escalated_and_never_above_the_model() -> None:
    assert limits(max_tokens=8_000).escalated_max_tokens is None
    capped = limits({"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "100000"})
    assert (capped.max_tokens, capped.escalated_max_tokens) == (64_000, None)
    assert limits({"CLAUDE_CODE_MAX_RETRIES": "40"}).retry.max_retries == 15
