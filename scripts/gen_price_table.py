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

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "stayer" / "providers" / "price_table.py"
PROVIDERS = ("anthropic", "openai")
"""The lists `stayer.providers.profiles` prices with."""

HEADER = '''"""Anthropic's and OpenAI's list prices, genai-prices {version}: generated, do not edit.

Made by scripts/gen_price_table.py, so a cost is worked out without importing the package (see
`stayer.providers.listed`). tests/unit/core/test_price_table.py checks it.
"""

from stayer.providers.listed import Clause, ListedModel, ListedPrice, Rate

PRICE_TABLE: dict[str, tuple[ListedModel, ...]] = {{
'''

_LEAVES = {
    "ClauseStartsWith": ("starts_with", "starts_with"),
    "ClauseEndsWith": ("ends_with", "ends_with"),
    "ClauseContains": ("contains", "contains"),
    "ClauseEquals": ("equals", "equals"),
}


def clause(rule: Any) -> str:
    """The rule as a `Clause(...)` expression."""
    kind = type(rule).__name__
    if kind in _LEAVES:
        name, attribute = _LEAVES[kind]
        return f"Clause({name!r}, {getattr(rule, attribute).lower()!r})"
    if kind == "ClauseRegex":
        return f"Clause('regex', {rule.regex!r})"
    if kind in ("ClauseOr", "ClauseAnd"):
        parts = rule.or_ if kind == "ClauseOr" else rule.and_
        joined = "".join(clause(part) + ", " for part in parts)
        return f"Clause({kind[6:].lower()!r}, parts=({joined}))"
    raise SystemExit(f"gen_price_table: a name rule the table cannot hold: {rule!r}")


def rate(value: Any) -> str:
    """A price (a Decimal, or tiered) as a `Rate(...)` expression, or None."""
    if value is None:
        return "None"
    if isinstance(value, Decimal):
        return f"Rate({str(value)!r})"
    tiers = "".join(f"({tier.start}, {str(tier.price)!r}), " for tier in value.tiers)
    return f"Rate({str(value.base)!r}, ({tiers}))"


def price(prices: Any, since: Any) -> str:
    """One ModelPrice as a `ListedPrice(...)` expression."""
    rates = (prices.input_mtok, prices.output_mtok, prices.cache_read_mtok, prices.cache_write_mtok)
    day = None if since is None else since.start_date.isoformat()
    return f"ListedPrice({', '.join(rate(value) for value in rates)}, {day!r})"


def prices_of(model: Any) -> str:
    """A model's prices over time as a tuple of `ListedPrice(...)` expressions."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(model.prices, ModelPrice):
        return f"({price(model.prices, None)},)"
    parts = []
    for conditional in model.prices:
        constraint = conditional.constraint
        if constraint is not None and not isinstance(constraint, StartDateConstraint):
            raise SystemExit(f"gen_price_table: {model.id} has a price the table cannot hold")
        parts.append(price(conditional.prices, constraint) + ", ")
    return f"({''.join(parts)})"


def render() -> str:
    """The module's text."""
    from importlib.metadata import version

    from genai_prices.data import providers

    parts = [HEADER.format(version=version("genai-prices"))]
    for provider in providers:
        if provider.id not in PROVIDERS:
            continue
        if provider.fallback_model_providers:
            raise SystemExit(f"gen_price_table: {provider.id} now falls back to other lists")
        parts.append(f"    {provider.id!r}: (\n")
        for model in provider.models:
            parts.append(
                f"        ListedModel({model.id!r}, {clause(model.match)}, {prices_of(model)}),\n"
            )
        parts.append("    ),\n")
    parts.append("}\n")
    return "".join(parts)


if __name__ == "__main__":
    TARGET.write_text(render())
    subprocess.run([str(ROOT / ".venv" / "bin" / "ruff"), "format", "-q", str(TARGET)], check=True)
    print(f"wrote {TARGET.relative_to(ROOT)}", file=sys.stderr)
