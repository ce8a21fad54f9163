"""Compaction of a 150k-token history: the pure functions on it, and a whole autocompaction.

    .venv/bin/python -m benchmarks.compaction [--tokens 150000] [--repeats 30] [--runs 10]
                                              [--json PATH]

The history is made once per invocation by stayer's own loop and tools over this repository
(`benchmarks.history`): about 70 tool rounds of Read, Grep and Bash results, ending with tool
results, as a long tool loop stands when it reaches the compaction point. Then:

* the functions of `stayer.context.compact` on it, `--repeats` times each, round-robin (so a
  burst of load hits them alike), with what each produced: `estimate_tokens` (what the loop's
  context estimate costs when nothing was counted yet), `clear_old_tool_results` (the first
  answer to a too-long prompt), `summary_request` (the summariser's transcript) and
  `compacted` (the new history from the summary), with the loop's budgets for the window;
* `--runs` whole autocompactions inside the loop: `stayer.loop.run.query` on the history
  against an instant model (`benchmarks.instant`), whose summariser answers at once with notes
  of about 1.5k tokens. The context window is set to the history's size plus the output
  reserve and the buffer (so the threshold is the target, and a 150k history is past it; the
  default 200k window would put it at 167k). The loop summarises before its first call, then
  calls the model with the new history, which answers. The harness's part is the time from
  the start of the run to that call, less the summariser's own streaming; it is split into
  before the summariser's request (the estimate and the transcript) and after its answer (the
  new history and the next request). Tokens before and after are the `Compacted` event's.

Every run is checked: one `Compacted` (auto, summary), two model calls (the summariser's first),
the next request starting from the summary, and a `completed` end. Medians and nearest-rank
p95, as everywhere in `benchmarks`; each sample starts after a `gc.collect()`.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from benchmarks.history import build_history, describe, notes_for
from benchmarks.instant import BenchmarkError, ClockedModel, drive, loop_params
from benchmarks.runner import Benchmark, Column, option, progress, table_lines
from benchmarks.stats import Summary, summarize
from stayer.context.compact import (
    SUMMARY_INTRO,
    clear_old_tool_results,
    compacted,
    estimate_tokens,
    summary_request,
)
from stayer.events import Compacted, Terminal
from stayer.loop.compaction import (
    AUTOCOMPACT_BUFFER,
    KEEP_RECENT_SHARE,
    OUTPUT_RESERVE_CAP,
    SUMMARY_MAX_TOKENS,
    threshold,
)
from stayer.loop.state import LoopParams
from stayer.messages import JSON, Message, TextBlock, Usage, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, text

MS = 1e3
FINAL_TEXT = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    tokens: int = option(
        150_000, "history size", at_least=10_000, why="a shorter history is not worth compacting"
    )
    repeats: int = option(30, "calls per function", at_least=1)
    runs: int = option(10, "autocompactions", at_least=1)


def window_for(params: LoopParams, tokens: int) -> int:
    """The context window whose autocompaction threshold is `tokens` for these parameters."""
    return tokens + min(params.max_tokens, OUTPUT_RESERVE_CAP) + AUTOCOMPACT_BUFFER


# --- the functions on the history --------------------------------------------------------------


@dataclass
class FunctionSamples:
    """Seconds per call of each function, and what one call produced."""

    seconds: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    results: dict[str, dict[str, JSON]] = field(default_factory=dict[str, dict[str, JSON]])


def time_functions(
    history: tuple[Message, ...], window: int, notes: str, repeats: int
) -> FunctionSamples:
    """Each function `repeats` times, round-robin, on `history` with the loop's budgets."""
    budget = window - SUMMARY_MAX_TOKENS - AUTOCOMPACT_BUFFER
    keep = window // KEEP_RECENT_SHARE
    cases: dict[str, Callable[[], object]] = {
        "estimate_tokens": lambda: estimate_tokens(history),
        "clear_old_tool_results": lambda: clear_old_tool_results(history),
        "summary_request": lambda: summary_request(history, budget_tokens=budget),
        "compacted": lambda: compacted(history, notes, keep_recent_tokens=keep),
    }
    samples = FunctionSamples({name: [] for name in cases})
    for _ in range(repeats):
        for name, call in cases.items():
            gc.collect()
            began = time.perf_counter()
            call()
            samples.seconds[name].append(time.perf_counter() - began)
    cleared, count = clear_old_tool_results(history)
    request = summary_request(history, budget_tokens=budget)
    new = compacted(history, notes, keep_recent_tokens=keep)
    samples.results = {
        "estimate_tokens": {"tokens": estimate_tokens(history)},
        "clear_old_tool_results": {"cleared": count, "tokens_after": estimate_tokens(cleared)},
        "summary_request": {
            "chars": _chars(request.messages),
            "tokens": estimate_tokens(request.messages),
            "left_out": request.left_out,
        },
        "compacted": {"messages": len(new), "tokens_after": estimate_tokens(new)},
    }
    return samples


