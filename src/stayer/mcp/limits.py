"""The limits of MCP tool calls the environment sets, read without loading the tools (a
session reads them as it opens, before its first request).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from stayer.errors import ConfigError
from stayer.tools.base import MAX_RESULT_CHARS

OUTPUT_TOKENS_VAR = "MAX_MCP_OUTPUT_TOKENS"
TOOL_TIMEOUT_VAR = "MCP_TOOL_TIMEOUT"
DEFAULT_OUTPUT_TOKENS = 25_000
CHARS_PER_TOKEN = 4
CONNECT_TIMEOUT_VAR = "MCP_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT_S = 30.0


def result_chars(env: Mapping[str, str]) -> int:
    """The longest MCP tool result, in characters, `MAX_MCP_OUTPUT_TOKENS` in `env` allows
    (never more than any tool's result may hold). Raises `ConfigError` in one line for a
    value that is no whole number above 0: a typo would otherwise quietly mean the default."""
    raw = env.get(OUTPUT_TOKENS_VAR, "").strip()
    if not raw:
        return min(DEFAULT_OUTPUT_TOKENS * CHARS_PER_TOKEN, MAX_RESULT_CHARS)
    if not (raw.isascii() and raw.isdigit() and int(raw) > 0):
        raise ConfigError(
            f"{OUTPUT_TOKENS_VAR}={raw!r} is not a number of tokens above 0; "
            f"set it like {OUTPUT_TOKENS_VAR}=25000, or unset it"
        )
    return min(int(raw) * CHARS_PER_TOKEN, MAX_RESULT_CHARS)


def tool_timeout_from(env: Mapping[str, str]) -> float | None:
    """`MCP_TOOL_TIMEOUT` (milliseconds, as Claude Code reads it) in seconds: how long a call
    to a server that sets no `timeout` of its own may take; None when unset. Raises
    `ConfigError` in one line for a value that is not a positive number."""
    return seconds_from(env, TOOL_TIMEOUT_VAR, example=60_000)


def connect_timeout_from(env: Mapping[str, str]) -> float:
    """`MCP_TIMEOUT` (milliseconds, as Claude Code reads it) in seconds: how long a server may
    take to connect; 30 s when unset. Raises `ConfigError` in one line for a value that is
    not a positive number: a typo would otherwise wait the default or not at all, unseen."""
    given = seconds_from(env, CONNECT_TIMEOUT_VAR, example=30_000)
    return DEFAULT_CONNECT_TIMEOUT_S if given is None else given


def seconds_from(env: Mapping[str, str], name: str, *, example: int) -> float | None:
    """The variable `name`, milliseconds, in seconds; None when unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        millis = float(raw)
    except ValueError:
        millis = math.nan
    if not 0 < millis < math.inf:
        raise ConfigError(
            f"{name}={raw!r} is not a number of milliseconds above 0; "
            f"set it like {name}={example}, or unset it"
        )
    return millis / 1000
