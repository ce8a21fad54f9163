"""Reading a 10,000-message transcript back: what `--resume` and `--continue` do before anything
else (target: under 1 s).

    .venv/bin/python -m benchmarks.transcript_load [--messages 10000] [--repeats 15]
                                                   [--json PATH]

The transcript is a session of tool rounds written by `TranscriptWriter`, the Session's own
writer: one record per message, chained by `parentUuid`, with the session's fields. The rounds
are real: `benchmarks.history` runs stayer's loop and tools over this repository once (whole-file
Reads, Greps in content mode, Bash output, a line of text before each call, thinking with its
signature before every third), and its rounds are repeated, with fresh call and message ids,
until the conversation holds `--messages` messages; it ends with an answer. The writer is given
the whole conversation in one `sync`, which writes the same records a session does across its
turns (a session syncs at every settle point; see `sync` below for what that costs).

Measured, `--repeats` times each, round-robin, each sample after a `gc.collect()`:

* `load(path)`: the whole read (lines parsed, the chain walked from the newest record, the
  messages built), checked against the conversation written;
* the floor: reading the file and `json.loads` of every line, which any JSONL reader pays;
* `sync`: one more message appended by a writer that holds the whole chain, as a session's
  next settle point at that length (the chain is compared before the record is written).
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from benchmarks import machine
from benchmarks.history import build_history
from benchmarks.instant import BenchmarkError
from benchmarks.runner import Benchmark, Column, option, progress, table_lines
from benchmarks.stats import Summary, summarize
from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.session.transcript import TranscriptWriter, load

TARGET_S = 1.0
POOL_TOKENS = 150_000
"""The size of the history whose rounds are repeated (about 70 rounds)."""
SESSION_ID = "0b7a5e3c-2d41-4f86-9a1e-6c3f0d2b8e57"


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    messages: int = option(10_000, "messages in the transcript")
    repeats: int = option(15, "samples per case", at_least=1)


# --- the transcript ---------------------------------------------------------------------------


def _renamed(block: ContentBlock, round_: int) -> ContentBlock:
    """A block of a repeated round, with call ids of its own."""
    if isinstance(block, ToolUseBlock):
        return replace(block, id=f"{block.id}_r{round_}")
    if isinstance(block, ToolResultBlock):
        return replace(block, tool_use_id=f"{block.tool_use_id}_r{round_}")
    return block


def conversation(pool: Sequence[Message], messages: int) -> tuple[Message, ...]:
    """The pool's prompt, then its rounds again and again, then an answer: `messages` long."""
    prompt, rounds = pool[0], list(zip(pool[1::2], pool[2::2], strict=False))
    if not rounds or messages < 2 or messages % 2:
        raise BenchmarkError("the conversation needs an even number of messages, 2 or more")
    built: list[Message] = [prompt]
    for number in range((messages - 2) // 2):
        answer, results = rounds[number % len(rounds)]
        assert isinstance(answer, AssistantMessage)
        content = tuple(_renamed(block, number) for block in answer.content)
        built.append(replace(answer, content=content, id=f"msg_{number:06d}"))
        built.append(UserMessage(tuple(_renamed(block, number) for block in results.content)))
    built.append(AssistantMessage((TextBlock("I have what I need."),), id="msg_last"))
    return tuple(built)


def write(path: Path, messages: tuple[Message, ...]) -> TranscriptWriter:
    """The transcript of `messages`, as a session's writer leaves it (closed)."""
    writer = TranscriptWriter(path, session_id=SESSION_ID, cwd=str(machine.REPO), git_branch="main")
    writer.sync(messages)
    writer.close()
    return writer


# --- the measurements -------------------------------------------------------------------------


def parse_lines(path: Path) -> int:
    """The floor: every line of the file decoded as JSON."""
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if json.loads(line))