def _chars(messages: Sequence[Message]) -> int:
    return sum(
        len(block.text) for m in messages for block in m.content if isinstance(block, TextBlock)
    )


# --- whole autocompactions in the loop ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoopCompaction:
    """One autocompaction inside the loop: seconds, and the sizes involved."""

    harness_s: float
    before_summariser_s: float
    after_summary_s: float
    summariser_stream_s: float
    tokens_before: int
    tokens_after: int
    summariser_request_chars: int
    summariser_request_tokens: int
    next_request_messages: int


def _summariser(notes: str) -> Callable[[ModelRequest], Reply]:
    def respond(request: ModelRequest) -> Reply:
        if request.purpose != "compact":
            return text(FINAL_TEXT)
        counted = estimate_tokens(request.messages)
        usage = Usage(input_tokens=counted, output_tokens=len(notes) // 4)
        return Reply((TextBlock(notes),), usage=usage)

    return respond


def _check(model: ClockedModel, compactions: list[Compacted], terminal: Terminal) -> None:
    problems = []
    if [(c.trigger, c.method) for c in compactions] != [("auto", "summary")]:
        problems.append(f"compactions {compactions}, expected one auto summary")
    if [clock.request.purpose for clock in model.clocks] != ["compact", "main"]:
        problems.append(f"calls {[c.request.purpose for c in model.clocks]}")
    else:
        first = model.clocks[1].request.messages[0]
        head = first.content[0] if isinstance(first, UserMessage) and first.content else None
        if not (isinstance(head, TextBlock) and head.text.startswith(SUMMARY_INTRO)):
            problems.append("the request after the summary does not start from it")
    if terminal is not Terminal.COMPLETED:
        problems.append(f"ended {terminal.value}")
    if problems:
        raise BenchmarkError("autocompaction run: " + "; ".join(problems))


async def one_compaction(
    history: tuple[Message, ...], notes: str, workdir: Path, tokens: int
) -> LoopCompaction:
    """Run the loop on `history` with the threshold at `tokens`: it compacts, then answers."""
    model = ClockedModel(_summariser(notes), 2)
    params = loop_params(model, workdir, workdir / "home")
    params = replace(params, context_window=window_for(params, tokens))
    if threshold(params) > estimate_tokens(history):
        raise BenchmarkError("the history is under the threshold: nothing would compact")
    gc.collect()
    began = time.perf_counter()
    events, finished = await drive(params, history)
    compactions = [event for event in events if isinstance(event, Compacted)]
    _check(model, compactions, finished.terminal)
    summariser, after = model.clocks
    return LoopCompaction(
        harness_s=after.arrived - began - summariser.model_s,
        before_summariser_s=summariser.arrived - began,
        after_summary_s=after.arrived - summariser.ended,
        summariser_stream_s=summariser.model_s,
        tokens_before=compactions[0].tokens_before,
        tokens_after=compactions[0].tokens_after,
        summariser_request_chars=_chars(summariser.request.messages),
        summariser_request_tokens=estimate_tokens(summariser.request.messages),
        next_request_messages=len(after.request.messages),
    )


@dataclass
class Samples:
    """Everything measured: the history's size, the functions, the loop's compactions."""

    history: dict[str, JSON]
    window: int
    functions: FunctionSamples
    loop: list[LoopCompaction]


async def collect(config: Config, workdir: Path) -> Samples:
    """Build the history, time the functions, then run the autocompactions."""
    (workdir / "home").mkdir(exist_ok=True)
    progress(f"building a {config.tokens:,}-token history with stayer's loop and tools")
    history = await build_history(config.tokens, workdir / "home")
    facts = describe(history)
    progress(f"  {facts}")
    notes = notes_for(history)
    probe = loop_params(ClockedModel(_summariser(notes), 0), workdir, workdir / "home")
    window = window_for(probe, config.tokens)
    progress(f"the functions, {config.repeats} times each")
    functions = time_functions(history, window, notes, config.repeats)
    loop: list[LoopCompaction] = []
    for index in range(config.runs):
        run = await one_compaction(history, notes, workdir, config.tokens)
        loop.append(run)
        progress(
            f"  autocompaction {index + 1}/{config.runs}: harness {run.harness_s * MS:.1f} ms, "
            f"{run.tokens_before:,} → {run.tokens_after:,} tokens"
        )
    return Samples(facts, window, functions, loop)


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: a time in ms and what it produced."""

    metric: str
    ms: Summary
    result: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"metric": self.metric, "ms": self.ms.as_dict(), "result": self.result}


def rows(samples: Samples) -> list[Row]:
    """The functions, then the loop's autocompaction and its parts."""
    seconds, results = samples.functions.seconds, samples.functions.results
    clear, request = results["clear_old_tool_results"], results["summary_request"]
    said = {
        "estimate_tokens": f"{results['estimate_tokens']['tokens']:,} tokens",
        "clear_old_tool_results": f"{clear['cleared']} results cleared → "
        f"{clear['tokens_after']:,} tokens",
        "summary_request": f"{request['tokens']:,} tokens ({request['chars']:,} chars), "
        f"{request['left_out']} messages left out",
        "compacted": f"{results['compacted']['messages']} messages, "
        f"{results['compacted']['tokens_after']:,} tokens",
    }
    table = [Row(name, summarize([s * MS for s in seconds[name]]), said[name]) for name in said]
    loop = samples.loop

    def ms(take: Callable[[LoopCompaction], float]) -> Summary:
        return summarize([take(run) * MS for run in loop])

    first = loop[0]
    table += [
        Row(
            "autocompaction in the loop, harness's part",
            ms(lambda r: r.harness_s),
            f"{first.tokens_before:,} → {first.tokens_after:,} tokens (Compacted)",
        ),
        Row(
            "  start → summariser's request",
            ms(lambda r: r.before_summariser_s),
            f"request {first.summariser_request_tokens:,} tokens "
            f"({first.summariser_request_chars:,} chars)",
        ),
        Row(
            "  summary's end → next request",
            ms(lambda r: r.after_summary_s),
            f"next request: {first.next_request_messages} messages",
        ),
        Row("  (the instant summariser streaming)", ms(lambda r: r.summariser_stream_s), "-"),
    ]
    return table


COLUMNS = (
    Column("step", 44, "<", gap=""),
    Column("median", 8),
    Column("p95", 8),
    Column("result", 0, "<", gap="  "),
)


def render(table: Sequence[Row], samples: Samples, config: Config) -> str:
    """The rows as a fixed-width table, with the history described above it."""
    facts = samples.history
    calls = ", ".join(f"{n} {name}" for name, n in dict(facts["tool_calls"]).items())
    title = (
        f"compaction of a {facts['estimated_tokens']:,}-token history ({facts['messages']} "
        f"messages; {calls}; {facts['tool_result_chars']:,} chars of tool output); window "
        f"{samples.window:,}; {config.repeats} calls per function, {config.runs} autocompactions"
    )
    cells = [[row.metric, f"{row.ms.median:.2f}", f"{row.ms.p95:.2f}", row.result] for row in table]
    lines = [title, *table_lines(COLUMNS, cells, ruler=100)]
    lines.append("milliseconds: medians and nearest-rank p95; tokens are stayer's estimates")
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "history": samples.history,
        "window": samples.window,
        "summary": [row.as_dict() for row in rows(samples)],
        "samples": {
            "functions_s": samples.functions.seconds,
            "function_results": samples.functions.results,
            "loop": [asdict(run) for run in samples.loop],
        },
    }


def report(samples: Samples, config: Config) -> str:
    """The table."""
    return render(rows(samples), samples, config)


BENCHMARK = Benchmark(
    prog="python -m benchmarks.compaction",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-compaction-",
    collect=collect,
    report=report,
    as_json=as_json,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
