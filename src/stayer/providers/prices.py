"""What one model call costs: the `genai-prices` package's figures, and a few kept by hand.

`genai-prices` (pinned in `pyproject.toml`, updated with the lock) knows each model's list
prices, its cache read and five-minute cache write rates, and its long-prompt tiers: Anthropic
bills a request whose prompt is past a threshold (more than 200k tokens with the 1M-context beta
on the Sonnet 4 models, more than 100k on Claude Haiku 5.5) at a second set of rates, on every
token of that request, and OpenAI does the same past 272k on GPT-5.4 and later. So usage is
priced one model call at a time (`call_cost`) and the costs are added up, never priced from a
sum. A price page changes more often than this code; the package is the one place to update.

The package itself is not imported in a run: importing it costs about a second on a busy
machine, between the last answer and the `result`. Its Anthropic and OpenAI lists are kept as
a generated table (`price_table`, priced by `listed`, checked against the package by a test),
loaded with the first cost asked for, in about a millisecond; each cost after that takes
microseconds.

Kept by hand (`Prices`): what the package does not know, namely the catch-alls for a Claude or
GPT model newer than it (priced as their family's usual tier, so a budget still stops a run)
and `chatgpt-4o`. A rate the package leaves out is the input rate: OpenAI bills no cache write
premium, and a model with no cache discount (o3-pro) bills a cache hit as input.
"""

from __future__ import annotations

from msgspec import Struct

from stayer.messages import Usage

ANTHROPIC_PRICES = "https://platform.claude.com/docs/en/about-claude/pricing"
OPENAI_PRICES = "https://developers.openai.com/api/docs/pricing"
PRICES_CHECKED = "2026-12-02"
"""The day the figures kept by hand were last compared with the pages above."""

CACHE_READ_MULTIPLIER = 0.1
"""Anthropic's usual price of a cache hit, as a share of the base input price."""
CACHE_WRITE_MULTIPLIER = 1.25
"""Anthropic's price of a five-minute cache write, as a share of the base input price."""


class Rates(Struct, frozen=True):
    """One set of rates, USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


class Prices(Struct, frozen=True):
    """Rates kept by hand for a model the package does not know, and where they were read."""

    base: Rates
    source: str

    def cost(self, usage: Usage) -> float:
        """What one model call with this usage costs, in US dollars."""
        rates = self.base
        return (
            usage.input_tokens * rates.input
            + usage.output_tokens * rates.output
            + usage.cache_read_input_tokens * rates.cache_read
            + usage.cache_creation_input_tokens * rates.cache_write
        ) / 1_000_000


FREE = Prices(Rates(0.0, 0.0, 0.0, 0.0), source="")
"""For models we know nothing about, most often local ones."""


def anthropic(input_usd: float, output_usd: float) -> Prices:
    """Claude's rates by hand: cache reads and writes at the usual multiples of input."""
    return Prices(
        Rates(
            input_usd,
            output_usd,
            input_usd * CACHE_READ_MULTIPLIER,
            input_usd * CACHE_WRITE_MULTIPLIER,
        ),
        ANTHROPIC_PRICES,
    )


def openai(input_usd: float, output_usd: float, cached_usd: float | None = None) -> Prices:
    """OpenAI's rates by hand: cached input at its own rate (input's when none is given);
    writes cost what input does."""
    cached = input_usd if cached_usd is None else cached_usd
    return Prices(Rates(input_usd, output_usd, cached, input_usd), OPENAI_PRICES)


def listed_cost(model: str, provider: str, usage: Usage) -> float | None:
    """What one call of `model` with this usage costs at the package's prices (its long-prompt
    tier when the call's prompt is past it); None when the package does not know the model."""
    from stayer.providers.listed import listed_price

    price = listed_price(provider, model)
    if price is None:
        return None
    cost = price.cost(
        usage.total_input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    )
    return float(cost)
