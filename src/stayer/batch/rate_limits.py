"""Which rate limits a batch runs under: the settings' `batch.rateLimits`, and the flags over
them.

In the settings files stayer reads (user, project, local, `--settings`), `batch.rateLimits`
maps a provider (`anthropic`, `openai`, or `*` for each provider without an entry) to its
`requestsPerMinute` and `tokensPerMinute`; the files merge it provider by provider, and a bad
value stops the command with the settings' one `file:line:col` line. `--requests-per-minute`
and `--tokens-per-minute` set their measure for every provider, over what the settings say.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.config import FlagSettings, load_settings
from stayer.session.settings import rule_problem

from .config import RateLimit
from .limits import ANY_PROVIDER

if TYPE_CHECKING:
    from stayer.config.model import BatchSetting


def from_settings(setting: BatchSetting | None) -> dict[str, RateLimit]:
    """The limits `batch.rateLimits` sets, per provider."""
    if setting is None:
        return {}
    return {
        name: RateLimit(limit.requests_per_minute, limit.tokens_per_minute)
        for name, limit in setting.rate_limits.items()
    }


def with_flags(
    limits: Mapping[str, RateLimit],
    *,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
) -> dict[str, RateLimit]:
    """`limits` with each measure a flag gives set to it for every provider."""
    if requests_per_minute is None and tokens_per_minute is None:
        return dict(limits)
    every = {ANY_PROVIDER: RateLimit(), **limits}
    return {
        name: RateLimit(
            limit.requests_per_minute if requests_per_minute is None else requests_per_minute,
            limit.tokens_per_minute if tokens_per_minute is None else tokens_per_minute,
        )
        for name, limit in every.items()
    }


def batch_rate_limits(
    cwd: Path,
    env: Mapping[str, str],
    *,
    flag_settings: FlagSettings | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
) -> dict[str, RateLimit]:
    """The rate limits of a batch started in `cwd`: its settings files', then its flags'.

    Raises `ConfigError` (one line) for a settings file that cannot be used."""
    loaded = load_settings(cwd, env, flag_settings=flag_settings, rule_problem=rule_problem)
    limits = from_settings(loaded.merged.batch if loaded.merged is not None else None)
    return with_flags(
        limits, requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute
    )
