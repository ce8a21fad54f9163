"""Which provider answers a model name, and building it from the environment.

The environment variables are the ones Claude Code and the OpenAI tools already use
(ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, OPENAI_API_KEY,
OPENAI_BASE_URL, API_TIMEOUT_MS, CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS,
CLAUDE_STREAM_IDLE_TIMEOUT_MS, DISABLE_PROMPT_CACHING and its per-family forms), so a person
who has one of them set needs nothing more. The clients themselves are imported only when one is
built, to keep start-up light.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.providers.base import Provider
from stayer.providers.models import (
    BUILT_IN,
    DEFAULT_FAMILY,
    PLAN_ALIAS,
    alias_model,
    current_model,
    listed_limits,
)
from stayer.switches import env_flag

if TYPE_CHECKING:
    from stayer.providers.anthropic import PromptCaching

ProviderName = Literal["anthropic", "openai"]

DEFAULT_ANTHROPIC_MODEL = BUILT_IN[DEFAULT_FAMILY]
"""The Anthropic default offline (Claude Code's: Opus); `models` keeps it current."""
DEFAULT_OPENAI_MODEL = BUILT_IN["gpt"]
"""The OpenAI default offline; `models` keeps it current."""

LONG_CONTEXT_BETA = "context-1m-2025-08-07"
"""The Anthropic beta that opens the 1M-token window; `[1m]` after a model name asks for it."""
_LONG_CONTEXT = re.compile(r"\s*\[1m\]\s*$", re.IGNORECASE)

_ANTHROPIC_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
_OPENAI_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL")
_OPENAI_NAME_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt")


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _any_set(env: Mapping[str, str], names: tuple[str, ...]) -> bool:
    return any(_get(env, name) for name in names)


def model_configured(env: Mapping[str, str]) -> bool:
    """True when any key or base URL for a provider is set."""
    return _any_set(env, _ANTHROPIC_VARS + _OPENAI_VARS)


def _default_model(env: Mapping[str, str]) -> tuple[ProviderName, str]:
    if _any_set(env, _ANTHROPIC_VARS):
        return "anthropic", current_model(DEFAULT_FAMILY, env)
    if _any_set(env, _OPENAI_VARS):
        return "openai", _get(env, "OPENAI_MODEL") or current_model("gpt", env)
    raise ConfigError(
        "no model provider is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY "
        "(or ANTHROPIC_BASE_URL / OPENAI_BASE_URL for a gateway or local server)"
    )


class ModelChoice(Struct, frozen=True):
    """The model a name stands for: who serves it, the id sent, and its context window."""

    provider: str
    model: str
    context_window: int
    max_output_tokens: int
    betas: tuple[str, ...] = ()
    plan_model: str | None = None
    """The model sent while the session is in plan mode, when it differs (`opusplan`)."""

    @property
    def display_name(self) -> str:
        """The id as people and logs see it, `[1m]` included when the 1M window is on."""
        return display_name(self.model, self.betas)


def display_name(model: str, betas: Sequence[str]) -> str:
    """`model` as people and logs see it: `[1m]` after it when the 1M-context beta is on."""
    return model + ("[1m]" if LONG_CONTEXT_BETA in betas else "")


def context_window_for(model: str, betas: Sequence[str]) -> int:
    """The window of `model` sent with `betas`: the 1M window when the beta asks for it."""
    from stayer.providers.profiles import LONG_CONTEXT_WINDOW, profile_for

    profile = profile_for(model)
    if LONG_CONTEXT_BETA in betas:
        return profile.long_context_window or LONG_CONTEXT_WINDOW
    return profile.context_window


def choose_model(model: str | None, env: Mapping[str, str]) -> ModelChoice:
    """Resolve `model` (see `resolve_model`) and its `[1m]` suffix; raises `ConfigError`.

    As in Claude Code, `sonnet[1m]` (or any Claude id with `[1m]`) is sent as the bare id with
    the 1M-context beta header, and sized with the 1M window. The suffix is refused only for a
    model known to lack that window (a model stayer does not know, say a newer one or one behind
    a gateway, gets the beta and the server decides), and dropped when
    CLAUDE_CODE_DISABLE_1M_CONTEXT is set.
    """
    from stayer.providers.profiles import LONG_CONTEXT_WINDOW, profile_for

    given = (model or "").strip() or _get(env, "ANTHROPIC_MODEL") or ""
    long = _LONG_CONTEXT.search(given) is not None
    if long and not _LONG_CONTEXT.sub("", given):
        raise ConfigError(f"{given!r} names no model: write it as MODEL[1m], e.g. sonnet[1m]")
    provider, bare = resolve_model(model, env)
    profile = profile_for(bare)
    window, output = listed_limits(bare, provider, env) or (
        profile.context_window,
        profile.max_output_tokens,
    )
    plan = _plan_model(given, env)
    if not long or env_flag(env, "CLAUDE_CODE_DISABLE_1M_CONTEXT"):
        return ModelChoice(provider, bare, window, output, plan_model=plan)
    if provider != "anthropic":
        raise ConfigError(
            f"{given!r}: [1m] asks for Anthropic's 1M-token context window, which {provider} "
            "models do not have; leave [1m] out"
        )
    known_without = profile.known and profile.family != "claude"  # not the catch-all
    if profile.long_context_window is None and known_without and window < LONG_CONTEXT_WINDOW:
        raise ConfigError(
            f"{given!r}: {bare} has no 1M-token context window; use [1m] with sonnet or "
            "opus (Claude Sonnet 4 and later, Claude Opus 4.6), or leave it out"
        )
    window = max(window, profile.long_context_window or LONG_CONTEXT_WINDOW)
    return ModelChoice(provider, bare, window, output, betas=(LONG_CONTEXT_BETA,), plan_model=plan)


def _plan_model(given: str, env: Mapping[str, str]) -> str | None:
    """Opus's model for plan mode when the name is `opusplan` (Sonnet's serves the rest)."""
    name = _LONG_CONTEXT.sub("", given).strip().lower().removeprefix("anthropic:")
    return current_model("opus", env) if name == PLAN_ALIAS else None


def resolve_model(model: str | None, env: Mapping[str, str]) -> tuple[ProviderName, str]:
    """The provider that serves `model` and the bare model id; raises `ConfigError`.

    A name that says nothing about its provider goes where the environment points: to
    Anthropic when it came from ANTHROPIC_MODEL or only Anthropic settings exist (gateways
    serving other models behind ANTHROPIC_BASE_URL), to OpenAI when only OpenAI settings exist.
    """
    given = _LONG_CONTEXT.sub("", (model or "").strip())  # the window is `choose_model`'s
    name = given or _LONG_CONTEXT.sub("", _get(env, "ANTHROPIC_MODEL") or "")
    if not name:
        return _default_model(env)
    if not given:
        return "anthropic", alias_model(name, env) or name
    prefix, colon, rest = name.partition(":")
    # Only our own provider names count: local model names often hold a colon (llama3:8b).
    if colon and prefix.lower() in ("anthropic", "openai"):
        rest = rest.strip()
        if not rest:
            raise ConfigError(f"{name!r} names no model: write it as {prefix}:MODEL")
        if prefix.lower() == "anthropic":
            return "anthropic", alias_model(rest, env) or rest
        return "openai", rest
    lower = name.lower()
    if (aliased := alias_model(lower, env)) is not None:
        return "anthropic", aliased
    if "claude" in lower:  # also Bedrock and Vertex ids such as us.anthropic.claude-...
        return "anthropic", name
    if lower.startswith(_OPENAI_NAME_PREFIXES):
        return "openai", name
    anthropic, openai = _any_set(env, _ANTHROPIC_VARS), _any_set(env, _OPENAI_VARS)
    if anthropic and not openai:
        return "anthropic", name
    if openai and (not anthropic or _get(env, "OPENAI_BASE_URL")):
        return "openai", name
    raise ConfigError(
        f"cannot tell which provider serves model {name!r}: "
        f"write anthropic:{name} or openai:{name} (set OPENAI_BASE_URL for a local server)"
    )


class Timeouts(Struct, frozen=True):
    """How long a provider waits, in seconds: each read, and the stream's first-byte and idle
    timeouts (None: off; ``auto``: the first-byte limit grows with the prompt, see `_watchdog`)."""

    read_s: float
    first_byte_s: float | Literal["auto"] | None
    idle_s: float | None


def _millis(env: Mapping[str, str], name: str, *, zero_is_off: bool) -> float | None:
    """Seconds from a variable in milliseconds, None if unset; raises `ConfigError` for a value
    that is not a positive number (or 0, where that turns a timeout off)."""
    raw = _get(env, name)
    if raw is None:
        return None
    try:
        millis = float(raw)
    except ValueError:
        millis = math.nan
    if math.isfinite(millis) and (millis > 0 or (zero_is_off and millis == 0)):
        return millis / 1000.0
    if zero_is_off:
        raise ConfigError(
            f"{name} must be a number of milliseconds (0 turns the timeout off), not {raw!r}"
        )
    raise ConfigError(f"{name} must be a positive number of milliseconds, not {raw!r}")


def _stream_timeout(
    env: Mapping[str, str], name: str, default: float | Literal["auto"]
) -> float | Literal["auto"] | None:
    """A stream timeout in seconds: `default` if unset, None (off) if 0."""
    seconds = _millis(env, name, zero_is_off=True)
    if seconds is None:
        return default
    return seconds or None


def timeouts_from_env(env: Mapping[str, str]) -> Timeouts:
    """API_TIMEOUT_MS and the stream timeouts; raises `ConfigError` for a value that is not one.

    Unset, the read timeout is never shorter than a stream timeout, so that raising one (for a
    local model that reads a long prompt for half an hour, say) is all it takes; set, it is
    what it says.
    """
    from stayer.providers._http import DEFAULT_READ_TIMEOUT_S
    from stayer.providers._watchdog import (
        AUTO,
        DEFAULT_IDLE_TIMEOUT_S,
        FIRST_BYTE_VARIABLE,
        IDLE_VARIABLE,
    )

    first_byte = _stream_timeout(env, FIRST_BYTE_VARIABLE, AUTO)
    idle = _millis(env, IDLE_VARIABLE, zero_is_off=True)
    idle = DEFAULT_IDLE_TIMEOUT_S if idle is None else idle or None
    read = _millis(env, "API_TIMEOUT_MS", zero_is_off=False)
    if read is None:
        fixed = first_byte if isinstance(first_byte, float) else 0.0  # a scale stays under it
        read = max(DEFAULT_READ_TIMEOUT_S, fixed, idle or 0.0)
    return Timeouts(read_s=read, first_byte_s=first_byte, idle_s=idle)


_CACHED_FAMILIES = ("haiku", "sonnet", "opus")


def prompt_caching_from_env(env: Mapping[str, str]) -> PromptCaching:
    """DISABLE_PROMPT_CACHING turns cache breakpoints off; DISABLE_PROMPT_CACHING_HAIKU (and
    _SONNET, _OPUS) only for that family's models, as in Claude Code."""
    from stayer.providers.anthropic import PromptCaching

    off = {f for f in _CACHED_FAMILIES if env_flag(env, f"DISABLE_PROMPT_CACHING_{f.upper()}")}
    return PromptCaching(
        enabled=not env_flag(env, "DISABLE_PROMPT_CACHING"), off_for=frozenset(off)
    )


def _build_anthropic(
    env: Mapping[str, str], timeouts: Timeouts, max_connections: int | None
) -> Provider:
    from stayer.providers.anthropic import DEFAULT_BASE_URL, AnthropicProvider

    api_key, token = _get(env, "ANTHROPIC_API_KEY"), _get(env, "ANTHROPIC_AUTH_TOKEN")
    base_url = _get(env, "ANTHROPIC_BASE_URL")
    if not (api_key or token or base_url):
        raise ConfigError(
            "no API key for anthropic: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or ANTHROPIC_BASE_URL for a gateway"
        )
    return AnthropicProvider(
        api_key=api_key,
        auth_token=token,
        base_url=base_url or DEFAULT_BASE_URL,
        read_timeout_s=timeouts.read_s,
        first_byte_timeout_s=timeouts.first_byte_s,
        idle_timeout_s=timeouts.idle_s,
        prompt_caching=prompt_caching_from_env(env),
        max_connections=max_connections,
    )


def _build_openai(
    env: Mapping[str, str], timeouts: Timeouts, max_connections: int | None
) -> Provider:
    from stayer.providers.openai_chat import DEFAULT_BASE_URL, OpenAIChatProvider

    api_key, base_url = _get(env, "OPENAI_API_KEY"), _get(env, "OPENAI_BASE_URL")
    if not (api_key or base_url):
        raise ConfigError(
            "no API key for openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"
        )
    return OpenAIChatProvider(
        api_key=api_key,
        base_url=base_url or DEFAULT_BASE_URL,
        read_timeout_s=timeouts.read_s,
        first_byte_timeout_s=timeouts.first_byte_s,
        idle_timeout_s=timeouts.idle_s,
        max_connections=max_connections,
    )


def provider_for(
    choice: ModelChoice, env: Mapping[str, str], *, max_connections: int | None = None
) -> Provider:
    """A client for whoever serves `choice`, from the environment; raises `ConfigError`.
    `max_connections` sizes its connection pool for that many streams at once (a batch's
    shared client); None keeps httpx's default."""
    timeouts = timeouts_from_env(env)
    if choice.provider == "anthropic":
        return _build_anthropic(env, timeouts, max_connections)
    return _build_openai(env, timeouts, max_connections)


def select_provider(model: str | None, env: Mapping[str, str]) -> tuple[Provider, ModelChoice]:
    """The provider for `model` (None: the configured default) and what the name stands for."""
    choice = choose_model(model, env)
    return provider_for(choice, env), choice
