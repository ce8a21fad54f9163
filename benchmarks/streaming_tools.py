"""What starting tool calls while the answer streams buys: five 200 ms calls, blocks 100 ms apart.

    .venv/bin/python -m benchmarks.streaming_tools [--runs 10] [--warmup 1] [--tail-ms 0]
                                                   [--json PATH]

The loop hands each tool_use block to its executor (`stayer.loop.executor`) the moment the block
completes in the stream, and a concurrency-safe call starts at once beside the other safe ones
(up to `LoopParams.max_concurrent_tools`, 10 by default). The scenario: one streamed answer of
five read-only calls, each the tool's own 200 ms of work (`tests.fakes.tools.Overlap`, an
`asyncio.sleep` that also records how many calls ran at once), whose blocks complete 100 ms
apart (block k at k × 100 ms after the first). It goes over the real wire: the fake Anthropic
server of `benchmarks.timed_server` (uvicorn on 127.0.0.1, instant frames, Nagle off) sends the
stream with a 100 ms stall before each block's `content_block_start` after the first
(`Stream.stalled`), and `AnthropicProvider` reads it as it would a live server's; the loop is
`stayer.loop.run.query` in this process, on `tests.fakes.loop_harness.make_params`.

The figure is the time from the first block's completion (its `BlockCompleted` reaching the
reader of the loop's events) to the last tool result (the fifth call's `ToolCallFinished`). The
ideal is the last block's arrival plus one call: 400 + 200 = 600 ms. Also reported: when the
round's results go on record (`ToolResultsAppended`, which also waits for the answer's end),
the first call's start, the last block's arrival and the answer's end. Three arms:

* `stayer`: the loop as it is;
* `after_end`: parallel, but only once the answer has ended: `Executor._schedule`, which starts
  whatever may start, is wrapped, in this process only, so it starts nothing while the answer
  streams; `finish` (the answer ended) schedules as usual, with the default cap;
* `serial`: the same hold, and `max_concurrent_tools=1`: one call after another, after the end.
  (The cap alone is not serial-after-the-end: with it, calls still start during the stream.)

Each run is checked, or refused: the run completes, five calls succeed, the tool saw the
concurrency its arm claims (overlapping calls in `stayer`, five at once in `after_end`, one
at a time in `serial`), and the hold reached the loop: in the held arms no `ToolCallStarted`
comes before the `MessageCompleted`, and in `stayer` at least four do (the last block ends the
answer, so its call may start just after). Rounds run the three arms in rotating order, each
after a `gc.collect()`, so drift and bursts of load hit them alike; warm-up rounds are
discarded. Reported: median and nearest-rank p95 per arm, and each median over the ideal (the
target for `stayer`: 1.10).

In that scenario the answer ends with its last block, so the last call starts at 400 ms in
`after_end` as in `stayer`, and the two can only tie: what the streaming start saves there is
the serial wait. `--tail-ms T` has the server wait T ms after the last block before it sends
`message_delta` (a model still writing after its calls, or slow to close its message): the
ideal stays 600 ms, `stayer` should stay near it, and `after_end` moves to about 600 + T.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from msgspec.structs import replace
from tests.fakes.loop_harness import make_params
from tests.fakes.sse import Frame, Stream, ToolCall, anthropic_stream
from tests.fakes.tools import Overlap

from benchmarks.decisions import patched
from benchmarks.instant import BenchmarkError
from benchmarks.runner import Benchmark, Column, option, progress, rounds, table_lines
from benchmarks.stats import Summary, summarize
from benchmarks.timed_server import TimedServer, text_reply
from stayer.events import (
    BlockCompleted,
    Event,
    Finished,
    MessageCompleted,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsAppended,
)
from stayer.loop.executor import Executor
from stayer.loop.run import query
from stayer.messages import ToolUseBlock, UserMessage
from stayer.providers.anthropic import AnthropicProvider

MS = 1e3
CALLS = 5
CALL_S = 0.200
GAP_S = 0.100
IDEAL_S = (CALLS - 1) * GAP_S + CALL_S
"""The last block's arrival plus one call, from the first block's completion."""
TARGET_RATIO = 1.10
FINAL_TEXT = "done"
Arm = Literal["stayer", "after_end", "serial"]
ARMS: tuple[Arm, ...] = ("stayer", "after_end", "serial")
PEAK: dict[Arm, range] = {"stayer": range(2, CALLS + 1), "after_end": range(CALLS, CALLS + 1)}
PEAK["serial"] = range(1, 2)
"""How many calls each arm runs at once: in `stayer`, a call overlaps the next one or two (each
takes two gaps); the held arms start all five at once, or one after another."""


@dataclass(frozen=True, slots=True)
class Run:
    """One run, in seconds from the first block's completion (as the loop's reader saw it)."""

    results_s: float
    """... to the last call's result (its `ToolCallFinished`): the figure."""
    appended_s: float
    """... to the round's results going on record (`ToolResultsAppended`), which waits for the
    answer's end as well."""
    last_block_s: float
    """... to the last block's completion: the wire's pacing (ideally 0.4 s)."""
    answer_end_s: float
    """... to the answer's end (`MessageCompleted`)."""
    first_start_s: float
    """... to the first call's start."""
    started_while_streaming: int
    peak: int


