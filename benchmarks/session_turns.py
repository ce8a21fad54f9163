"""The harness's time per turn deep into one session: turns 1, 100 and 1,000 after a history of
150k tokens (target: under 5 ms, and flat).

    .venv/bin/python -m benchmarks.session_turns [--tokens 150000] [--turns 1000] [--runs 3]
                                                 [--window 20] [--json PATH]

Each run is one `stayer.Session` with a CLI run's options (the built-in tools, the real system
prompt, bypass permissions, the transcript written under a throwaway `STAYER_CONFIG_DIR`),
seeded (`QueryOptions.history`) with a history made by stayer's own loop and tools over this
repository (`benchmarks.history`: Read, Grep and Bash results, thinking with signatures) and
its answer. One prompt then takes it through `--turns` tool turns, each a Read of a 12-line
file, and an answer, against the clocked instant model of `benchmarks.instant`, which builds
each request body with one `RequestEncoder` kept for the session, as the Anthropic provider
does, and reports as input tokens what the request holds, as the API would.

Autocompaction stays on, so its check runs before every call as it would for a user, but the
model is one with a 1M-token window (`claude-sonnet-5-5`: the threshold is 967k tokens), which
the session (about 150k tokens, then 60 more a turn) never reaches; a run that compacts is
refused.

Turn k is the harness's time between model calls k and k+1, less the model's own
(`benchmarks.instant`): consuming the answer, deciding, running the Read, writing the
transcript, building the next request. It is broken down into the transcript's `sync` (both
settle points of the turn: before the tool round, before the next call), the next request's
body, and the rest. Reported: medians and nearest-rank p95 over windows of `--window` turns at
the start, around turn 100 and at the end, pooled over `--runs` runs (each a fresh Session on
the same history, after one short discarded run that loads what a first turn loads). The
target: every window's median under 5 ms, the last within 1.5x of the first.
"""

from __future__ import annotations

import bisect
import gc
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from benchmarks.history import build_history, describe
from benchmarks.instant import PROMPT, BenchmarkError, ClockedModel, bench_env
from benchmarks.runner import Benchmark, option, progress
from benchmarks.stats import Summary, summarize
from stayer.context.compact import estimate_tokens
from stayer.events import (
    Compacted,
    Continue,
    Continuing,
    Event,
    Finished,
    Terminal,
    ToolCallFinished,
)
from stayer.messages import AssistantMessage, Message, TextBlock, ToolUseBlock, Usage
from stayer.providers.anthropic import RequestEncoder
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, text
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.session.transcript import TranscriptWriter, load

MS = 1e3
TARGET_MS = 5.0
FLAT = 1.5
"""The last window may take at most this many times the first."""
MODEL = "claude-sonnet-5-5"
"""A model with a 1M-token window, so the session never reaches the autocompaction threshold."""
FINAL_TEXT = "All read."
SAMPLE_FILE = "".join(f"LIMIT_{n} = {n * 64}\n" for n in range(12))
"""What each turn reads: 12 short lines (about 60 tokens with the call)."""
PARTS = ("harness", "sync", "build", "rest")


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    tokens: int = option(
        150_000, "history size", at_least=10_000, why="the point is a long history"
    )
    turns: int = option(1_000, "tool turns per run")
    runs: int = option(3, "sessions to time", at_least=1)
    window: int = option(20, "turns per mark", at_least=1)


class _Reader:
    """Plays the model: a Read of the sample file for each of `turns` requests, then the answer.
    Reports the request's size as its input tokens, counted as the messages arrive."""

    def __init__(self, turns: int, path: Path) -> None:
        self.turns = turns
        self.path = path
        self.served = 0
        self._seen = 0
        self._counted = 0

    def respond(self, request: ModelRequest) -> Reply:
        """The next reply."""
        self._counted += estimate_tokens(request.messages[self._seen :])
        self._seen = len(request.messages)
        index, self.served = self.served, self.served + 1
        if index >= self.turns:
            return text(FINAL_TEXT)
        call = ToolUseBlock(f"toolu_turn_{index:05d}", "Read", {"file_path": str(self.path)})
        return Reply((call,), usage=Usage(input_tokens=self._counted, output_tokens=40))


@contextmanager
def timed_syncs(spans: list[tuple[float, float]]) -> Iterator[None]:
    """Every `TranscriptWriter.sync` in this process timed: (start, seconds) appended to `spans`."""
    real = TranscriptWriter.sync

    def sync(self: TranscriptWriter, messages: Sequence[Message]) -> None:
        began = time.perf_counter()
        real(self, messages)
        spans.append((began, time.perf_counter() - began))

    setattr(TranscriptWriter, "sync", sync)  # noqa: B010 (mypy refuses assigning a method)
    try:
        yield
    finally:
        setattr(TranscriptWriter, "sync", real)  # noqa: B010


