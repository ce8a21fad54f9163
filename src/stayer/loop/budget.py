"""Token budgets (SPEC §3.4, §5.2): "+500k" in a prompt, or `--token-budget`, is a floor.

When the model stops before the run has produced 90% of the budget's output tokens, it is told
to keep working (`token_budget_continuation`). Nudging stops on diminishing returns: after
three continuations, two in a row that each added fewer than 500 tokens mean the model has
nothing more to give, and the run completes.
"""

from __future__ import annotations

import re

from msgspec import Struct

NUDGE_BELOW = 0.9
"""The share of the budget under which a stop is continued."""
DIMINISHING_AFTER = 3
DIMINISHING_DELTA = 500

_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_AMOUNT = r"(\d+(?:\.\d+)?)\s*([kmb]?)"
_AT_START = re.compile(rf"^\s*\+{_AMOUNT}(?![\w.])", re.IGNORECASE)
_AT_END = re.compile(rf"(?<![\w+])\+{_AMOUNT}\s*$", re.IGNORECASE)
_IN_WORDS = re.compile(rf"\b(?:use|spend)\s+{_AMOUNT}\s+tokens\b", re.IGNORECASE)


def parse_amount(text: str) -> int | None:
    """`500k`, `1.5m`, `20000` as a number of tokens; None if `text` is not one."""
    match = re.fullmatch(rf"\s*\+?{_AMOUNT}\s*", text, re.IGNORECASE)
    return _tokens(match.group(1), match.group(2)) if match else None


def budget_in_prompt(prompt: str) -> int | None:
    """A budget typed in the prompt: `+500k` at its very start or end, or "use 2M tokens"."""
    for pattern in (_AT_START, _AT_END, _IN_WORDS):
        match = pattern.search(prompt)
        if match:
            return _tokens(match.group(1), match.group(2))
    return None


def _tokens(number: str, suffix: str) -> int | None:
    tokens = int(float(number) * _SUFFIX[suffix.lower()])
    return tokens if tokens > 0 else None


class BudgetProgress(Struct, frozen=True):
    """How a run stands against its budget at a natural stop."""

    budget: int
    used: int
    continuations: int
    deltas: tuple[int, ...]
    """Output tokens added by each continuation so far, oldest first."""

    def should_continue(self) -> bool:
        """Below the floor and still making headway."""
        if self.used >= NUDGE_BELOW * self.budget:
            return False
        recent = self.deltas[-2:]
        stalled = len(recent) == 2 and all(delta < DIMINISHING_DELTA for delta in recent)
        return not (self.continuations >= DIMINISHING_AFTER and stalled)

    def nudge(self) -> str:
        """What the model is told, in our words."""
        share = round(100 * self.used / self.budget)
        return (
            f"[You stopped at {share}% of the token budget ({self.used:,} of {self.budget:,} "
            "output tokens). The budget is a floor, not a ceiling: keep working on the task, "
            "and do not summarise yet.]"
        )
