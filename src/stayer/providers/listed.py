"""The list prices of Anthropic's and OpenAI's models as `genai-prices` has them, in a small table
of our own (`price_table`, generated from the package by `scripts/gen_price_table.py`), and the
package's way of finding a model in it and pricing a call.

Importing the package costs about a second on a busy 2-core machine (pydantic, an HTTP client
for its updater, and 2,300 models of 47 providers built at import), all of it between a run's
last answer and its `result`, for the few rates one call needs. This table is the two providers
stayer prices with, read in about a millisecond. `tests/unit/core/test_price_table.py` checks
it is what the package says today and that every model is priced here exactly as the package
prices it, so the package stays the one place prices are updated.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import Literal, assert_never

from msgspec import Struct
from msgspec.json import decode

PER_MILLION = 1_000_000

ClauseKind = Literal["starts_with", "ends_with", "contains", "equals", "regex", "or", "and"]


class Clause(Struct, frozen=True, array_like=True):
    """How the package recognises a model's names: a test on the lower-cased name, or `parts`
    joined by `or` / `and`."""

    kind: ClauseKind
    text: str = ""
    parts: tuple[Clause, ...] = ()

    def matches(self, name: str) -> bool:
        """Whether `name` (lower case) is this clause's."""
        match self.kind:
            case "starts_with":
                return name.startswith(self.text)
            case "ends_with":
                return name.endswith(self.text)
            case "contains":
                return self.text in name
            case "equals":
                return name == self.text
            case "regex":
                return re.search(self.text, name) is not None
            case "or":
                return any(part.matches(name) for part in self.parts)
            case "and":
                return all(part.matches(name) for part in self.parts)
            case _:
                assert_never(self.kind)


class Rate(Struct, frozen=True, array_like=True):
    """USD per million tokens, and the long-prompt tiers: past `start` prompt tokens, every
    token of the call is billed at that tier's price (the highest tier passed)."""

    base: str
    tiers: tuple[tuple[int, str], ...] = ()

    def per_million(self, prompt_tokens: int) -> Decimal:
        """The rate for a call whose whole prompt is `prompt_tokens`."""
        for start, price in reversed(self.tiers):
            if prompt_tokens > start:
                return Decimal(price)
        return Decimal(self.base)


class ListedPrice(Struct, frozen=True, array_like=True):
    """One model's rates for each kind of token stayer counts (None: the package lists none),
    from the day `since` (ISO date; None: from the start)."""

    input: Rate | None
    output: Rate | None
    cache_read: Rate | None
    cache_write: Rate | None
    since: str | None = None

    def cost(self, input_tokens: int, output: int, reads: int, writes: int) -> Decimal:
        """USD for one call; `input_tokens` counts the whole prompt, cached or not. Tokens of a
        kind with no rate of its own are billed as uncached input, as the package bills them."""
        reads = reads if self.cache_read is not None else 0
        writes = writes if self.cache_write is not None else 0
        counts = (
            (self.input, input_tokens - reads - writes),
            (self.output, output),
            (self.cache_read, reads),
            (self.cache_write, writes),
        )
        total = Decimal(0)
        for rate, count in counts:
            if rate is not None:
                total += rate.per_million(input_tokens) * count / PER_MILLION
        return total


class ListedModel(Struct, frozen=True, array_like=True):
    """One model the package knows: its id, the names it goes by, and its prices over time
    (the last whose day has come applies; the first when none has)."""

    id: str
    names: Clause
    prices: tuple[ListedPrice, ...]

    def price_on(self, day: date) -> ListedPrice:
        """The prices that apply on `day` (UTC)."""
        for price in reversed(self.prices):
            if price.since is None or day >= date.fromisoformat(price.since):
                return price
        return self.prices[0]


_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


def _dashed_date(found: re.Match[str]) -> str:
    year, month, day = (int(found.group(index)) for index in range(2, 5))
    try:
        date(year, month, day)
    except ValueError:
        return found.group(0)
    return f"-{year:04d}-{month:02d}-{day:02d}"


def find_model(models: tuple[ListedModel, ...], model: str) -> ListedModel | None:
    """The first of `models` that `model` names, as the package finds it: as written, then
    with a compact date (`-20251211`, as gateways write it) in its dashed form."""
    name = model.lower()
    for candidate in dict.fromkeys((name, _COMPACT_DATE.sub(_dashed_date, name))):
        for listed in models:
            if listed.names.matches(candidate):
                return listed
    return None


@cache
def price_lists() -> dict[str, tuple[ListedModel, ...]]:
    """The generated table (`price_table`), decoded once: each provider's models in the
    package's order, the order it tries them in."""
    from stayer.providers.price_table import PRICE_LISTS

    return decode(PRICE_LISTS, type=dict[str, tuple[ListedModel, ...]])


@cache
def _listed_model(provider: str, model: str) -> ListedModel | None:
    return find_model(price_lists().get(provider, ()), model)


def listed_price(provider: str, model: str) -> ListedPrice | None:
    """Today's prices of `model` in `provider`'s list; None when the list does not have it."""
    found = _listed_model(provider, model)
    return None if found is None else found.price_on(datetime.now(tz=UTC).date())
