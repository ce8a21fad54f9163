"""What a model call costs: `genai-prices`' figures for each kind of token, the long-prompt
tiers priced per call, the few rates kept by hand, and the table of the package's prices loaded
only when a cost is asked for."""

from __future__ import annotations

import datetime
import subprocess
import sys

import pytest

from stayer.messages import Usage
from stayer.providers.prices import ANTHROPIC_PRICES, FREE, OPENAI_PRICES, PRICES_CHECKED
from stayer.providers.profiles import _PROFILES, DEFAULT_PROFILE, cost_usd

MILLION = 1_000_000


def every_kind(tokens: int) -> Usage:
    return Usage(
        input_tokens=tokens,
        output_tokens=tokens,
        cache_read_input_tokens=tokens,
        cache_creation_input_tokens=tokens,
    )


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        # input, output, cache read, five-minute cache write; USD per million tokens
        ("claude-opus-5-5", (4, 20, 0.2, 5)),
        ("claude-sonnet-5-5", (2, 10, 0.1, 2.5)),
        ("claude-fable-5-2", (8, 40, 0.2, 10)),
        ("claude-fable-5-1", (10, 50, 0.25, 12.5)),
        ("claude-opus-4-5", (5, 25, 0.5, 6.25)),
        ("claude-haiku-4-5", (1, 5, 0.1, 1.25)),
        ("claude-sonnet-4-5-20250929", (3, 15, 0.3, 3.75)),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", (1, 5, 0.1, 1.25)),
        ("anthropic:claude-3-haiku-20240307", (0.25, 1.25, 0.03, 0.3)),
        # OpenAI bills no write premium, and o3-pro no cache discount: those are input.
        ("gpt-5.5", (5, 30, 0.5, 5)),
        ("gpt-4.1", (2, 8, 0.5, 2)),
        ("o3-pro", (20, 80, 20, 20)),
    ],
)
def test_a_call_pays_each_kind_of_token_at_its_rate(
    model: str, rates: tuple[float, float, float, float]
) -> None:
    # Kept far under every long-prompt tier: 1k tokens of each kind.
    each = (1_000 * rate / MILLION for rate in rates)
    assert cost_usd(model, every_kind(1_000)) == pytest.approx(sum(each))


def test_a_sonnet_4_5_request_past_200k_pays_long_context_rates_on_every_token() -> None:
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
    assert cost_usd("claude-sonnet-4-5", at_threshold) == pytest.approx(
        (50_000 * 3 + 140_000 * 0.3 + 10_000 * 3.75 + 2_000 * 15) / MILLION
    )
    assert cost_usd("claude-sonnet-4-5", past) == pytest.approx(
        (50_001 * 6 + 140_000 * 0.6 + 10_000 * 7.5 + 2_000 * 22.5) / MILLION
    )


def test_haiku_5_5_and_gpt_5_5_have_a_long_tier_and_sonnet_5_5_has_none() -> None:
    short, long = Usage(input_tokens=100_000), Usage(input_tokens=100_001, output_tokens=1_000)
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx(100_000 * 0.1 / MILLION)
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx(
        (100_001 * 0.5 + 1_000 * 2.5) / MILLION
    )
    assert cost_usd("gpt-5.5", Usage(input_tokens=272_001)) == pytest.approx(272_001 * 10 / MILLION)
    huge = Usage(input_tokens=900_000)
    assert cost_usd("claude-sonnet-5-5", huge) == pytest.approx(900_000 * 2 / MILLION)


def test_costs_of_calls_add_up_but_a_sum_of_usage_is_not_one_call() -> None:
    """Two 150k-token calls are each under the threshold; priced as one 300k call they would
    wrongly pay the long-context rates."""
    call = Usage(input_tokens=150_000, output_tokens=1_000)
    two_calls = 2 * cost_usd("claude-sonnet-4-5", call)
    assert two_calls == pytest.approx(2 * (150_000 * 3 + 1_000 * 15) / MILLION)
    assert cost_usd("claude-sonnet-4-5", call + call) == pytest.approx(
        (300_000 * 6 + 2_000 * 22.5) / MILLION
    )


def test_what_the_package_does_not_know_is_priced_by_hand() -> None:
    newer = every_kind(MILLION)
    assert cost_usd("claude-someday-9", newer) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert cost_usd("gpt-9-turbo", newer) == pytest.approx(2.5 + 10 + 1.25 + 2.5)
    assert cost_usd("chatgpt-4o-latest", newer) == pytest.approx(5 + 15 + 5 + 5)


def test_every_family_of_the_table_has_a_price() -> None:
    unpriced = [family for family in _PROFILES if cost_usd(family + "x", every_kind(1)) <= 0]
    assert unpriced == []


def test_unknown_models_are_free_and_priced_nowhere() -> None:
    assert DEFAULT_PROFILE.prices == FREE
    assert cost_usd("llama3.1:8b", every_kind(MILLION)) == 0.0


def test_the_hand_kept_figures_are_dated_and_name_their_page() -> None:
    assert datetime.date.fromisoformat(PRICES_CHECKED) <= datetime.date.today()
    kept = {family: p.prices.source for family, p in _PROFILES.items() if p.prices is not None}
    assert kept == {"claude": ANTHROPIC_PRICES, "chatgpt-4o": OPENAI_PRICES, "gpt-": OPENAI_PRICES}


def test_the_table_is_loaded_only_when_a_cost_is_asked_for_and_the_package_never() -> None:
    probe = (
        "import sys, stayer.cli, stayer.providers.profiles, stayer.providers.select;"
        "from stayer.providers.select import choose_model;"
        "choose_model('sonnet', {'ANTHROPIC_API_KEY': 'k', 'STAYER_CONFIG_DIR': '/nonexistent'});"
        "before = 'stayer.providers.price_table' in sys.modules;"
        "from stayer.providers.profiles import cost_usd; from stayer.messages import Usage;"
        "cost_usd('claude-opus-5-5', Usage(input_tokens=1));"
        "print(before, 'stayer.providers.price_table' in sys.modules,"
        " 'genai_prices' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]
