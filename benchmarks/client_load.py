"""Our model client under load: does time to first byte stay flat with hundreds of streams?

    .venv/bin/python -m benchmarks.client_load [--levels 1,32,128,512] [--rounds 5]
                                               [--delay-ms 150] [--json PATH]

NeMo Gym's httpx client stalled for 40 minutes at 16k concurrent requests (httpcore's pool
scans its queue for every request, so queued requests cost O(n^2)). A batch shares one client
per provider among all its sessions, so this measures ours: at each level, that many streams at
once through one `AnthropicProvider` (each `--rounds` calls one after another, as a session's
turns are), against `benchmarks.sse_server` (a bare endpoint in its own process that answers
`--delay-ms` after each request arrives). Per call, time to first byte is from asking the
provider for the stream to its first event; what the client adds is that less the delay.

Three arms: the provider as a batch gets it (its own clients, `stayer.providers._clients`:
a small pool per 16 streams), the provider given one httpx client with httpx's default pool
(100 connections, 20 kept alive: what every provider had before), and one whose pool has no
limits.
Reported per level: the added time's median, p95 and maximum, calls a second, the client's
CPU per call (this process's), and how many connections the server accepted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.runner import Benchmark, Column, option, progress, table_lines
from benchmarks.stats import Summary, summarize
from stayer.messages import UserMessage
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import ModelRequest

MS = 1e3
ARMS = ("stayer's clients", "one httpx pool", "one pool, no limits")
REQUEST = ModelRequest(
    model="claude-sonnet-4-5", system="Answer briefly.", messages=(UserMessage.of_text("hi"),)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    levels: str = option("1,32,128,512", "concurrent streams, comma-separated")
    rounds: int = option(5, "calls each stream makes one after another", at_least=1)
    delay_ms: float = option(150.0, "the server's delay before each answer", at_least=0)

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.levels.split(",") if part.strip())


def _check(config: Config) -> str | None:
    try:
        counts = config.counts
    except ValueError:
        return "--levels must be whole numbers separated by commas, like 1,128,512"
    return None if counts and min(counts) >= 1 else "--levels needs levels of 1 or more"


@dataclass(frozen=True, slots=True)
class Level:
    """One arm at one level: the added first-byte times, the wall time, CPU, connections."""

    arm: str
    streams: int
    added_s: tuple[float, ...]
    wall_s: float
    cpu_s: float
    connections: int

    @property
    def summary(self) -> Summary:
        return summarize(self.added_s)


@contextmanager
def bare_server(delay_ms: float) -> Iterator[tuple[str, dict[str, Any]]]:
    """`benchmarks.sse_server` in its own process: its base URL, and its counts once closed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.sse_server", "--delay-ms", str(delay_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    counts: dict[str, Any] = {}
    try:
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the bare server did not start: {line!r}")
        yield f"http://127.0.0.1:{line.split()[1]}", counts
    finally:
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=30)
        for done in rest.splitlines():
            if done.startswith("DONE "):
                counts.update(json.loads(done[5:]))


def _provider(arm: str, url: str) -> AnthropicProvider:
    """The provider as a batch makes it, or given one httpx client (which it uses alone)."""
    if arm == ARMS[0]:
        return AnthropicProvider(api_key="k", base_url=url)
    limits = (
        httpx.Limits(max_connections=None, max_keepalive_connections=None)
        if arm == ARMS[2]
        else httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's default
    )
    client = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(600.0, connect=10.0))
    return AnthropicProvider(api_key="k", base_url=url, client=client)


async def _stream(provider: AnthropicProvider, rounds: int, delay_s: float) -> list[float]:
    added: list[float] = []
    for _ in range(rounds):
        asked = time.perf_counter()
        first = None
        async for _event in provider.stream(REQUEST):
            if first is None:
                first = time.perf_counter()
        added.append((first or time.perf_counter()) - asked - delay_s)
    return added


async def one_level(arm: str, streams: int, config: Config) -> Level:
    with bare_server(config.delay_ms) as (url, counts):
        provider = _provider(arm, url)
        await _stream(provider, 1, config.delay_ms / MS)  # the connection and imports, untimed
        cpu, began = time.process_time(), time.perf_counter()
        done = await asyncio.gather(
            *(_stream(provider, config.rounds, config.delay_ms / MS) for _ in range(streams))
        )
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
        await provider.aclose()
    added = tuple(value for one in done for value in one)
    return Level(arm, streams, added, wall, cpu, int(counts.get("connections", 0)))


async def collect(config: Config, workdir: Path) -> list[Level]:
    found: list[Level] = []
    for streams in config.counts:
        for arm in ARMS:
            progress(f"{arm}: {streams} streams ...")
            found.append(await one_level(arm, streams, config))
    return found


COLUMNS = (
    Column("client", 19, "<"),
    Column("streams", 8),
    Column("added median", 13),
    Column("p95", 9),
    Column("max", 9),
    Column("calls/s", 8),
    Column("CPU/call", 9),
    Column("connections", 12),
)


def report(levels: list[Level], config: Config) -> str:
    cells = [
        (
            level.arm,
            str(level.streams),
            f"{level.summary.median * MS:.1f} ms",
            f"{level.summary.p95 * MS:.1f} ms",
            f"{level.summary.maximum * MS:.1f} ms",
            f"{len(level.added_s) / level.wall_s:.0f}",
            f"{level.cpu_s / len(level.added_s) * MS:.2f} ms",
            str(level.connections),
        )
        for level in levels
    ]
    head = (
        f"time to first byte beyond the server's {config.delay_ms:.0f} ms, "
        f"{config.rounds} calls a stream"
    )
    return "\n".join([head, *table_lines(COLUMNS, cells)])


def as_json(levels: list[Level], config: Config) -> dict[str, Any]:
    return {
        "delay_ms": config.delay_ms,
        "rounds": config.rounds,
        "levels": [
            {
                "arm": level.arm,
                "streams": level.streams,
                "added": level.summary.as_dict(),
                "wall_s": level.wall_s,
                "cpu_s": level.cpu_s,
                "connections": level.connections,
            }
            for level in levels
        ],
    }


BENCHMARK = Benchmark(
    prog="python -m benchmarks.client_load",
    doc=__doc__ or "",
    config=Config,
    workdir_prefix="stayer-bench-client-",
    collect=collect,
    report=report,
    as_json=as_json,
    check=_check,
)


def main(argv: Sequence[str] | None = None) -> int:
    return BENCHMARK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
