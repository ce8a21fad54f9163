"""Token budgets typed in a prompt or given as a flag, and when they keep the model going."""

from __future__ import annotations

import pytest

from stayer.loop.budget import BudgetProgress, budget_in_prompt, parse_amount


@pytest.mark.parametrize(
    ("prompt", "budget"),
    [
        ("+500k refactor the parser", 500_000),
        ("refactor the parser +1.5m", 1_500_000),
        ("  +2M  ", 2_000_000),
        ("please use 2M tokens on this", 2_000_000),
        ("Spend 300k tokens making it fast", 300_000),
        ("+20000 go", 20_000),
        ("the +500k in the middle is not a budget", None),
        ("a+500k", None),
        ("add 1+500k", None),
        ("version +1.5.2", None),
        ("fix it", None),
    ],
)
def test_budgets_in_prompts(prompt: str, budget: int | None) -> None:
    assert budget_in_prompt(prompt) == budget


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("500k", 500_000), ("2m", 2_000_000), ("1.5M", 1_500_000), ("20000", 20_000), ("+3k", 3000)],
)
def test_flag_amounts(text: str, tokens: int) -> None:
    assert parse_amount(text) == tokens


@pytest.mark.parametrize("text", ["lots", "0", "-5k", "5 kilos", ""])
def test_what_is_not_an_amount(text: str) -> None:
    assert parse_amount(text) is None


def test_the_model_is_continued_below_ninety_percent_until_it_stops_adding_much() -> None:
    assert BudgetProgress(10_000, 8_999, 0, ()).should_continue()
    assert not BudgetProgress(10_000, 9_000, 0, ()).should_continue()
    # Three continuations, the last two adding little: diminishing returns.
    assert not BudgetProgress(10_000, 2_000, 3, (1_000, 400, 300)).should_continue()
    assert BudgetProgress(10_000, 2_000, 3, (400, 300, 1_000)).should_continue()
    assert BudgetProgress(10_000, 2_000, 2, (400, 300)).should_continue()
    assert BudgetProgress(10_000, 2_500, 0, ()).nudge() == (
        "[You stopped at 25% of the token budget (2,500 of 10,000 output tokens). The budget is "
        "a floor, not a ceiling: keep working on the task, and do not summarise yet.]"
    )
