"""Per-model facts: context window, output limit and list prices. The only place they live
(the arithmetic of a price, and where each was read and when, is `prices`).

Models are matched by the longest known prefix of their id, so dated ids
(``claude-sonnet-4-5-20250929``) and gateway spellings (``us.anthropic.claude-…``) find their
family. Unknown models get a deliberately small window, so compaction starts early rather than
late, and a price of zero: an unknown name is most often a local model.
"""

from __future__ import annotations

from dataclasses import dataclass

from stayer.messages import Usage
from stayer.providers.prices import FREE, Prices, anthropic, openai


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What the loop needs to know about a model: its limits and its list prices."""

    family: str
    context_window: int
    max_output_tokens: int
    prices: Prices
    known: bool = True
    long_context_window: int | None = None
    """The window with Anthropic's 1M-context beta (``sonnet[1m]``), for models that offer it."""


LONG_CONTEXT_WINDOW = 1_000_000
LONG_CONTEXT_OVER = 200_000
"""Prompt tokens past which a Sonnet 4 or 4.5 request (only possible with the 1M beta) is billed
at the long-context rates."""
HAIKU_5_5_LONG_OVER = 100_000


def _claude(
    family: str, window: int, output: int, prices: Prices, *, long: bool = False
) -> ModelProfile:
    long_window = LONG_CONTEXT_WINDOW if long else None
    return ModelProfile(family, window, output, prices, long_context_window=long_window)


def _openai(family: str, window: int, output: int, prices: Prices) -> ModelProfile:
    return ModelProfile(family, window, output, prices)