def answer(*, tail_s: float = 0.0) -> Stream:
    """Five Overlap calls, each block's start held `GAP_S` after the previous block's end, and
    the message's end `tail_s` after the last block's."""
    calls = [ToolCall(f"toolu_bench_{k}", "Overlap", {"text": f"call {k}"}) for k in range(CALLS)]
    stream = anthropic_stream(*calls, stop_reason="tool_use")
    for k in range(1, CALLS):
        stream = stream.stalled(at=_frame_at(stream, "content_block_start", k), seconds=GAP_S)
    if tail_s:
        stream = stream.stalled(at=_frame_at(stream, "message_delta"), seconds=tail_s)
    return stream


def _frame_at(stream: Stream, event: str, index: int | None = None) -> int:
    """The position of the first `event` frame (of block `index`, when given)."""
    for position, chunk in enumerate(stream.frames):
        if isinstance(chunk, Frame) and chunk.event == event:
            payload = chunk.payload
            if index is None or (isinstance(payload, dict) and payload.get("index") == index):
                return position
    raise BenchmarkError(f"the scripted answer has no {event} frame (block {index})")


def _held_schedule(original: Callable[[Executor], None]) -> Callable[[Executor], None]:
    def schedule(self: Executor) -> None:
        if self._streaming:
            return  # held: nothing starts until the answer has ended (`finish`)
        original(self)

    return schedule


@contextlib.contextmanager
def arm_patch(arm: Arm) -> Iterator[None]:
    """The arm's executor: as it is, or holding every call until the answer has ended."""
    if arm == "stayer":
        yield
        return
    with patched([(Executor, "_schedule", _held_schedule(Executor._schedule))]):
        yield


def _times(stamped: Sequence[tuple[float, Event]], kind: type[Event]) -> list[float]:
    """When each event of `kind` reached the reader; of blocks, only the calls' blocks."""
    return [
        t
        for t, e in stamped
        if isinstance(e, kind)
        and (not isinstance(e, BlockCompleted) or isinstance(e.block, ToolUseBlock))
    ]


def _clocks(arm: Arm, stamped: Sequence[tuple[float, Event]], peak: int) -> Run:
    """The run's offsets from its first call block's completion."""
    blocks = _times(stamped, BlockCompleted)
    ends = _times(stamped, MessageCompleted)
    starts = _times(stamped, ToolCallStarted)
    results = _times(stamped, ToolCallFinished)
    appended = _times(stamped, ToolResultsAppended)
    counts = (len(blocks), len(ends), len(starts), len(results), len(appended))
    if counts != (CALLS, 2, CALLS, CALLS, 1):
        raise BenchmarkError(
            f"{arm}: {counts} call blocks, answers, starts, results, result rounds; "
            f"expected {(CALLS, 2, CALLS, CALLS, 1)}"
        )
    first = blocks[0]
    return Run(
        results_s=results[-1] - first,
        appended_s=appended[0] - first,
        last_block_s=blocks[-1] - first,
        answer_end_s=ends[0] - first,
        first_start_s=starts[0] - first,
        started_while_streaming=sum(1 for t in starts if t < ends[0]),
        peak=peak,
    )


def _check(arm: Arm, stamped: Sequence[tuple[float, Event]], tool: Overlap) -> Run:
    """The run's clocks, once it has done what its arm claims (or `BenchmarkError`)."""
    finished = stamped[-1][1]
    if not isinstance(finished, Finished) or finished.terminal is not Terminal.COMPLETED:
        raise BenchmarkError(f"{arm}: the run did not complete: {finished!r:.300}")
    failed = [e for _, e in stamped if isinstance(e, ToolCallFinished) and e.status != "completed"]
    if failed:
        raise BenchmarkError(f"{arm}: a call failed: {failed[0].result.text[:200]}")
    run = _clocks(arm, stamped, tool.peak)
    early = run.started_while_streaming
    if arm == "stayer" and early < CALLS - 1:
        raise BenchmarkError(f"stayer: only {early} calls started while the answer streamed")
    if arm != "stayer" and early:
        raise BenchmarkError(f"{arm}: {early} calls started while the answer streamed")
    if tool.peak not in PEAK[arm]:
        wanted = f"{PEAK[arm].start}..{PEAK[arm].stop - 1}"
        raise BenchmarkError(f"{arm}: {tool.peak} calls ran at once, expected {wanted}")
    return run