@dataclass(frozen=True, slots=True)
class SessionRun:
    """One session's turns: seconds per turn of each part (index 0 is turn 1)."""

    parts: dict[str, tuple[float, ...]]
    syncs_per_turn: tuple[int, ...]
    messages_at: dict[int, int]
    tokens_at: dict[int, int]


def _options(model: ClockedModel, workdir: Path, history: Sequence[Message]) -> QueryOptions:
    home, config = workdir / "home", workdir / "config"
    return QueryOptions(
        provider=model,
        model=MODEL,
        cwd=workdir,
        permission_mode="bypassPermissions",
        env={**bench_env(home), "STAYER_CONFIG_DIR": str(config)},
        history=history,
    )


def _check(events: Sequence[Event], model: ClockedModel, turns: int) -> Finished:
    finished = events[-1]
    problems: list[str] = []
    if not isinstance(finished, Finished) or finished.terminal is not Terminal.COMPLETED:
        problems.append(f"the run ended with {finished}")
    tools = [e for e in events if isinstance(e, ToolCallFinished)]
    if len(tools) != turns or any(e.status != "completed" for e in tools):
        failed = [e.result.text[:200] for e in tools if e.status != "completed"]
        problems.append(f"{len(tools)} tool calls, expected {turns}; failures: {failed[:1]}")
    if any(isinstance(e, Compacted) for e in events):
        problems.append("the history was compacted during the measurement")
    if any(isinstance(e, Continuing) and e.reason is not Continue.NEXT_TURN for e in events):
        problems.append("a recovery in a fault-free run")
    if len(model.clocks) != turns + 1:
        problems.append(f"{len(model.clocks)} model calls, expected {turns + 1}")
    if problems or not isinstance(finished, Finished):
        raise BenchmarkError("; ".join(problems))
    model.assert_done()
    return finished


def _per_turn(model: ClockedModel, spans: list[tuple[float, float]]) -> dict[str, list[float]]:
    """Each turn's parts, from the call clocks and the syncs that fell between two calls."""
    clocks = model.clocks
    starts = [start for start, _ in spans]
    parts: dict[str, list[float]] = {name: [] for name in (*PARTS, "syncs")}
    for k in range(1, len(clocks)):
        before, after = clocks[k - 1], clocks[k]
        harness = after.arrived - before.arrived - before.model_s
        inside = spans[
            bisect.bisect_left(starts, before.arrived) : bisect.bisect_left(starts, after.arrived)
        ]
        synced = sum(seconds for _, seconds in inside)
        parts["harness"].append(harness)
        parts["sync"].append(synced)
        parts["build"].append(after.build_s)
        parts["rest"].append(harness - synced - after.build_s)
        parts["syncs"].append(len(inside))
    return parts


def _as_kept(messages: Sequence[Message]) -> list[Message]:
    """The conversation as a transcript keeps it: an answer whose tool call started while it
    streamed is on record from that moment, so its stop reason and usage are the ones it had
    then (a later record of no new content would be refused; see `transcript_write.sync`)."""
    return [
        replace(message, stop_reason=None, usage=Usage())
        if isinstance(message, AssistantMessage)
        else message
        for message in messages
    ]


async def one_run(history: Sequence[Message], turns: int, workdir: Path) -> SessionRun:
    """A fresh Session on `history`, one prompt through `turns` Read turns; checked and timed."""
    reader = _Reader(turns, workdir / "sample.py")
    model = ClockedModel(reader.respond, turns + 1, encode=RequestEncoder().encode)
    spans: list[tuple[float, float]] = []
    with timed_syncs(spans):
        async with Session(_options(model, workdir, history)) as session:
            gc.collect()
            events = [event async for event in session.submit(PROMPT)]
            path = session.transcript_path
    finished = _check(events, model, turns)
    if path is None or _as_kept(load(path).messages) != _as_kept(finished.messages):
        raise BenchmarkError("the transcript did not read back as the conversation")
    parts = _per_turn(model, spans)
    marks = {turn: model.clocks[turn].request.messages for turn in (1, 100, turns) if turn <= turns}
    return SessionRun(
        parts={name: tuple(parts[name]) for name in PARTS},
        syncs_per_turn=tuple(int(n) for n in parts["syncs"]),
        messages_at={turn: len(sent) for turn, sent in marks.items()},
        tokens_at={turn: estimate_tokens(sent) for turn, sent in marks.items()},
    )


