"""What the recovery machinery costs on a fault-free run: the real loop, with and without it.

    .venv/bin/python -m benchmarks.recovery [--runs 20] [--turns 100] [--warmup 2]
                                            [--tool read|bash] [--json PATH]

stayer always walks its recovery tree (`loop/recovery.py` after each response and tool round,
`loop/compaction.py`'s context estimate and blocking check before each call, the budget
checks), even when nothing goes wrong. The question is whether that moves the per-turn figure of
`benchmarks.run` (end of a response to the next request, a few milliseconds). That benchmark
runs the CLI as a subprocess against an HTTP server, with a `bash` child per turn; on a shared
2-core machine its medians move from one invocation to the next by far more than a few pure
functions can cost, so an A/B through it would measure the noise. This one drives
`stayer.loop.run.query` in this process against an instant model (`benchmarks.instant`), with
the `LoopParams` a CLI run gets, and compares two arms (`benchmarks.decisions` swaps them in):

* `stayer`: the loop as it is;
* `bare`: the same loop with each decision of the recovery tree replaced, in this process only,
  by the one a loop without recovery makes: after a response, run the tools or complete; after
  a tool round, go on (end only when interrupted); no failure signature or repeat count, no
  budget check, no context estimate, no blocking check. Streaming, tool execution, events and
  the state's replacement are untouched, so the arms differ by exactly those decisions.

The figure per turn is the harness's time between two model calls, less the model's own
(`benchmarks.instant`), and, as a cross-check, the in-process "reply end → next request".
Each tool call is a Read of a 60-line file (`--tool read`: no process is started, so the turn
is short and steady) or `bash -c true` as in `benchmarks.run` (`--tool bash`: process start-up
then dominates the turn and its noise). Runs alternate in pairs, in alternating order (stayer
first, then bare first) so drift and bursts of load hit both arms alike; every run has a fresh
set-up and starts after a `gc.collect()`; warm-up pairs are discarded. Reported: medians and
nearest-rank p95 of every turn pooled per arm, the difference of the medians, and the median of
the per-pair differences of run medians (robust to the load changing from pair to pair).

A third set of runs, `timed`, wraps each real decision in a pair of `perf_counter` calls: the
time spent inside the recovery tree per turn, measured directly (an upper bound, as it includes
the wrappers). It also proves the patching reaches the loop: every wrapped decision must be
called as often as a fault-free run calls it, or the run is refused.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.decisions import DECISIONS, Stopwatch, bare_loop, check_reached
from benchmarks.instant import PROMPT, BenchmarkError, ClockedModel, drive, loop_params
from benchmarks.runner import Benchmark, Column, option, progress, rounds, table_lines
from benchmarks.stats import Summary, summarize
from stayer.events import Continue, Continuing, Event, Finished, Terminal, ToolCallFinished
from stayer.messages import ToolUseBlock, Usage, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, text

US = 1e6
FINAL_TEXT = "done"
Arm = Literal["stayer", "bare"]
ARMS: tuple[Arm, ...] = ("stayer", "bare")
ToolChoice = Literal["read", "bash"]


@dataclass(frozen=True, slots=True)
class LoopRun:
    """One run of N tool turns: per-turn samples in seconds, and the whole run."""

    harness_s: tuple[float, ...]
    after_reply_s: tuple[float, ...]
    total_s: float


@dataclass(frozen=True, slots=True)
class TimedRun:
    """One run of the `timed` set: seconds inside each decision and the calls to it."""

    spent_s: dict[str, float]
    calls: dict[str, int]
    turns: int

    @property
    def per_turn_s(self) -> float:
        """Seconds inside the recovery tree per tool turn."""
        return sum(self.spent_s.values()) / self.turns


SAMPLE_FILE = "".join(f"def f{n}(x: int) -> int:\n    return x + {n}\n\n" for n in range(20))
"""What `--tool read` reads each turn: 60 short lines."""


def _responder(turns: int, tool: ToolChoice, path: Path) -> Callable[[ModelRequest], Reply]:
    """Tool call k for requests 0..turns-1 (k = how many requests came before), then the answer."""
    served = 0

    def respond(request: ModelRequest) -> Reply:
        nonlocal served
        index, served = served, served + 1
        if index >= turns:
            return text(FINAL_TEXT)
        name, tool_input = (
            ("Read", {"file_path": str(path)}) if tool == "read" else ("Bash", {"command": "true"})
        )
        call = ToolUseBlock(f"toolu_bench_{index:05d}", name, tool_input)
        return Reply((call,), usage=Usage(input_tokens=4_000 + 60 * index, output_tokens=40))

    return respond


def _check(events: Sequence[Event], finished: Finished, model: ClockedModel, turns: int) -> None:
    problems: list[str] = []
    if finished.terminal is not Terminal.COMPLETED or finished.result_text != FINAL_TEXT:
        problems.append(f"ended {finished.terminal.value}: {finished.message[:200]}")
    tools = [e for e in events if isinstance(e, ToolCallFinished)]
    if len(tools) != turns or any(e.status != "completed" for e in tools):
        failed = [e.result.text[:200] for e in tools if e.status != "completed"]
        problems.append(f"{len(tools)} tool calls, expected {turns}; failures: {failed[:1]}")
    reasons = {e.reason for e in events if isinstance(e, Continuing)}
    if reasons - {Continue.NEXT_TURN}:
        problems.append(f"recoveries in a fault-free run: {sorted(r.value for r in reasons)}")
    if len(model.clocks) != turns + 1:
        problems.append(f"{len(model.clocks)} model calls, expected {turns + 1}")
    if problems:
        raise BenchmarkError("; ".join(problems))
    model.assert_done()


async def one_run(turns: int, tool: ToolChoice, workdir: Path) -> LoopRun:
    """Run the loop for `turns` tool turns and an answer; the clocks turned into samples."""
    model = ClockedModel(_responder(turns, tool, workdir / "sample.py"), turns + 1)
    params = loop_params(model, workdir, workdir / "home")
    messages = (UserMessage.of_text(PROMPT),)
    gc.collect()
    began = time.perf_counter()
    events, finished = await drive(params, messages)
    total = time.perf_counter() - began
    _check(events, finished, model, turns)
    clocks = model.clocks
    harness = tuple(
        clocks[k + 1].arrived - clocks[k].arrived - clocks[k].model_s for k in range(turns)
    )
    after_reply = tuple(clocks[k + 1].arrived - clocks[k].ended for k in range(turns))
    return LoopRun(harness, after_reply, total)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    runs: int = option(20, "runs per arm", at_least=1)
    turns: int = option(100, "tool turns per run", at_least=1)
    warmup: int = option(2, "discarded pairs", at_least=0)
    tool: ToolChoice = option("read")


@dataclass
class Samples:
    """Every run kept, by arm, and the `timed` set."""

    runs: dict[Arm, list[LoopRun]] = field(
        default_factory=lambda: {"stayer": list[LoopRun](), "bare": list[LoopRun]()}
    )
    timed: list[TimedRun] = field(default_factory=list[TimedRun])


def _arm(arm: Arm) -> contextlib.AbstractContextManager[None]:
    return bare_loop() if arm == "bare" else contextlib.nullcontext()


async def collect(config: Config, workdir: Path) -> Samples:
    """Warm-up pairs, then `config.runs` interleaved pairs, then the `timed` runs."""
    (workdir / "sample.py").write_text(SAMPLE_FILE, encoding="utf-8")
    (workdir / "home").mkdir(exist_ok=True)
    samples = Samples()
    for pair in rounds(ARMS, config.runs, config.warmup):
        label = f"pair {pair.label}" if pair.kept else pair.label
        for arm in pair.arms:
            with _arm(arm):
                run = await one_run(config.turns, config.tool, workdir)
            if pair.kept:
                samples.runs[arm].append(run)
            median = statistics.median(run.harness_s) * US
            progress(f"  {label} {arm}: harness median {median:.0f} µs per turn")
    for index in range(config.runs):
        watch = Stopwatch()
        with watch.timing():
            await one_run(config.turns, config.tool, workdir)
        check_reached(watch, config.turns)
        timed = TimedRun(dict(watch.spent_s), dict(watch.calls), config.turns)
        samples.timed.append(timed)
        progress(f"  timed {index + 1}/{config.runs}: {timed.per_turn_s * US:.1f} µs per turn")
    return samples


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: both arms' summaries in the row's unit."""

    metric: str
    unit: str
    stayer: Summary
    bare: Summary | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "metric": self.metric,
            "unit": self.unit,
            "stayer": self.stayer.as_dict(),
            "bare": self.bare.as_dict() if self.bare else None,
        }


