"""List prices of model calls, and what one call costs at them.

Figures are US dollars per million tokens, as the providers publish them; `PRICES_CHECKED` says
when they were last compared with the page each family's `Prices.source` names. A price page
changes more often than this code, so the figures are data in one place (`profiles`), never
arithmetic spread through the loop.

What a call costs depends on the call, not only on the run's token totals: Anthropic bills a
request whose prompt is past a threshold (more than 200k tokens with the 1M-context beta on the
Sonnet 4 models; more than 100k on Claude Haiku 5.5) at a second, higher set of rates, on every
token of that request, its output and cache traffic included. So usage is priced one model call
at a time (`Prices.cost`) and the costs are added up, never priced from a sum.

Cache writes are priced at the five-minute rate, the lifetime stayer asks for. OpenAI reports
only cache reads (its caching is automatic and writes cost nothing extra).
"""

from __future__ import annotations

from dataclasses import dataclass

from stayer.messages import Usage

PRICES_CHECKED = "2026-12-01"
"""The day the figures in `profiles` were last compared with the providers' price pages."""

ANTHROPIC_PRICES = "https://platform.claude.com/docs/en/about-claude/pricing"
OPENAI_PRICES = "https://developers.openai.com/api/docs/pricing"

CACHE_READ_MULTIPLIER = 0.1
"""Anthropic's usual price of a cache hit, as a share of the base input price."""
CACHE_WRITE_MULTIPLIER = 1.25
"""Anthropic's price of a five-minute cache write, as a share of the base input price."""


@dataclass(frozen=True, slots=True)
class Rates:
    """One set of rates, USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class Prices:
    """A model's rates, where they were read, and its long-prompt rates if it has them."""

    base: Rates
    source: str
    long_prompt: Rates | None = None
    """The rates of a request whose prompt is longer than `long_prompt_over` tokens."""
    long_prompt_over: int = 0
    """Prompt tokens (input, cache reads and cache writes together) past which a request pays
    `long_prompt` on all its tokens."""

    def rates_for(self, usage: Usage) -> Rates:
        """The rates one model call with this usage is billed at."""
        if self.long_prompt is not None and usage.total_input_tokens > self.long_prompt_over:
            return self.long_prompt
        return self.base

    def cost(self, usage: Usage) -> float:
        """What one model call with this usage costs, in US dollars."""
        rates = self.rates_for(usage)
        return (
            usage.input_tokens * rates.input
            + usage.output_tokens * rates.output
            + usage.cache_read_input_tokens * rates.cache_read
            + usage.cache_creation_input_tokens * rates.cache_write
        ) / 1_000_000


FREE = Prices(Rates(0.0, 0.0, 0.0, 0.0), source="")
"""For models we know nothing about, most often local ones."""


def _claude_rates(input_usd: float, output_usd: float) -> Rates:
    return Rates(
        input_usd,
        output_usd,
        input_usd * CACHE_READ_MULTIPLIER,
        input_usd * CACHE_WRITE_MULTIPLIER,
    )


def anthropic(
    input_usd: float,
    output_usd: float,
    *,
    cache_read: float | None = None,
    cache_write: float | None = None,
    long_prompt: tuple[int, float, float] | None = None,
) -> Prices:
    """Claude's prices: cache reads and writes at the usual multiples of input unless the page
    gives others; `long_prompt` is (threshold, input, output) of a long-prompt tier, whose cache
    rates follow its input at the usual multiples."""
    read = input_usd * CACHE_READ_MULTIPLIER if cache_read is None else cache_read
    write = input_usd * CACHE_WRITE_MULTIPLIER if cache_write is None else cache_write
    base = Rates(input_usd, output_usd, read, write)
    if long_prompt is None:
        return Prices(base, ANTHROPIC_PRICES)
    over, long_input, long_output = long_prompt
    return Prices(base, ANTHROPIC_PRICES, _claude_rates(long_input, long_output), over)


def openai(input_usd: float, output_usd: float, cached_usd: float | None = None) -> Prices:
    """OpenAI's prices: cached input at its own rate (input's, for models with no cache
    discount); writes cost what input does."""
    cached = input_usd if cached_usd is None else cached_usd
    return Prices(Rates(input_usd, output_usd, cached, input_usd), OPENAI_PRICES)