async def one_run(
    arm: Arm, provider: AnthropicProvider, server: TimedServer, cwd: Path, *, tail_s: float
) -> Run:
    """The answer and a final text over HTTP, through the arm's loop; its clocks, checked."""
    server.enqueue(answer(tail_s=tail_s), text_reply())
    tool = Overlap(hold_s=CALL_S)
    params = make_params(provider, [tool], cwd)
    if arm == "serial":
        params = replace(params, max_concurrent_tools=1)
    gc.collect()
    stamped: list[tuple[float, Event]] = []
    with arm_patch(arm):
        async for event in query(params, (UserMessage.of_text("go"),)):
            stamped.append((time.perf_counter(), event))
    return _check(arm, stamped, tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    runs: int = option(10, "runs per arm", at_least=1)
    warmup: int = option(1, "discarded rounds", at_least=0)
    tail_ms: float = option(
        0.0,
        "ms from the last block to the message's end (default 0: it ends with the block)",
        at_least=0,
        at_most=10_000,
    )


@dataclass
class Samples:
    """Every kept run, by arm."""

    runs: dict[Arm, list[Run]] = field(default_factory=lambda: {arm: list[Run]() for arm in ARMS})


async def collect(config: Config, cwd: Path) -> Samples:
    """Warm-up rounds, then `config.runs` rounds of the three arms in rotating order."""
    samples = Samples()
    with TimedServer() as server:
        provider = AnthropicProvider(api_key="test-key", base_url=server.url)
        try:
            for each in rounds(ARMS, config.runs, config.warmup):
                label = f"round {each.label}" if each.kept else each.label
                for arm in each.arms:
                    run = await one_run(arm, provider, server, cwd, tail_s=config.tail_ms / MS)
                    if each.kept:
                        samples.runs[arm].append(run)
                    figure = f"{run.results_s * MS:.0f} ms to the last result"
                    progress(f"  {label} {arm}: {figure}")
        finally:
            await provider.aclose()
    return samples


# --- the report ------------------------------------------------------------------------------


COLUMNS: tuple[tuple[str, str], ...] = (
    ("results_s", "last result"),
    ("appended_s", "appended"),
    ("first_start_s", "first start"),
    ("last_block_s", "last block"),
    ("answer_end_s", "answer end"),
)
"""The `Run` fields summarized, and their heads in the table (the figure first)."""


@dataclass(frozen=True, slots=True)
class ArmSummary:
    """One arm's figures, in milliseconds, by `Run` field."""

    arm: Arm
    figures: dict[str, Summary]

    @property
    def ratio(self) -> float:
        """The median time to the last result over the ideal."""
        return self.figures["results_s"].median / (IDEAL_S * MS)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; each figure under its field's name, in ms (`results_ms`, ...)."""
        figures = {f"{name[:-2]}_ms": summary.as_dict() for name, summary in self.figures.items()}
        return {"arm": self.arm, **figures, "median_over_ideal": self.ratio}


def summaries(samples: Samples) -> list[ArmSummary]:
    """Each arm's summaries."""
    return [
        ArmSummary(
            arm,
            {
                name: summarize([getattr(run, name) * MS for run in samples.runs[arm]])
                for name, _ in COLUMNS
            },
        )
        for arm in ARMS
    ]


def render(table: Sequence[ArmSummary], config: Config) -> str:
    """The arms as a fixed-width table, with what was run above it."""
    title = (
        f"streaming tool executor, over HTTP: {CALLS} read-only calls of {CALL_S * MS:.0f} ms, "
        f"blocks {GAP_S * MS:.0f} ms apart, answer end {config.tail_ms:.0f} ms after the last "
        f"block; {config.runs} runs per arm; ideal {IDEAL_S * MS:.0f} ms"
    )
    heads = [head for _, head in COLUMNS]
    columns = [
        Column("arm", 10, "<", gap=""),
        Column(heads[0], 11),
        Column("p95", 6),
        Column("/ideal", 7),
        *(Column(head, 11) for head in heads[1:]),
    ]
    cells = []
    for row in table:
        result = row.figures["results_s"]
        rest = [f"{row.figures[name].median:.0f}" for name, _ in COLUMNS[1:]]
        cells.append(
            [row.arm, f"{result.median:.0f}", f"{result.p95:.0f}", f"{row.ratio:.3f}x", *rest]
        )
    lines = [title, *table_lines(columns, cells)]
    lines.append(
        "ms from the first call block's completion, medians over runs (p95: nearest rank); "
        f"/ideal = median / {IDEAL_S * MS:.0f} ms, the target for stayer <= {TARGET_RATIO:.2f}x; "
        "last result = the 5th ToolCallFinished, appended = ToolResultsAppended"
    )
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "scenario": {"calls": CALLS, "call_ms": CALL_S * MS, "gap_ms": GAP_S * MS},
        "ideal_ms": IDEAL_S * MS,
        "target_ratio": TARGET_RATIO,
        "summary": [row.as_dict() for row in summaries(samples)],
        "samples": {arm: [asdict(run) for run in runs] for arm, runs in samples.runs.items()},
    }


def report(samples: Samples, config: Config) -> str:
    """The table."""
    return render(summaries(samples), config)


BENCHMARK = Benchmark(
    prog="python -m benchmarks.streaming_tools",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-streaming-",
    collect=collect,
    report=report,
    as_json=as_json,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