def rows(samples: Samples, config: Config) -> list[Row]:
    """The table's rows: the two arms compared, the paired difference, the timed decisions."""

    def pooled(arm: Arm, take: Callable[[LoopRun], Sequence[float]], scale: float) -> Summary:
        return summarize([value * scale for run in samples.runs[arm] for value in take(run)])

    def both(metric: str, unit: str, take: Callable[[LoopRun], Sequence[float]]) -> Row:
        scale = US if unit == "µs" else 1e3
        return Row(metric, unit, pooled("stayer", take, scale), pooled("bare", take, scale))

    pairs = zip(samples.runs["stayer"], samples.runs["bare"], strict=True)
    paired = [
        (statistics.median(a.harness_s) - statistics.median(b.harness_s)) * US for a, b in pairs
    ]
    table = [
        both("harness per turn (between calls, less the model)", "µs", lambda r: r.harness_s),
        both("reply end → next request", "µs", lambda r: r.after_reply_s),
        both(f"whole run ({config.turns} turns + answer)", "ms", lambda r: (r.total_s,)),
        Row("stayer − bare, per pair of run medians", "µs", summarize(paired)),
        Row(
            "inside the recovery tree per turn (timed)",
            "µs",
            summarize([run.per_turn_s * US for run in samples.timed]),
        ),
    ]
    for decision in DECISIONS:
        per_call = [
            run.spent_s[decision.name] / run.calls[decision.name] * US
            for run in samples.timed
            if run.calls.get(decision.name)
        ]
        table.append(Row(f"  {decision.name}, per call", "µs", summarize(per_call)))
    return table


