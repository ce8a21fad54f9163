"""Write src/stayer/providers/price_table.py from the `genai-prices` package's data.

Run after updating the package (its pin in pyproject.toml):
    .venv/bin/python scripts/gen_price_table.py
A test fails while the file is out of date, and generating fails loudly when the package
starts using a kind of price or name rule the table cannot hold.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from msgspec.json import encode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from stayer.providers.listed import Clause, ClauseKind, ListedModel, ListedPrice, Rate  # noqa: E402

TARGET = ROOT / "src" / "stayer" / "providers" / "price_table.py"
PROVIDERS = ("anthropic", "openai")
"""The lists `stayer.providers.profiles` prices with."""

HEADER = '''"""Anthropic's and OpenAI's list prices, genai-prices {version}: generated, do not edit.

Made by scripts/gen_price_table.py, so a cost is worked out without importing the package;
`stayer.providers.listed` decodes it. tests/unit/core/test_price_table.py checks it. One model a
line, as JSON: decoding it takes a fraction of a millisecond, where Python code building the same
records takes far longer to compile when there is no bytecode cache.
"""

PRICE_LISTS = r"""{{
'''

FOOTER = '''}"""
'''

_LEAVES: dict[str, ClauseKind] = {
    "ClauseStartsWith": "starts_with",
    "ClauseEndsWith": "ends_with",
    "ClauseContains": "contains",
    "ClauseEquals": "equals",
}


def clause(rule: Any) -> Clause:
    """The package's name rule as a `Clause`."""
    kind = type(rule).__name__
    if kind in _LEAVES:
        return Clause(_LEAVES[kind], getattr(rule, _LEAVES[kind]).lower())
    if kind == "ClauseRegex":
        return Clause("regex", rule.regex)
    if kind in ("ClauseOr", "ClauseAnd"):
        parts = rule.or_ if kind == "ClauseOr" else rule.and_
        return Clause("or" if kind == "ClauseOr" else "and", parts=tuple(map(clause, parts)))
    raise SystemExit(f"gen_price_table: a name rule the table cannot hold: {rule!r}")


def rate(value: Any) -> Rate | None:
    """A price (a Decimal, or tiered) as a `Rate`."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return Rate(str(value))
    return Rate(str(value.base), tuple((tier.start, str(tier.price)) for tier in value.tiers))


def price(prices: Any, since: Any) -> ListedPrice:
    """One ModelPrice as a `ListedPrice`."""
    rates = (prices.input_mtok, prices.output_mtok, prices.cache_read_mtok, prices.cache_write_mtok)
    day = None if since is None else since.start_date.isoformat()
    return ListedPrice(*map(rate, rates), since=day)


def prices_of(model: Any) -> tuple[ListedPrice, ...]:
    """A model's prices over time."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(model.prices, ModelPrice):
        return (price(model.prices, None),)
    for conditional in model.prices:
        constraint = conditional.constraint
        if constraint is not None and not isinstance(constraint, StartDateConstraint):
            raise SystemExit(f"gen_price_table: {model.id} has a price the table cannot hold")
    return tuple(price(conditional.prices, conditional.constraint) for conditional in model.prices)


def render() -> str:
    """The module's text."""
    from importlib.metadata import version

    from genai_prices.data import providers

    lists = []
    for provider in providers:
        if provider.id not in PROVIDERS:
            continue
        if provider.fallback_model_providers:
            raise SystemExit(f"gen_price_table: {provider.id} now falls back to other lists")
        models = (
            ListedModel(model.id, clause(model.match), prices_of(model))
            for model in provider.models
        )
        lines = ",\n".join(encode(model).decode() for model in models)
        lists.append(f'"{provider.id}": [\n{lines}\n]')
    table = ",\n".join(lists)
    if '"""' in table or not table.isascii():
        raise SystemExit("gen_price_table: the table does not fit in the module's string")
    return HEADER.format(version=version("genai-prices")) + table + "\n" + FOOTER


if __name__ == "__main__":
    TARGET.write_text(render())
    subprocess.run([str(ROOT / ".venv" / "bin" / "ruff"), "format", "-q", str(TARGET)], check=True)
    print(f"wrote {TARGET.relative_to(ROOT)}", file=sys.stderr)
