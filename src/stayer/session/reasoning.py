"""Thinking and effort: what the options (`--thinking`, `--max-thinking-tokens`,
`--thinking-display`, `--effort`) ask of each of the session's own model calls.

`--thinking` wins over a budget given beside it, as claude-agent-sdk's `thinking` wins over its
older `max_thinking_tokens`; a budget of 0 turns thinking off. Values a program passes that are
not among the levels are refused in one line, never sent for the API to refuse mid-run.
"""

from __future__ import annotations

from typing import cast, get_args

from stayer.errors import ConfigError
from stayer.providers.base import EFFORTS, Effort, Thinking, ThinkingDisplay

from .options import QueryOptions

THINKING_MODES = ("enabled", "adaptive", "disabled")


def thinking_of(options: QueryOptions) -> Thinking | None:
    """The thinking the options ask for; None: the model's default (nothing is sent)."""
    mode, display = options.thinking, options.thinking_display
    if mode is not None and mode not in THINKING_MODES:
        raise ConfigError(f"thinking {mode!r} is not one of: {', '.join(THINKING_MODES)}")
    if display is not None and display not in get_args(ThinkingDisplay):
        raise ConfigError(f"thinking display {display!r} is not summarized or omitted")
    if mode == "adaptive":
        return Thinking("adaptive", display=display)
    if mode == "disabled":
        return Thinking("disabled")
    if mode is None and options.max_thinking_tokens is None:
        return None
    return budget_thinking(options.max_thinking_tokens, display, enabled=True)


def budget_thinking(
    budget: int | None, display: ThinkingDisplay | None, *, enabled: bool = False
) -> Thinking | None:
    """Thinking of at most `budget` tokens (0: off; None: the model's default, or with
    `enabled` as much as the output limit allows); raises `ConfigError` for a negative one."""
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise ConfigError(f"thinking budget {budget!r} is not a whole number of tokens")
    if budget is not None and budget < 0:
        raise ConfigError(f"thinking budget {budget} is negative; give 0 (off) or more tokens")
    if budget == 0:
        return Thinking("disabled")
    if budget is None and not enabled:
        return None
    return Thinking("enabled", budget, display)


def effort_of(options: QueryOptions) -> Effort | None:
    """The effort level the options ask for; raises `ConfigError` for one there is not."""
    return None if options.effort is None else checked_effort(options.effort)


def checked_effort(effort: str) -> Effort:
    """`effort` as a level; raises `ConfigError` for one there is not."""
    if effort not in EFFORTS:
        raise ConfigError(f"effort {effort!r} is not one of: {', '.join(EFFORTS)}")
    return cast(Effort, effort)