def _fmt(value: float) -> str:
    return f"{value:.1f}" if abs(value) < 100 else f"{value:.0f}"


COLUMNS = (
    Column("metric", 50, "<", gap=""),
    Column("unit", 4, "<"),
    Column("stayer", 8),
    Column("p95", 8),
    Column("bare", 8),
    Column("p95", 8),
    Column("diff", 7),
    Column("ratio", 6),
)


def render(table: Sequence[Row], config: Config) -> str:
    """The rows as a fixed-width table, with what was run above it."""
    call = "Read of a 60-line file" if config.tool == "read" else "Bash `true`"
    title = (
        f"recovery machinery, in-process loop: {config.turns} turns ({call}) and an answer per "
        f"run; {config.runs} runs per arm, interleaved in pairs"
    )
    cells = []
    for row in table:
        line = [row.metric, row.unit, _fmt(row.stayer.median), _fmt(row.stayer.p95)]
        if row.bare is None:
            line += ["-", "-", "-", "-"]
        else:
            diff = row.stayer.median - row.bare.median
            ratio = row.stayer.median / row.bare.median if row.bare.median else float("nan")
            line += [_fmt(row.bare.median), _fmt(row.bare.p95), _fmt(diff), f"{ratio:.3f}x"]
        cells.append(line)
    note = (
        "medians and nearest-rank p95 (pooled turns; per-pair and timed rows: over runs); "
        "diff = stayer median − bare median; bare = recovery decisions short-circuited"
    )
    return "\n".join([title, *table_lines(COLUMNS, cells), note])


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "summary": [row.as_dict() for row in rows(samples, config)],
        "samples": {
            **{arm: [asdict(run) for run in runs] for arm, runs in samples.runs.items()},
            "timed": [asdict(run) for run in samples.timed],
        },
    }


def report(samples: Samples, config: Config) -> str:
    """The table."""
    return render(rows(samples, config), config)


BENCHMARK = Benchmark(
    prog="python -m benchmarks.recovery",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-recovery-",
    collect=collect,
    report=report,
    as_json=as_json,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
