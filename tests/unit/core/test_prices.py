"""The arithmetic of what a model call costs: every kind of token at its rate, the cache
multipliers, the long-prompt tiers priced per call, and a dated table whose every family names
its price page."""

from __future__ import annotations

import datetime
from dataclasses import astuple

import pytest

from stayer.messages import Usage
from stayer.providers.prices import (
    ANTHROPIC_PRICES,
    FREE,
    OPENAI_PRICES,
    PRICES_CHECKED,
    Rates,
    anthropic,
)
from stayer.providers.profiles import _PROFILES, DEFAULT_PROFILE, cost_usd, profile_for

MILLION = 1_000_000


def every_kind(tokens: int) -> Usage:
    return Usage(
        input_tokens=tokens,
        output_tokens=tokens,
        cache_read_input_tokens=tokens,
        cache_creation_input_tokens=tokens,
    )


def test_a_call_pays_each_kind_of_token_at_its_rate() -> None:
    # Opus 4.5: 5 in, 25 out, cache hits at a tenth of input, five-minute writes at 1.25x.
    assert cost_usd("claude-opus-4-5", every_kind(MILLION)) == pytest.approx(5 + 25 + 0.5 + 6.25)
    assert cost_usd("claude-opus-4-5", Usage(input_tokens=1_000, output_tokens=400)) == (
        pytest.approx((1_000 * 5 + 400 * 25) / MILLION)
    )


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-4-5-20250929", (3, 15, 0.3, 3.75)),
        ("claude-haiku-4-5", (1, 5, 0.1, 1.25)),
        # Where the page gives a cache rate other than the usual multiple, it wins.
        ("claude-opus-5-5", (4, 20, 0.2, 5)),
        ("claude-fable-5-1", (10, 50, 0.25, 12.5)),
        ("claude-sonnet-5-5", (2, 10, 0.1, 2.5)),
        ("claude-3-haiku-20240307", (0.25, 1.25, 0.03, 0.3)),
        # OpenAI bills no write premium: a write (never reported) costs what input does.
        ("gpt-5.5", (5, 30, 0.5, 5)),
        ("gpt-4.1-mini", (0.4, 1.6, 0.1, 0.4)),
        ("o3-pro", (20, 80, 20, 20)),
    ],
)
def test_base_rates_with_their_cache_rates(
    model: str, rates: tuple[float, float, float, float]
) -> None:
    assert astuple(profile_for(model).prices.base) == pytest.approx(rates)


def test_a_sonnet_4_5_request_past_200k_pays_long_context_rates_on_every_token() -> None:
    prices = profile_for("claude-sonnet-4-5").prices
    # The threshold counts the whole prompt: uncached input, cache reads and cache writes.
    at_threshold = Usage(
        input_tokens=50_000,
        cache_read_input_tokens=140_000,
        cache_creation_input_tokens=10_000,
        output_tokens=2_000,
    )
    past = Usage(
        input_tokens=50_001,
        cache_read_input_tokens=140_000,
        cache_creation_input_tokens=10_000,
        output_tokens=2_000,
    )
    assert astuple(prices.rates_for(at_threshold)) == pytest.approx((3, 15, 0.3, 3.75))
    assert astuple(prices.rates_for(past)) == pytest.approx((6, 22.5, 0.6, 7.5))
    assert prices.cost(at_threshold) == pytest.approx(
        (50_000 * 3 + 140_000 * 0.3 + 10_000 * 3.75 + 2_000 * 15) / MILLION
    )
    assert prices.cost(past) == pytest.approx(
        (50_001 * 6 + 140_000 * 0.6 + 10_000 * 7.5 + 2_000 * 22.5) / MILLION
    )


def test_haiku_5_5_has_a_second_tier_past_100k_and_newer_models_have_none() -> None:
    haiku = profile_for("claude-haiku-5-5").prices
    assert astuple(haiku.rates_for(Usage(input_tokens=100_000))) == pytest.approx(
        (0.1, 0.5, 0.01, 0.125)
    )
    assert astuple(haiku.rates_for(Usage(input_tokens=100_001))) == pytest.approx(
        (0.5, 2.5, 0.05, 0.625)
    )
    # Sonnet 4.6, Opus 4.6 and the 5 models are billed alike across the whole window.
    for model in ("claude-sonnet-4-6", "claude-opus-4-6", "claude-sonnet-5-5", "claude-opus-5"):
        prices = profile_for(model).prices
        assert prices.long_prompt is None, model
        assert prices.rates_for(Usage(input_tokens=900_000)) == prices.base


def test_costs_of_calls_add_up_but_a_sum_of_usage_is_not_one_call() -> None:
    """Two 150k-token calls are each under the threshold; priced as one 300k call they would
    wrongly pay the long-context rates."""
    call = Usage(input_tokens=150_000, output_tokens=1_000)
    two_calls = 2 * cost_usd("claude-sonnet-4-5", call)
    assert two_calls == pytest.approx(2 * (150_000 * 3 + 1_000 * 15) / MILLION)
    assert cost_usd("claude-sonnet-4-5", call + call) == pytest.approx(
        (300_000 * 6 + 2_000 * 22.5) / MILLION
    )


def test_a_long_prompt_tier_takes_its_cache_rates_from_its_input() -> None:
    prices = anthropic(3, 15, long_prompt=(200_000, 6, 22.5))
    assert prices.long_prompt == Rates(6, 22.5, 6 * 0.1, 6 * 1.25)
    assert prices.long_prompt_over == 200_000


def test_unknown_models_are_free_and_priced_nowhere() -> None:
    assert DEFAULT_PROFILE.prices == FREE
    assert cost_usd("llama3.1:8b", every_kind(MILLION)) == 0.0


def test_the_table_is_dated_and_every_family_names_its_price_page() -> None:
    assert datetime.date.fromisoformat(PRICES_CHECKED) <= datetime.date.today()
    sources = {family: profile.prices.source for family, profile in _PROFILES.items()}
    assert sources == {
        family: ANTHROPIC_PRICES if family.startswith("claude") else OPENAI_PRICES
        for family in _PROFILES
    }
