"""Building each model request of a long session: at turn 1, 100 and 1,000 after a history of
150k tokens, with each message encoded once against encoding the whole conversation every time.

    .venv/bin/python -m benchmarks.request_building [--tokens 150000] [--turns 1000] [--runs 3]
                                                    [--json PATH]

The history is made by stayer's own loop and tools over this repository (`benchmarks.history`:
Read, Grep and Bash results, thinking with signatures), as a session stands after a long
stretch of work. The session then goes on for `--turns` tool rounds, each a short answer that
calls Bash and its short result (about 40 tokens a round). Before each round's call, the body of
the request is built as the loop builds it (`loop.fallback.request_for`, then the provider's
encoding, breakpoints included) by:

* the Anthropic encoder and the OpenAI provider that built every earlier request of the session
  ("encoded once": what a session does, each message's JSON kept from the request it first
  went out in), and
* a fresh encoder each time ("all encoded each turn": every message encoded again, as every
  request was before stayer kept the bytes; the first request of a resumed session costs this).

Only the building is timed (`time.perf_counter`, after a `gc.collect()`); the fresh encoder is
made before the clock starts. Reported: medians and nearest-rank p95 of the turns around 1, 100
and 1,000 (turns 1-10, 96-105 and the last ten), pooled over `--runs` runs. The target: encoded
once, under 5 ms and flat (the last turns within 1.5x of the first).
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.history import build_history, describe
from benchmarks.instant import ClockedModel, loop_params
from benchmarks.runner import Benchmark, option, progress
from benchmarks.stats import Summary, summarize
from stayer.context.compact import estimate_tokens
from stayer.loop.fallback import request_for
from stayer.loop.state import LoopParams
from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers.anthropic import RequestEncoder
from stayer.providers.base import ModelRequest
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.scripted import text

MS = 1e3
TARGET_MS = 5.0
FLAT = 1.5
"""The last turns may take at most this many times the first ones."""

Encode = Callable[[ModelRequest], bytes]


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    tokens: int = option(
        150_000, "history size", at_least=10_000, why="the point is a long history"
    )
    turns: int = option(1_000, "rounds after it", at_least=10)
    runs: int = option(3, "times to go through", at_least=1)


def _openai() -> OpenAIChatProvider:
    # Plain HTTP: no TLS roots to load for a client that never connects.
    return OpenAIChatProvider(api_key="k", base_url="http://127.0.0.1:9/v1")


def subjects() -> dict[str, Callable[[], Encode]]:
    """Each way of building bodies, as a maker of the function that builds one."""
    return {
        "anthropic, encoded once": lambda: RequestEncoder().encode,
        "openai, encoded once": lambda: _openai().encode_request,
        "anthropic, all encoded each turn": lambda: RequestEncoder().encode,
        "openai, all encoded each turn": lambda: _openai().encode_request,
    }


def tool_round(number: int) -> tuple[AssistantMessage, UserMessage]:
    """One short round: a line of text and a Bash call, and its one-line result."""
    call = ToolUseBlock(f"toolu_more_{number:05d}", "Bash", {"command": f"echo step {number}"})
    answer = AssistantMessage(
        (TextBlock(f"Step {number}: checking the next thing."), call),
        id=f"msg_more_{number:05d}",
        model="claude-sonnet-4-5",
        stop_reason="tool_use",
    )
    return answer, UserMessage((ToolResultBlock(call.id, (TextBlock(f"step {number}\n"),)),))


def windows(turns: int) -> dict[int, range]:
    """The turns pooled for each mark: 1-10, 96-105 and the last ten (of those that exist)."""
    marks = {1: range(1, 11), 100: range(96, 106), turns: range(turns - 9, turns + 1)}
    return {
        mark: span for mark, span in marks.items() if span.start >= 1 and span.stop <= turns + 1
    }


@dataclass
class Samples:
    """Milliseconds per build, by subject and turn; the history's size at each mark."""

    history: dict[str, Any]
    first_build_ms: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    per_turn_ms: dict[str, dict[int, list[float]]] = field(
        default_factory=dict[str, dict[int, list[float]]]
    )
    tokens_at: dict[int, int] = field(default_factory=dict[int, int])
    messages_at: dict[int, int] = field(default_factory=dict[int, int])


def _timed(encode: Encode, params: LoopParams, messages: tuple[Message, ...]) -> float:
    gc.collect()
    began = time.perf_counter()
    _, request = request_for(params, 0, messages, params.tools.specs, None)
    encode(request)
    return (time.perf_counter() - began) * MS


