"""The end of a batch: a table for a person, or one JSON object on standard output for a
program, both counting every task of the results file (an earlier run's too)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from stayer.batch.results import facts_of_result
from stayer.messages import Usage
from stayer.ui.batch_facts import facts_of
from stayer.ui.batch_summary import print_summary, summary_table
from tests.ui.batch_results import result

RESULTS = Path("/runs/eval-7/results.jsonl")

USAGE = Usage(input_tokens=1000, output_tokens=200, cache_read_input_tokens=4000)

BATCH = [
    result("done-earlier", check=True, cost=0.5, usage=USAGE),
    result("passes", check=True, cost=0.25, usage=USAGE),
    result("fails-check", check=False, cost=0.25, usage=USAGE),
    result("out-of-turns", "max_turns", check=True, cost=1.0, usage=USAGE),
    result("no-model", error=("model", "connection refused"), cost=0, usage=Usage()),
    result("no-clone", error=("workspace", "clone failed"), cost=0, usage=Usage()),
    result("no-clone-2", error=("workspace", "clone failed"), cost=0, usage=Usage()),
]
"""Seven results, one from an earlier run; four checks, three of which passed (one of them
on a run out of turns, which still failed the task); three infrastructure errors: five
failed."""


FACTS = facts_of(
    map(facts_of_result, BATCH),
    earlier={"done-earlier"},
    wall_s=120.0,
    results_file=RESULTS,
    planned=8,
)


def table_lines(width: int = 100) -> list[str]:
    console = Console(record=True, force_terminal=True, width=width, file=io.StringIO())
    console.print(summary_table(FACTS))
    return [line.rstrip() for line in console.export_text().splitlines() if line.strip()]


def test_the_table_counts_reasons_checks_errors_cost_and_pace() -> None:
    assert table_lines() == [
        "Batch summary",
        "  Tasks                   7 (1 from an earlier run); 1 without a result",
        "  Failed                  5",
        "  Ended",
        "    completed             3",
        "    error                 3",
        "    max_turns             1",
        "  Checks passed           3 of 4 (75%)",
        "  Infrastructure errors   workspace 2 · model 1",
        "  Cost                    $2.00",
        "  Tokens                  20,800 (20,000 in, 16,000 of them cached; 800 out)",
        "  Wall time               2m 00s",
        "  Rate                    3.0 tasks/min",
        "  Results                 /runs/eval-7/results.jsonl",
    ]


def test_json_is_one_object_on_standard_output_with_the_same_facts() -> None:
    out = io.StringIO()
    print_summary(FACTS, "json", stdout=out)
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert json.loads(text) == {
        "type": "batch_summary",
        "planned": 8,
        "tasks": 7,
        "earlier": 1,
        "ran": 6,
        "missing": 1,
        "failed": 5,
        "by_terminal_reason": {"error": 3, "completed": 3, "max_turns": 1},
        "checks": {"run": 4, "passed": 3, "pass_rate": 0.75},
        "infrastructure_errors": {"workspace": 2, "model": 1},
        "cost_usd": 2.0,
        "usage": {
            "input_tokens": 4000,
            "output_tokens": 800,
            "cache_read_input_tokens": 16000,
            "cache_creation_input_tokens": 0,
        },
        "total_tokens": 20800,
        "wall_s": 120.0,
        "tasks_per_minute": 3.0,
        "results_file": str(RESULTS),
    }


def test_a_batch_without_checks_or_time_says_so_rather_than_dividing_by_zero() -> None:
    quick = facts_of(
        [facts_of_result(result("a")), facts_of_result(result("b"))],
        earlier={"a", "b"},
        wall_s=0.0,
        results_file=RESULTS,
    )
    out = io.StringIO()
    print_summary(quick, "json", stdout=out)
    shown = json.loads(out.getvalue())
    assert shown["checks"] == {"run": 0, "passed": 0, "pass_rate": None}
    assert (shown["ran"], shown["tasks_per_minute"], shown["planned"]) == (0, None, None)
    text = io.StringIO()
    print_summary(quick, "text", stdout=text)
    lines = [line.strip() for line in text.getvalue().splitlines()]
    assert "Checks passed           no task had a check" in lines
    assert "Rate                    –" in lines
    assert "Tasks                   2 (2 from an earlier run)" in lines
