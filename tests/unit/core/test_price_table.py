"""The generated price table is what `genai-prices` says today, every model in it costs exactly
what the package would charge (`test_prices` checks the package itself is never imported)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from genai_prices import Usage as Counted
from genai_prices import calc_price
from genai_prices.data import providers
from msgspec.json import decode

from stayer.messages import Usage
from stayer.providers.listed import ListedModel, find_model, price_lists
from stayer.providers.prices import listed_cost


def _generator() -> ModuleType:
    """scripts/gen_price_table.py, which writes the table (scripts are not a package)."""
    script = Path(__file__).resolve().parents[3] / "scripts" / "gen_price_table.py"
    spec = importlib.util.spec_from_file_location("gen_price_table", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()

USAGES = (
    Usage(),
    Usage(input_tokens=1_234, output_tokens=567),
    Usage(
        input_tokens=3_000,
        output_tokens=2_000,
        cache_read_input_tokens=40_000,
        cache_creation_input_tokens=5_000,
    ),
    # Either side of each long-prompt threshold in the lists (100k, 128k, 200k, 272k).
    *(
        Usage(input_tokens=start + step, output_tokens=9)
        for start in (100_000, 128_000)
        for step in (0, 1)
    ),
    *(
        Usage(
            input_tokens=start - 150_000 + step,
            output_tokens=1_000,
            cache_read_input_tokens=140_000,
            cache_creation_input_tokens=10_000,
        )
        for start in (200_000, 272_000)
        for step in (0, 1)
    ),
)


def package_cost(model: str, provider: str, usage: Usage) -> float | None:
    """What `stayer.providers.prices` worked out before the table: the package's own pricing."""
    try:
        price = calc_price(Counted(input_tokens=0), model, provider_id=provider).model_price
    except LookupError:
        return None
    reads = usage.cache_read_input_tokens if price.cache_read_mtok is not None else 0
    writes = usage.cache_creation_input_tokens if price.cache_write_mtok is not None else 0
    counted = Counted(
        input_tokens=usage.total_input_tokens,
        cache_read_tokens=reads,
        cache_write_tokens=writes,
        output_tokens=usage.output_tokens,
    )
    return float(price.calc_price(counted)["total_price"])


def names() -> Iterator[tuple[str, str]]:
    """Every model of the two lists by its id, and names that only a rule or a fix-up finds."""
    for provider in providers:
        if provider.id in GENERATOR.PROVIDERS:
            for model in provider.models:
                yield provider.id, model.id
    yield from (
        ("anthropic", "claude-sonnet-4-5-20250929"),
        ("anthropic", "claude-opus-5@20261001"),
        ("anthropic", "claude-someday-9"),
        ("openai", "gpt-4.1-2025-04-14"),
        ("openai", "gpt-5.2-20251211"),  # a gateway's compact date
        ("openai", "o3-20250416"),
        ("openai", "gpt-9-turbo"),
        ("elsewhere", "claude-sonnet-4-5"),
    )


def test_the_table_is_what_the_package_says_today() -> None:
    today: dict[str, str] = {}
    exec(GENERATOR.render(), today)
    lists = decode(today["PRICE_LISTS"], type=dict[str, tuple[ListedModel, ...]])
    assert lists == price_lists(), "prices changed: run scripts/gen_price_table.py"
    assert GENERATOR.TARGET.read_text().startswith(
        GENERATOR.render()[:100]
    )  # the package's version in its title


@pytest.mark.parametrize(("provider", "model"), list(names()))
def test_every_model_costs_what_the_package_charges(provider: str, model: str) -> None:
    expected = [package_cost(model, provider, usage) for usage in USAGES]
    assert [listed_cost(model, provider, usage) for usage in USAGES] == expected


def test_a_model_is_found_under_the_names_the_package_knows_it_by() -> None:
    found = find_model(price_lists()["openai"], "GPT-5.2-20251211")
    assert found is not None and found.id.startswith("gpt-5.2")
    assert find_model(price_lists()["anthropic"], "llama3.1:8b") is None
