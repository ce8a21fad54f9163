"""Per-model facts: context window, output limit and prices. The only place they live.

Models are matched by the longest known prefix of their id, so dated ids
(``claude-sonnet-4-5-20250929``) and gateway spellings (``us.anthropic.claude-…``) find their
family. Unknown models get a deliberately small window, so compaction starts early rather than
late, and a price of zero: an unknown name is most often a local model.
"""

from __future__ import annotations

from dataclasses import dataclass

from stayer.messages import Usage


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What the loop needs to know about a model; prices are USD per million tokens."""

    family: str
    context_window: int
    max_output_tokens: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_read_usd_per_mtok: float
    cache_write_usd_per_mtok: float
    known: bool = True
    long_context_window: int | None = None
    """The window with Anthropic's 1M-context beta (``sonnet[1m]``), for models that offer it."""


def _claude(
    family: str, window: int, output: int, price_in: float, price_out: float, *, long: bool = False
) -> ModelProfile:
    # Anthropic bills cache reads at a tenth of input and five-minute cache writes at 1.25x.
    return ModelProfile(
        family,
        window,
        output,
        price_in,
        price_out,
        price_in / 10,
        price_in * 1.25,
        long_context_window=LONG_CONTEXT_WINDOW if long else None,
    )


def _openai(
    family: str, window: int, output: int, price_in: float, price_out: float, cached: float
) -> ModelProfile:
    # OpenAI caches on its own and bills no write premium.
    return ModelProfile(family, window, output, price_in, price_out, cached, price_in)


LONG_CONTEXT_WINDOW = 1_000_000

_PROFILES: dict[str, ModelProfile] = {
    "claude-opus-4-6": _claude("claude-opus-4-6", 200_000, 64_000, 5.0, 25.0, long=True),
    "claude-opus-4-5": _claude("claude-opus-4-5", 200_000, 64_000, 5.0, 25.0),
    "claude-opus-4-1": _claude("claude-opus-4-1", 200_000, 32_000, 15.0, 75.0),
    "claude-opus-4": _claude("claude-opus-4", 200_000, 32_000, 15.0, 75.0),
    "claude-sonnet-4-6": _claude("claude-sonnet-4-6", 200_000, 64_000, 3.0, 15.0, long=True),
    "claude-sonnet-4-5": _claude("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0, long=True),
    "claude-sonnet-4": _claude("claude-sonnet-4", 200_000, 64_000, 3.0, 15.0, long=True),
    "claude-haiku-4-5": _claude("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0),
    "claude-3-7-sonnet": _claude("claude-3-7-sonnet", 200_000, 64_000, 3.0, 15.0),
    "claude-3-5-haiku": _claude("claude-3-5-haiku", 200_000, 8_192, 0.8, 4.0),
    "claude-3-haiku": _claude("claude-3-haiku", 200_000, 4_096, 0.25, 1.25),
    "claude": _claude("claude", 200_000, 32_000, 3.0, 15.0),
    "gpt-5-nano": _openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.40, 0.005),
    "gpt-5-mini": _openai("gpt-5-mini", 400_000, 128_000, 0.25, 2.0, 0.025),
    "gpt-5": _openai("gpt-5", 400_000, 128_000, 1.25, 10.0, 0.125),
    "gpt-4.1-nano": _openai("gpt-4.1-nano", 1_047_576, 32_768, 0.10, 0.40, 0.025),
    "gpt-4.1-mini": _openai("gpt-4.1-mini", 1_047_576, 32_768, 0.40, 1.60, 0.10),
    "gpt-4.1": _openai("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.50),
    "gpt-4o-mini": _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075),
    "gpt-4o": _openai("gpt-4o", 128_000, 16_384, 2.50, 10.0, 1.25),
    "o4-mini": _openai("o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275),
    "o3-mini": _openai("o3-mini", 200_000, 100_000, 1.10, 4.40, 0.55),
    "o3": _openai("o3", 200_000, 100_000, 2.0, 8.0, 0.50),
    "o3-pro": _openai("o3-pro", 200_000, 100_000, 20.0, 80.0, 20.0),
    "o1-mini": _openai("o1-mini", 128_000, 65_536, 1.10, 4.40, 0.55),
    "o1-pro": _openai("o1-pro", 200_000, 100_000, 150.0, 600.0, 150.0),
    "o1": _openai("o1", 200_000, 100_000, 15.0, 60.0, 7.50),
    "chatgpt-4o": _openai("chatgpt-4o", 128_000, 16_384, 5.0, 15.0, 5.0),
    "gpt-": _openai("gpt", 128_000, 16_384, 2.50, 10.0, 1.25),
}
# Longest prefix first, so "claude-opus-4-5" is tried before "claude-opus-4".
_PREFIXES = sorted(_PROFILES, key=len, reverse=True)

DEFAULT_PROFILE = ModelProfile("unknown", 32_768, 8_192, 0.0, 0.0, 0.0, 0.0, known=False)
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
    """What `usage` cost in US dollars at `model`'s list prices."""
    profile = profile_for(model)
    return (
        usage.input_tokens * profile.input_usd_per_mtok
        + usage.output_tokens * profile.output_usd_per_mtok
        + usage.cache_read_input_tokens * profile.cache_read_usd_per_mtok
        + usage.cache_creation_input_tokens * profile.cache_write_usd_per_mtok
    ) / 1_000_000
