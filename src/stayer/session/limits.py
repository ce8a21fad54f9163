"""The limits a run keeps, from its options and the environment: retries, the output budget and
its one escalation, and how many tool calls may run at once.

Each comes from the option when one is given, else from Claude Code's environment variable, else
a default; a value that is not a whole number is a `ConfigError` naming the variable.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.loop.state import RetryPolicy

from .options import QueryOptions

DEFAULT_MAX_OUTPUT_TOKENS = 32_000
"""Output budget per call unless the model allows less or the user asks otherwise."""
ESCALATED_MAX_TOKENS = 64_000
"""What a reply cut at the default budget is asked again with, once, where the model allows it
(Claude Code's figure); never when the user chose the budget."""
DEFAULT_TOOL_CONCURRENCY = 10
"""Concurrency-safe calls running at once (Claude Code's default)."""


class Limits(Struct, frozen=True):
    """What bounds one run's model calls and tool calls."""

    retry: RetryPolicy
    max_tokens: int
    escalated_max_tokens: int | None
    max_concurrent_tools: int


def run_limits(options: QueryOptions, env: Mapping[str, str], *, ceiling: int) -> Limits:
    """The run's limits; `ceiling` is the most output the model gives in one reply."""
    max_tokens = output_budget(options, env, ceiling)
    return Limits(
        retry=_retry(options, env),
        max_tokens=max_tokens,
        escalated_max_tokens=_escalated(options, env, max_tokens, ceiling),
        max_concurrent_tools=_tool_concurrency(options, env),
    )


def _whole(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None


def _retry(options: QueryOptions, env: Mapping[str, str]) -> RetryPolicy:
    if options.retry is not None:
        return options.retry
    wanted = _whole(env, "CLAUDE_CODE_MAX_RETRIES")
    return RetryPolicy() if wanted is None else RetryPolicy(max_retries=max(0, min(wanted, 15)))


def output_budget(options: QueryOptions, env: Mapping[str, str], ceiling: int) -> int:
    """Output tokens per call: the option, `CLAUDE_CODE_MAX_OUTPUT_TOKENS`, or the default,
    never more than the model gives (`ceiling`)."""
    if options.max_tokens is not None:
        return options.max_tokens
    wanted = _whole(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    if wanted is None:
        return min(ceiling, DEFAULT_MAX_OUTPUT_TOKENS)
    return max(1, min(wanted, ceiling))


def _escalated(
    options: QueryOptions, env: Mapping[str, str], max_tokens: int, ceiling: int
) -> int | None:
    if options.max_tokens is not None or env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS") is not None:
        return None
    larger = min(ESCALATED_MAX_TOKENS, ceiling)
    return larger if larger > max_tokens else None


def _tool_concurrency(options: QueryOptions, env: Mapping[str, str]) -> int:
    """How many concurrency-safe calls may run at once. Claude Code caps its variable at 10;
    here a larger value is honoured, for machines and tools that can take more at once."""
    if options.max_concurrent_tools is not None:
        wanted: int | None = options.max_concurrent_tools
    else:
        wanted = _whole(env, "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY")
    if wanted is None:
        return DEFAULT_TOOL_CONCURRENCY
    if wanted < 1:
        raise ConfigError(
            f"the tool concurrency must be at least 1, not {wanted} "
            "(CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY or max_concurrent_tools)"
        )
    return wanted