def time_all(
    path: Path, messages: tuple[Message, ...], writer: TranscriptWriter, repeats: int
) -> dict[str, list[float]]:
    """Seconds per call of each case, `repeats` times, round-robin."""
    loaded = load(path)
    if loaded.messages != messages or loaded.warnings or loaded.skipped:
        raise BenchmarkError("the transcript did not read back as the conversation written")
    # a writer holding the same chain, appending elsewhere, so the file loaded stays the same;
    # each sample is the conversation as the session holds it, one message longer than the last
    going_on = TranscriptWriter(
        path.with_name("going-on.jsonl"), session_id=SESSION_ID, cwd=writer.cwd, git_branch="main"
    )
    going_on.go_on_from(messages, loaded.chain)
    more = [UserMessage.of_text(f"one more prompt ({n})") for n in range(repeats)]
    longer = iter([(*messages, *more[: n + 1]) for n in range(repeats)])

    def sync_one() -> None:
        going_on.sync(next(longer))

    cases: dict[str, Callable[[], object]] = {
        "load": lambda: load(path),
        "floor": lambda: parse_lines(path),
        "sync": sync_one,
    }
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, call in cases.items():
            gc.collect()
            began = time.perf_counter()
            call()
            seconds[name].append(time.perf_counter() - began)
    going_on.close()
    return seconds


@dataclass(frozen=True, slots=True)
class Samples:
    """What was measured, on what."""

    facts: dict[str, Any]
    seconds: dict[str, list[float]]


async def collect(config: Config, workdir: Path) -> Samples:
    """Build the transcript in the throwaway folder and time the cases on it (synchronous
    calls, with the event loop idle)."""
    (workdir / "home").mkdir()
    progress(f"making real tool rounds with stayer's loop and tools ({POOL_TOKENS:,} tokens)")
    pool = await build_history(POOL_TOKENS, workdir / "home")
    messages = conversation(pool, config.messages)
    path = workdir / f"{SESSION_ID}.jsonl"
    writer = write(path, messages)
    facts = {
        "messages": len(messages),
        "tool_rounds": (len(messages) - 2) // 2,
        "distinct_rounds": (len(pool) - 1) // 2,
        "tool_calls": sum(len(m.tool_uses) for m in messages if m.role == "assistant"),
        "records": len(path.read_bytes().splitlines()),
        "bytes": path.stat().st_size,
    }
    progress(f"  {facts}; timing {config.repeats} times each")
    seconds = time_all(path, messages, writer, config.repeats)
    return Samples(facts, seconds)


# --- the report ------------------------------------------------------------------------------


ROWS = (
    ("load", "load(): parse, walk the chain, build the messages", "ms"),
    ("floor", "floor: read the file, json.loads every line", "ms"),
    ("sync", "sync: one more message onto the whole chain", "µs"),
)


def summaries(samples: Samples) -> dict[str, Summary]:
    """Each case's order statistics, in its row's unit."""
    scale = {"ms": 1e3, "µs": 1e6}
    return {
        name: summarize([s * scale[unit] for s in samples.seconds[name]]) for name, _, unit in ROWS
    }


COLUMNS = (
    Column("case", 52, "<", gap=""),
    Column("median", 10),
    Column("p95", 10),
    Column("min", 10),
)


def render(samples: Samples, config: Config) -> str:
    """A small fixed-width table, the transcript described above it, the verdict below."""
    facts, stats = samples.facts, summaries(samples)
    title = (
        f"a transcript of {facts['messages']:,} messages ({facts['tool_rounds']:,} tool rounds, "
        f"{facts['tool_calls']:,} calls, {facts['distinct_rounds']} distinct), "
        f"{facts['records']:,} records, {facts['bytes'] / 1e6:.1f} MB; {config.repeats} samples"
    )
    cells = [
        [label, *(f"{value:>7.1f} {unit}" for value in (s.median, s.p95, s.minimum))]
        for name, label, unit in ROWS
        for s in (stats[name],)
    ]
    lines = [title, *table_lines(COLUMNS, cells, ruler=85)]
    median_s = stats["load"].median / 1e3
    verdict = "met" if median_s < TARGET_S else "MISSED"
    rate = facts["bytes"] / 1e6 / median_s
    lines.append(
        f"target: load() median under {TARGET_S:.0f} s: {verdict} ({median_s:.2f} s, "
        f"{rate:.0f} MB/s, {stats['load'].median / stats['floor'].median:.1f}x the floor)"
    )
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "transcript": samples.facts,
        "summary": {name: s.as_dict() for name, s in summaries(samples).items()},
        "units": {name: unit for name, _, unit in ROWS},
        "samples_s": samples.seconds,
    }


def _check(config: Config) -> str | None:
    if config.messages < 2 or config.messages % 2:
        return "--messages must be even and at least 2 (a prompt, rounds, an answer)"
    return None


BENCHMARK = Benchmark(
    prog="python -m benchmarks.transcript_load",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-transcript-",
    collect=collect,
    report=render,
    as_json=as_json,
    check=_check,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
