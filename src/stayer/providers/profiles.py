"""Per-model facts: context window and output limit, and the list prices `genai-prices` does
not know (what a call costs is `prices`; which models the aliases mean is `models`).

Models are matched by the longest known prefix of their id, so dated ids
(``claude-sonnet-4-5-20250929``) and gateway spellings (``us.anthropic.claude-…``) find their
family. Unknown models get a deliberately small window, so compaction starts early rather than
late, and a price of zero: an unknown name is most often a local model.
"""

from __future__ import annotations

from msgspec import Struct

from stayer.messages import Usage
from stayer.providers.prices import FREE, Prices, anthropic, listed_cost, openai


class ModelProfile(Struct, frozen=True):
    """What the loop needs to know about a model: its limits, and its list prices where
    `genai-prices` does not know them (`prices`: None means the package prices it)."""

    family: str
    context_window: int
    max_output_tokens: int
    prices: Prices | None = None
    known: bool = True
    long_context_window: int | None = None
    """The window with Anthropic's 1M-context beta (``sonnet[1m]``), for models that offer it."""
    provider: str = "anthropic"
    """Whose price list the package looks the model up in."""


LONG_CONTEXT_WINDOW = 1_000_000


def _claude(family: str, window: int, output: int, *, long: bool = False) -> ModelProfile:
    long_window = LONG_CONTEXT_WINDOW if long else None
    return ModelProfile(family, window, output, long_context_window=long_window)


def _openai(family: str, window: int, output: int, prices: Prices | None = None) -> ModelProfile:
    return ModelProfile(family, window, output, prices, provider="openai")