def one_run(
    params: LoopParams, history: tuple[Message, ...], config: Config, samples: Samples
) -> None:
    """The session going on for `config.turns` rounds, every subject timed before each call."""
    makers = subjects()
    warm = {name: make() for name, make in makers.items() if "once" in name}
    for name, encode in warm.items():  # the history went out turn by turn before: encoded once
        samples.first_build_ms.setdefault(name, []).append(_timed(encode, params, history))
    marks = windows(config.turns)
    pooled = {turn for span in marks.values() for turn in span}
    messages = list(history)
    for turn in range(1, config.turns + 1):
        messages.extend(tool_round(turn))
        sent = tuple(messages)
        if turn not in pooled:  # not timed, but the session's encoders see every request
            for encode in warm.values():
                encode(request_for(params, 0, sent, params.tools.specs, None)[1])
            continue
        for name, make in makers.items():
            encode = warm.get(name) or make()
            per_turn = samples.per_turn_ms.setdefault(name, {})
            per_turn.setdefault(turn, []).append(_timed(encode, params, sent))
        if turn in marks:
            samples.tokens_at[turn] = estimate_tokens(sent)
            samples.messages_at[turn] = len(sent)


async def collect(config: Config, workdir: Path) -> Samples:
    """Build the history, then the runs."""
    (workdir / "home").mkdir(exist_ok=True)
    progress(f"building a {config.tokens:,}-token history with stayer's loop and tools")
    history = await build_history(config.tokens, workdir / "home")
    samples = Samples(describe(history))
    progress(f"  {samples.history}")
    params = loop_params(ClockedModel(lambda _: text("unused"), 0), workdir, workdir / "home")
    for index in range(config.runs):
        one_run(params, history, config, samples)
        progress(f"  run {index + 1}/{config.runs} done")
    return samples


# --- the report ------------------------------------------------------------------------------


def summaries(samples: Samples, config: Config) -> dict[str, dict[int, Summary]]:
    """For each subject, the pooled turns around each mark."""
    marks = windows(config.turns)
    return {
        name: {
            mark: summarize([ms for turn in span for ms in by_turn.get(turn, [])])
            for mark, span in marks.items()
        }
        for name, by_turn in samples.per_turn_ms.items()
    }


def verdict(by_mark: dict[int, Summary]) -> str:
    """pass / FAIL against the target: every mark under 5 ms, the last within 1.5x the first."""
    first, last = by_mark[min(by_mark)].median, by_mark[max(by_mark)].median
    fast = all(summary.median < TARGET_MS for summary in by_mark.values())
    return "pass" if fast and last <= FLAT * first else "FAIL"


def render(samples: Samples, config: Config) -> str:
    """The table: per subject, the median (p95) at each mark."""
    facts = samples.history
    table = summaries(samples, config)
    marks = sorted(windows(config.turns))
    sizes = ", ".join(
        f"turn {mark}: {samples.messages_at[mark]:,} messages, {samples.tokens_at[mark]:,} tokens"
        for mark in marks
    )
    lines = [
        f"request building after a {facts['estimated_tokens']:,}-token history "
        f"({facts['messages']} messages), {config.turns} more rounds, {config.runs} runs",
        f"  {sizes}",
        f"{'subject':<34}" + "".join(f"{'turn ' + str(m):>18}" for m in marks) + "  target",
        "-" * (34 + 18 * len(marks) + 8),
    ]
    for name, by_mark in table.items():
        cells = "".join(f"{by_mark[m].median:>9.2f} ({by_mark[m].p95:>5.2f})" for m in marks)
        lines.append(f"{name:<34}{cells}  {verdict(by_mark) if 'once' in name else '-'}")
    first = {name: summarize(ms).median for name, ms in samples.first_build_ms.items()}
    lines.append(
        "first request of a resumed session (nothing encoded yet): "
        + ", ".join(f"{name.split(',')[0]} {ms:.1f} ms" for name, ms in first.items())
    )
    lines.append(f"milliseconds: median (p95); target under {TARGET_MS:g} ms and flat")
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary and every raw sample."""
    return {
        "config": asdict(config),
        "history": samples.history,
        "tokens_at": samples.tokens_at,
        "messages_at": samples.messages_at,
        "summary": {
            name: {str(mark): summary.as_dict() for mark, summary in by_mark.items()}
            for name, by_mark in summaries(samples, config).items()
        },
        "samples": {"first_build_ms": samples.first_build_ms, "per_turn_ms": samples.per_turn_ms},
    }


def _status(samples: Samples, config: Config) -> int:
    """1 if building a body once per turn misses its target."""
    table = summaries(samples, config)
    missed = [
        name for name, by_mark in table.items() if "once" in name and verdict(by_mark) != "pass"
    ]
    return 1 if missed else 0


BENCHMARK = Benchmark(
    prog="python -m benchmarks.request_building",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-requests-",
    collect=collect,
    report=render,
    as_json=as_json,
    status=_status,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