_M = 1_000_000
_K128 = 128_000
# Prices from the pages `prices.ANTHROPIC_PRICES` and `prices.OPENAI_PRICES`, checked on
# `prices.PRICES_CHECKED`. Claude Sonnet 5.5's cache reads: $0.10 since the cut of 2026-10-07.
_PROFILES: dict[str, ModelProfile] = {
    "claude-fable-5-1": _claude("claude-fable-5-1", _M, _K128, anthropic(10, 50, cache_read=0.25)),
    "claude-fable-5": _claude("claude-fable-5", _M, _K128, anthropic(10, 50)),
    "claude-opus-5-5": _claude("claude-opus-5-5", _M, _K128, anthropic(4, 20, cache_read=0.2)),
    "claude-opus-5": _claude("claude-opus-5", _M, _K128, anthropic(5, 25)),
    "claude-opus-4-8": _claude("claude-opus-4-8", 200_000, 64_000, anthropic(5, 25), long=True),
    "claude-opus-4-7": _claude("claude-opus-4-7", 200_000, 64_000, anthropic(5, 25), long=True),
    "claude-opus-4-6": _claude("claude-opus-4-6", 200_000, 64_000, anthropic(5, 25), long=True),
    "claude-opus-4-5": _claude("claude-opus-4-5", 200_000, 64_000, anthropic(5, 25)),
    "claude-opus-4-1": _claude("claude-opus-4-1", 200_000, 32_000, anthropic(15, 75)),
    "claude-opus-4": _claude("claude-opus-4", 200_000, 32_000, anthropic(15, 75)),
    "claude-sonnet-5-5": _claude(
        "claude-sonnet-5-5", _M, _K128, anthropic(2, 10, cache_read=0.1), long=True
    ),
    "claude-sonnet-5": _claude("claude-sonnet-5", _M, _K128, anthropic(2, 10), long=True),
    "claude-sonnet-4-6": _claude("claude-sonnet-4-6", 200_000, 64_000, anthropic(3, 15), long=True),
    "claude-sonnet-4-5": _claude(
        "claude-sonnet-4-5",
        200_000,
        64_000,
        anthropic(3, 15, long_prompt=(LONG_CONTEXT_OVER, 6, 22.5)),
        long=True,
    ),
    "claude-sonnet-4": _claude(
        "claude-sonnet-4",
        200_000,
        64_000,
        anthropic(3, 15, long_prompt=(LONG_CONTEXT_OVER, 6, 22.5)),
        long=True,
    ),
    "claude-haiku-5-5": _claude(
        "claude-haiku-5-5",
        _M,
        _K128,
        anthropic(0.1, 0.5, cache_read=0.01, long_prompt=(HAIKU_5_5_LONG_OVER, 0.5, 2.5)),
        long=True,
    ),
    "claude-haiku-4-5": _claude("claude-haiku-4-5", 200_000, 64_000, anthropic(1, 5)),
    "claude-3-7-sonnet": _claude("claude-3-7-sonnet", 200_000, 64_000, anthropic(3, 15)),
    "claude-3-5-haiku": _claude("claude-3-5-haiku", 200_000, 8_192, anthropic(0.8, 4)),
    "claude-3-haiku": _claude(
        "claude-3-haiku", 200_000, 4_096, anthropic(0.25, 1.25, cache_read=0.03, cache_write=0.3)
    ),
    "claude": _claude("claude", 200_000, 32_000, anthropic(3, 15)),
    "gpt-5.5-pro": _openai("gpt-5.5-pro", 400_000, _K128, openai(30, 180)),
    "gpt-5.5": _openai("gpt-5.5", 400_000, _K128, openai(5, 30, 0.5)),
    "gpt-5.4-nano": _openai("gpt-5.4-nano", 400_000, _K128, openai(0.2, 1.25, 0.02)),
    "gpt-5.4-mini": _openai("gpt-5.4-mini", 400_000, _K128, openai(0.75, 4.5, 0.075)),
    "gpt-5.4": _openai("gpt-5.4", 400_000, _K128, openai(2.5, 15, 0.25)),
    "gpt-5.2": _openai("gpt-5.2", 400_000, _K128, openai(1.75, 14, 0.175)),
    "gpt-5-nano": _openai("gpt-5-nano", 400_000, _K128, openai(0.05, 0.40, 0.005)),
    "gpt-5-mini": _openai("gpt-5-mini", 400_000, _K128, openai(0.25, 2.0, 0.025)),
    "gpt-5": _openai("gpt-5", 400_000, _K128, openai(1.25, 10.0, 0.125)),
    "gpt-4.1-nano": _openai("gpt-4.1-nano", 1_047_576, 32_768, openai(0.10, 0.40, 0.025)),
    "gpt-4.1-mini": _openai("gpt-4.1-mini", 1_047_576, 32_768, openai(0.40, 1.60, 0.10)),
    "gpt-4.1": _openai("gpt-4.1", 1_047_576, 32_768, openai(2.0, 8.0, 0.50)),
    "gpt-4o-mini": _openai("gpt-4o-mini", 128_000, 16_384, openai(0.15, 0.60, 0.075)),
    "gpt-4o": _openai("gpt-4o", 128_000, 16_384, openai(2.50, 10.0, 1.25)),
    "o4-mini": _openai("o4-mini", 200_000, 100_000, openai(1.10, 4.40, 0.275)),
    "o3-mini": _openai("o3-mini", 200_000, 100_000, openai(1.10, 4.40, 0.55)),
    "o3": _openai("o3", 200_000, 100_000, openai(2.0, 8.0, 0.50)),
    "o3-pro": _openai("o3-pro", 200_000, 100_000, openai(20.0, 80.0)),
    "o1-mini": _openai("o1-mini", 128_000, 65_536, openai(1.10, 4.40, 0.55)),
    "o1-pro": _openai("o1-pro", 200_000, 100_000, openai(150.0, 600.0)),
    "o1": _openai("o1", 200_000, 100_000, openai(15.0, 60.0, 7.50)),
    "chatgpt-4o": _openai("chatgpt-4o", 128_000, 16_384, openai(5.0, 15.0)),
    "gpt-": _openai("gpt", 128_000, 16_384, openai(2.50, 10.0, 1.25)),
}
# Longest prefix first, so "claude-opus-4-5" is tried before "claude-opus-4".
_PREFIXES = sorted(_PROFILES, key=len, reverse=True)

DEFAULT_PROFILE = ModelProfile("unknown", 32_768, 8_192, FREE, known=False)
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
    each call on its own: a long prompt can change the rates, see `prices`)."""
    return profile_for(model).prices.cost(usage)