_M = 1_000_000
_K128 = 128_000
# Limits from each model's page (platform.claude.com/docs/en/models/…, OpenAI's model pages),
# checked on `prices.PRICES_CHECKED`. Claude Fable 5.2 has no page of Anthropic's in our
# references yet: its limits are the gateways' (Vercel AI Gateway, Runware: 1M and 128K, as
# Fable 5.1's), its prices the package's ($8 / $40).
_PROFILES: dict[str, ModelProfile] = {
    "claude-fable-5-2": _claude("claude-fable-5-2", _M, _K128),
    "claude-fable-5-1": _claude("claude-fable-5-1", _M, _K128),
    "claude-fable-5": _claude("claude-fable-5", _M, _K128),
    "claude-opus-5-5": _claude("claude-opus-5-5", _M, _K128),
    "claude-opus-5": _claude("claude-opus-5", _M, _K128),
    "claude-opus-4-8": _claude("claude-opus-4-8", 200_000, 64_000, long=True),
    "claude-opus-4-7": _claude("claude-opus-4-7", 200_000, 64_000, long=True),
    "claude-opus-4-6": _claude("claude-opus-4-6", 200_000, 64_000, long=True),
    "claude-opus-4-5": _claude("claude-opus-4-5", 200_000, 64_000),
    "claude-opus-4-1": _claude("claude-opus-4-1", 200_000, 32_000),
    "claude-opus-4": _claude("claude-opus-4", 200_000, 32_000),
    "claude-sonnet-5-5": _claude("claude-sonnet-5-5", _M, _K128, long=True),
    "claude-sonnet-5": _claude("claude-sonnet-5", _M, _K128, long=True),
    "claude-sonnet-4-6": _claude("claude-sonnet-4-6", 200_000, 64_000, long=True),
    "claude-sonnet-4-5": _claude("claude-sonnet-4-5", 200_000, 64_000, long=True),
    "claude-sonnet-4": _claude("claude-sonnet-4", 200_000, 64_000, long=True),
    "claude-haiku-5-5": _claude("claude-haiku-5-5", _M, _K128, long=True),
    "claude-haiku-4-5": _claude("claude-haiku-4-5", 200_000, 64_000),
    "claude-3-7-sonnet": _claude("claude-3-7-sonnet", 200_000, 64_000),
    "claude-3-5-haiku": _claude("claude-3-5-haiku", 200_000, 8_192),
    "claude-3-haiku": _claude("claude-3-haiku", 200_000, 4_096),
    # A Claude model newer than the package: priced as the usual Sonnet tier, by hand.
    "claude": ModelProfile("claude", 200_000, 32_000, anthropic(3, 15)),
    "gpt-5.5-pro": _openai("gpt-5.5-pro", 400_000, _K128),
    "gpt-5.5": _openai("gpt-5.5", 400_000, _K128),
    "gpt-5.4-nano": _openai("gpt-5.4-nano", 400_000, _K128),
    "gpt-5.4-mini": _openai("gpt-5.4-mini", 400_000, _K128),
    "gpt-5.4": _openai("gpt-5.4", 400_000, _K128),
    "gpt-5.2": _openai("gpt-5.2", 400_000, _K128),
    "gpt-5-nano": _openai("gpt-5-nano", 400_000, _K128),
    "gpt-5-mini": _openai("gpt-5-mini", 400_000, _K128),
    "gpt-5": _openai("gpt-5", 400_000, _K128),
    "gpt-4.1-nano": _openai("gpt-4.1-nano", 1_047_576, 32_768),
    "gpt-4.1-mini": _openai("gpt-4.1-mini", 1_047_576, 32_768),
    "gpt-4.1": _openai("gpt-4.1", 1_047_576, 32_768),
    "gpt-4o-mini": _openai("gpt-4o-mini", 128_000, 16_384),
    "gpt-4o": _openai("gpt-4o", 128_000, 16_384),
    "o4-mini": _openai("o4-mini", 200_000, 100_000),
    "o3-mini": _openai("o3-mini", 200_000, 100_000),
    "o3": _openai("o3", 200_000, 100_000),
    "o3-pro": _openai("o3-pro", 200_000, 100_000),
    "o1-mini": _openai("o1-mini", 128_000, 65_536),
    "o1-pro": _openai("o1-pro", 200_000, 100_000),
    "o1": _openai("o1", 200_000, 100_000),
    # Neither is in the package: kept by hand.
    "chatgpt-4o": _openai("chatgpt-4o", 128_000, 16_384, openai(5.0, 15.0)),
    "gpt-": _openai("gpt", 128_000, 16_384, openai(2.50, 10.0, 1.25)),
}
# Longest prefix first, so "claude-opus-4-5" is tried before "claude-opus-4".
_PREFIXES = sorted(_PROFILES, key=len, reverse=True)

DEFAULT_PROFILE = ModelProfile("unknown", 32_768, 8_192, FREE, known=False, provider="")
"""For models we know nothing about, most often local ones."""

_PROVIDER_PREFIXES = ("anthropic:", "openai:")


def _normalise(model: str) -> str:
    name = model.strip().lower()
    for prefix in _PROVIDER_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
    # Bedrock and Vertex put a region or vendor in front of the Claude id.
    at = name.find("claude-")
    return name[at:] if at > 0 else name


def profile_for(model: str) -> ModelProfile:
    """The profile of `model`, matched by the longest known prefix; a default if none matches."""
    name = _normalise(model)
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return _PROFILES[prefix]
    return DEFAULT_PROFILE


def cost_usd(model: str, usage: Usage) -> float:
    """What one call of `model` with this usage cost in US dollars at its list prices (price
    each call on its own: a long prompt can change the rates, see `prices`). A model we know
    nothing of, most often a local one, is free."""
    profile = profile_for(model)
    if not profile.known:
        return 0.0
    if profile.prices is not None:  # kept by hand: the package does not know it
        return profile.prices.cost(usage)
    for name in (_normalise(model), profile.family):  # its own spelling, then its family's
        listed = listed_cost(name, profile.provider, usage)
        if listed is not None:
            return listed
    return 0.0  # not reached for the table's families: the package knows each of them
