"""The end of a batch on standard output: a table for a person (`--output-format text`), or
one JSON object for a program (`--output-format json`) and nothing else, both made of the
same `BatchFacts`."""

from __future__ import annotations

import sys
from typing import Literal, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from stayer import json_text

from .batch_facts import BatchFacts, cost_text, duration_text, facts_json
from .live_output import safe

SummaryFormat = Literal["text", "json"]


def print_summary(
    facts: BatchFacts, output_format: SummaryFormat, *, stdout: TextIO | None = None
) -> None:
    """Print the summary of `facts` in `output_format` to `stdout` (standard output's)."""
    out = stdout if stdout is not None else sys.stdout
    if output_format == "json":
        out.write(summary_json(facts) + "\n")
        out.flush()
        return
    Console(file=out, highlight=False).print(summary_table(facts))


def summary_json(facts: BatchFacts) -> str:
    """The one-line JSON object of `--output-format json`."""
    return json_text.dumps(facts_json(facts))


def summary_table(facts: BatchFacts) -> Table:
    """The table a person reads when the batch is over."""
    table = Table(title="Batch summary", box=box.SIMPLE, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("Tasks", _tasks_cell(facts))
    table.add_row("Failed", Text(str(facts.failed), style="red" if facts.failed else "green"))
    table.add_row("Ended", "")
    for reason, count in facts.by_terminal_reason.items():
        table.add_row(Text(f"  {safe(reason)}", style="none"), str(count))
    table.add_row("Checks passed", _checks_cell(facts))
    table.add_row("Infrastructure errors", _errors_cell(facts))
    table.add_row("Cost", cost_text(facts.cost_usd))
    table.add_row("Tokens", _tokens_cell(facts))
    table.add_row("Wall time", duration_text(facts.wall_s))
    rate = facts.tasks_per_minute
    table.add_row("Rate", f"{rate:.1f} tasks/min" if rate is not None else "–")
    table.add_row("Results", Text(str(facts.results_file), overflow="fold"))
    return table


def _tasks_cell(facts: BatchFacts) -> str:
    said = f"{facts.tasks}"
    if facts.earlier:
        said += f" ({facts.earlier} from an earlier run)"
    if facts.missing:
        said += f"; {facts.missing} without a result"
    return said


def _checks_cell(facts: BatchFacts) -> str:
    checks = facts.checks
    if checks.pass_rate is None:
        return "no task had a check"
    return f"{checks.passed} of {checks.run} ({checks.pass_rate:.0%})"


def _errors_cell(facts: BatchFacts) -> str:
    if not facts.infrastructure_errors:
        return "none"
    return " · ".join(f"{stage} {count}" for stage, count in facts.infrastructure_errors.items())


def _tokens_cell(facts: BatchFacts) -> str:
    usage = facts.usage
    return (
        f"{facts.total_tokens:,} ({usage.total_input_tokens:,} in, "
        f"{usage.cache_read_input_tokens:,} of them cached; {usage.output_tokens:,} out)"
    )