@dataclass
class Samples:
    """The history's size and every run kept."""

    history: dict[str, Any]
    runs: list[SessionRun] = field(default_factory=list[SessionRun])


def seeded(history: Sequence[Message]) -> tuple[Message, ...]:
    """The history as a session leaves it after a prompt: with its answer."""
    answer = AssistantMessage((TextBlock("I have read what I needed."),), stop_reason="end_turn")
    return (*history, answer)


async def collect(config: Config, workdir: Path) -> Samples:
    """Build the history, warm up, then the runs, each in a folder of its own."""
    (workdir / "sample.py").write_text(SAMPLE_FILE, encoding="utf-8")
    (workdir / "home").mkdir(exist_ok=True)
    progress(f"building a {config.tokens:,}-token history with stayer's loop and tools")
    history = seeded(await build_history(config.tokens, workdir / "home"))
    samples = Samples(describe(history))
    progress(f"  {samples.history}")
    await one_run(history, config.window, workdir)  # warm-up: what a first turn loads
    for index in range(config.runs):
        run = await one_run(history, config.turns, workdir)
        samples.runs.append(run)
        harness = summarize(run.parts["harness"])
        progress(
            f"  run {index + 1}/{config.runs}: harness median {harness.median * MS:.2f} ms, "
            f"p95 {harness.p95 * MS:.2f} ms per turn"
        )
    return samples


# --- the report ------------------------------------------------------------------------------


def windows(config: Config) -> dict[int, range]:
    """The turns pooled for each mark: the first `window`, those around 100, the last."""
    half = config.window // 2
    marks = {
        1: range(1, config.window + 1),
        100: range(100 - half + 1, 100 - half + 1 + config.window),
        config.turns: range(config.turns - config.window + 1, config.turns + 1),
    }
    return {
        mark: span
        for mark, span in marks.items()
        if span.start >= 1 and span.stop <= config.turns + 1
    }


def summaries(samples: Samples, config: Config) -> dict[int, dict[str, Summary]]:
    """For each mark, each part's summary in milliseconds, pooled over the runs."""
    return {
        mark: {
            part: summarize(
                [run.parts[part][turn - 1] * MS for run in samples.runs for turn in span]
            )
            for part in PARTS
        }
        for mark, span in windows(config).items()
    }


def verdict(table: dict[int, dict[str, Summary]]) -> str:
    """pass / FAIL: every window's median under 5 ms, the last within 1.5x of the first."""
    medians = [table[mark]["harness"].median for mark in sorted(table)]
    fast = all(median < TARGET_MS for median in medians)
    return "pass" if fast and medians[-1] <= FLAT * medians[0] else "FAIL"


def render(samples: Samples, config: Config) -> str:
    """The table: per window, each part's median (p95), with the request's size."""
    facts, table, run = samples.history, summaries(samples, config), samples.runs[0]
    spans = windows(config)
    lines = [
        f"one Session after a {facts['estimated_tokens']:,}-token history ({facts['messages']} "
        f"messages), {config.turns} Read turns per run, {config.runs} runs, transcript on",
        f"{'turns':<14} {'request':>22} {'harness':>16} {'sync':>16} {'build':>16} {'rest':>16}",
        "-" * 105,
    ]
    for mark, span in spans.items():
        size = f"{run.messages_at[mark]:,} msgs {run.tokens_at[mark] / 1e3:,.0f}k tok"
        cells = "".join(
            f" {table[mark][part].median:>7.2f} ({table[mark][part].p95:>5.2f})" for part in PARTS
        )
        lines.append(f"{span.start:>5}-{span.stop - 1:<8} {size:>22}{cells}")
    syncs = sorted({n for r in samples.runs for n in r.syncs_per_turn})
    lines.append(
        f"milliseconds per turn: median (p95) over {config.window} turns x {config.runs} runs; "
        f"syncs per turn: {syncs}; target under {TARGET_MS:g} ms and flat: {verdict(table)}"
    )
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "history": samples.history,
        "summary": {
            str(mark): {part: summary.as_dict() for part, summary in parts.items()}
            for mark, parts in summaries(samples, config).items()
        },
        "verdict": verdict(summaries(samples, config)),
        "runs": [asdict(run) for run in samples.runs],
    }


def _turns_cover_a_window(config: Config) -> str | None:
    return "--turns must be at least --window" if config.turns < config.window else None


def _status(samples: Samples, config: Config) -> int:
    return 0 if verdict(summaries(samples, config)) == "pass" else 1


BENCHMARK = Benchmark(
    prog="python -m benchmarks.session_turns",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-session-",
    collect=collect,
    report=render,
    as_json=as_json,
    check=_turns_cover_a_window,
    status=_status,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
