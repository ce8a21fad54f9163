"""Subagents side by side: ten children of five cheap turns each, and what each child costs the
harness beyond the model's own time (targets: under 20 ms and under 5 MiB per child).

    .venv/bin/python -m benchmarks.subagents [--runs 5] [--children 10] [--warmup 1]
                                             [--json PATH]

Every run is one `stayer.Session` with a CLI run's options (the built-in tools, the real system
prompt, bypass permissions, the transcript and the children's transcripts written under a
throwaway `STAYER_CONFIG_DIR`) talking over real HTTP to the instant fake Anthropic server of
`benchmarks.timed_server`, which clocks every request from its arrival to the last byte of its
answer. The server tells the conversations apart by the first user message: the parent's
first answer makes N `Agent` calls in one message (general-purpose, `run_in_background`
false); each child reads a 12-line file four times (four Read turns) and then answers, five
model calls in all; the parent then answers. Four kinds of run, interleaved round by round:

* none: the parent answers at once (one model call, no child);
* same calls: the parent reads the file six times, then answers (seven calls, no child);
* one: the parent starts one child (2 + 5 calls); ten of these in a row are "10 x one";
* N at once: the parent starts `--children` children in one message (2 + 5N calls).

A run's wall time goes from opening the Session to closing it. Its model time is the time the
server was busy answering it (the union of its requests' arrival-to-last-byte spans, so calls
answered side by side count once), and its harness time is wall less model time: start-up,
consuming the streams, the Agent tool, deriving each child, its Read calls, the transcripts,
building every request, and HTTP on the client's side.

Measured, with medians and nearest-rank p95 over `--runs` rounds (after `--warmup` discarded):

* wall of N at once, against the sum of N one-child runs in a row, and their ratio;
* overhead per child (target < 20 ms): a one-child run's harness time less the no-child run's
  of the same round, pooled over the N one-child runs of every round: what stayer spends on
  one child, its five turns and its Read calls included, beyond the model's time. The same
  figure for N at once, (harness of the N-child run - the no-child run's) / N, is shown too;
* the overhead split: the same figure for a run that makes as many model calls (seven) in one
  conversation with no child, the parent reading the file six times (what six more turns cost
  anyway), and the rest, a one-child run's harness time less that run's: what being a child
  adds (the Agent call, deriving the child session, its transcript, its start and end);
* memory per child (target < 5 MiB): the peak RSS (Linux's `VmHWM`) of a fresh interpreter
  that runs the N-child session, less that of one running the no-child session, over N (the
  server stays in this process, so only stayer's own memory is counted).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.model_server import RecordedRequest, Responder
from tests.fakes.sse import Response, ToolCall, reply

from benchmarks.measure import REPO
from benchmarks.runner import Benchmark, Column, option, progress, rounds, table_lines
from benchmarks.stats import Summary, summarize
from benchmarks.timed_server import TimedServer, Timing
from stayer.events import Event, Finished, SubagentEvent, Terminal, ToolCallFinished
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.tools.names import AGENT, READ

MS = 1e3
MIB = 1024.0
TARGET_OVERHEAD_MS = 20.0
TARGET_MEMORY_MIB = 5.0
READS = 4
"""Read turns per child; with its answer, five model calls."""
CHILD_CALLS = READS + 1
SAME_CALLS_READS = CHILD_CALLS + 1
"""The parent's Reads in the run that makes as many model calls as a one-child run (seven) in
one conversation, with no child."""
SETTLE_POLLS = 2000
"""How many times, a millisecond apart, to look for the server's note of the end of the last
answer a run read (two seconds at least)."""
MODEL = "claude-sonnet-4-5"
PARENT_MARK = "BENCH-PARENT"
CHILD_MARK = "BENCH-CHILD-"
SAMPLE_NAME = "sample.py"
SAMPLE_FILE = "".join(f"LIMIT_{n} = {n * 64}\n" for n in range(12))
CHILD_REPORT = "The limits run from 0 to 704."
PARENT_ANSWER = "All the agents reported."
PROBE = "import sys; from benchmarks.subagents import probe; sys.exit(probe(sys.argv[1:]))"
"""The memory probe's program: one session in a fresh interpreter (see `probe`)."""


class BenchmarkError(RuntimeError):
    """A run did not behave (a failed call, a missing child, the wrong number of calls)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    runs: int = option(
        5, "rounds to time (each: no child, N one-child runs, N at once)", at_least=1
    )
    children: int = option(10, "subagents started in one message", at_least=1)
    warmup: int = option(1, "discarded rounds first")


# --- the model's script ----------------------------------------------------------------------


def _first_text(request: RecordedRequest) -> str:
    messages = request.messages
    return json.dumps(messages[0]) if messages else ""


def _turn(request: RecordedRequest) -> int:
    """How many answers the conversation holds already: the index of this call in it."""
    return sum(1 for m in request.messages if isinstance(m, dict) and m.get("role") == "assistant")


def script(children: int, sample: Path, *, parent_reads: int = 0) -> Responder:
    """The model: the parent reads `sample` `parent_reads` times, or starts `children` agents,
    then answers; each agent reads `sample` `READS` times, then reports. Conversations are told
    apart by their first user message; the call within one by the answers it holds."""

    def read(call_id: str) -> Response:
        return reply(ToolCall(call_id, READ, {"file_path": str(sample)}), stop_reason="tool_use")

    def respond(request: RecordedRequest) -> Response:
        first, turn = _first_text(request), _turn(request)
        child = re.search(CHILD_MARK + r"(\d+)", first)
        if child is not None:
            return read(f"toolu_c{child.group(1)}_{turn}") if turn < READS else reply(CHILD_REPORT)
        if PARENT_MARK not in first:
            raise BenchmarkError(f"a request from no known conversation: {first[:200]}")
        if turn < parent_reads:
            return read(f"toolu_parent_{turn}")
        if turn == 0 and children:
            return reply(*(_agent_call(index) for index in range(children)))
        return reply(PARENT_ANSWER)

    return respond


def _agent_call(index: int) -> ToolCall:
    task = (
        f"{CHILD_MARK}{index}: read {SAMPLE_NAME} {READS} times and say what its limits run from."
    )
    arguments = {
        "description": f"read the limits {index}",
        "prompt": task,
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    return ToolCall(f"toolu_agent_{index:02d}", AGENT, arguments)


def expected_calls(children: int, parent_reads: int = 0) -> int:
    """Model calls a run with `children` children (or `parent_reads` Reads of its own) makes."""
    return 1 + parent_reads if children == 0 else 2 + CHILD_CALLS * children


# --- one run ---------------------------------------------------------------------------------


def _options(server_env: dict[str, str], workdir: Path) -> QueryOptions:
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "STAYER_CONFIG_DIR": str(workdir / "config"),
        **server_env,
    }
    return QueryOptions(model=MODEL, cwd=workdir, permission_mode="bypassPermissions", env=env)


def check(events: Sequence[Event], children: int) -> None:
    """Raise `BenchmarkError` unless the run completed with every child and call as scripted."""
    problems: list[str] = []
    finished = events[-1] if events else None
    if not isinstance(finished, Finished) or finished.terminal is not Terminal.COMPLETED:
        problems.append(f"the run ended with {finished}")
    agents = [e for e in events if isinstance(e, ToolCallFinished) and e.name == AGENT]
    nested = [e.event for e in events if isinstance(e, SubagentEvent)]
    reads = [e for e in nested if isinstance(e, ToolCallFinished) and e.name == READ]
    ends = [e for e in nested if isinstance(e, Finished) and e.terminal is Terminal.COMPLETED]
    calls = [e for e in (*events, *nested) if isinstance(e, ToolCallFinished)]
    failed = [e.result.text[:200] for e in calls if e.status != "completed"]
    if len(agents) != children or len(ends) != children or failed:
        problems.append(
            f"{len(agents)} Agent calls and {len(ends)} finished children for {children}; "
            f"failures: {failed[:1]}"
        )
    if len(reads) != READS * children:
        problems.append(f"{len(reads)} Reads by the children, expected {READS * children}")
    if problems:
        raise BenchmarkError("; ".join(problems))


async def session_run(server_env: dict[str, str], children: int, workdir: Path) -> float:
    """One checked session against the server `server_env` points at; its wall seconds."""
    began = time.perf_counter()
    async with Session(_options(server_env, workdir)) as session:
        events = [event async for event in session.submit(f"{PARENT_MARK}: start the agents.")]
    wall = time.perf_counter() - began
    check(events, children)
    return wall


def busy(timings: Sequence[Timing]) -> float:
    """Seconds the server spent answering: the union of the requests' spans."""
    total, reach = 0.0, -float("inf")
    for timing in sorted(timings, key=lambda t: t.arrived):
        start = max(timing.arrived, reach)
        if timing.finished > start:
            total += timing.finished - start
        reach = max(reach, timing.finished)
    return total


async def settled(server: TimedServer, calls: int) -> list[Timing]:
    """The server's timings once all `calls` are in; raises `BenchmarkError` on any other count.

    The server notes a call's end on its own thread after the last byte went out, so the
    client can have read the last answer and closed the session a moment before; the wait is
    bounded, and it is not timed."""
    for _ in range(SETTLE_POLLS):  # the server thread has no event to await
        if len(server.timings) >= calls:
            break
        await asyncio.sleep(0.001)
    timings = server.timings
    if len(timings) != calls:
        raise BenchmarkError(f"{len(timings)} model calls, expected {calls}")
    return timings


@dataclass(frozen=True, slots=True)
class Run:
    """One timed session: its children, wall and model seconds, and model calls."""

    children: int
    wall_s: float
    model_s: float
    calls: int

    @property
    def harness_s(self) -> float:
        """Wall time less the model's."""
        return self.wall_s - self.model_s


async def timed_run(children: int, workdir: Path, *, parent_reads: int = 0) -> Run:
    """A session with `children` children (or `parent_reads` Reads by the parent) against a
    fresh clocked server; checked."""
    with TimedServer() as server:
        server.respond_with(script(children, workdir / SAMPLE_NAME, parent_reads=parent_reads))
        wall = await session_run(server.env("anthropic"), children, workdir)
        timings = await settled(server, expected_calls(children, parent_reads))
    return Run(children, wall, busy(timings), len(timings))


# --- memory, in a fresh interpreter ----------------------------------------------------------


def probe(argv: Sequence[str]) -> int:
    """The memory probe's body: `URL CHILDREN WORKDIR`; one session, then its peak RSS (KiB)
    as a JSON line on standard output."""
    url, children, workdir = argv[0], int(argv[1]), Path(argv[2])
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"}
    asyncio.run(session_run(env, children, workdir))
    print(json.dumps({"peak_rss_kib": own_peak_rss_kib()}))
    return 0


def own_peak_rss_kib() -> int:
    """This process's peak RSS in KiB: Linux's `VmHWM`, the high-water mark of its own memory
    since its `exec`. Not `ru_maxrss`, which Linux carries over `exec` from the forked copy of
    the parent, so a probe spawned by a larger benchmark process would read the parent's size."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def peak_rss_kib(children: int, workdir: Path) -> int:
    """The peak RSS of a fresh interpreter running one session with `children` children."""
    with TimedServer() as server:
        server.respond_with(script(children, workdir / SAMPLE_NAME))
        spawned = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            PROBE,
            server.url,
            str(children),
            str(workdir),
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await spawned.communicate()
        if spawned.returncode != 0:
            tail = err.decode(errors="replace")[-1500:]
            raise BenchmarkError(f"the memory probe failed ({spawned.returncode}): {tail}")
        await settled(server, expected_calls(children))
    found = json.loads(out.decode().strip().splitlines()[-1])
    return int(found["peak_rss_kib"])


# --- collecting ------------------------------------------------------------------------------


@dataclass
class Round:
    """One round's runs and probes."""

    none: Run
    same_calls: Run
    ones: list[Run]
    many: Run
    rss_none_kib: int
    rss_many_kib: int


@dataclass
class Samples:
    """Every round kept."""

    rounds: list[Round] = field(default_factory=list[Round])


async def _arm(arm: str, config: Config, workdir: Path, found: dict[str, Any]) -> None:
    if arm == "none":
        found["none"] = await timed_run(0, workdir)
        found["rss_none_kib"] = await peak_rss_kib(0, workdir)
        found["same_calls"] = await timed_run(0, workdir, parent_reads=SAME_CALLS_READS)
    elif arm == "ones":
        found["ones"] = [await timed_run(1, workdir) for _ in range(config.children)]
    else:
        found["many"] = await timed_run(config.children, workdir)
        found["rss_many_kib"] = await peak_rss_kib(config.children, workdir)


async def collect(config: Config, workdir: Path) -> Samples:
    """The rounds, each running its three arms in a rotating order."""
    (workdir / SAMPLE_NAME).write_text(SAMPLE_FILE, encoding="utf-8")
    samples = Samples()
    for each in rounds(("none", "ones", "many"), config.runs, config.warmup):
        found: dict[str, Any] = {}
        for arm in each.arms:
            await _arm(arm, config, workdir, found)
        taken = Round(**found)
        figures = _figures(taken, config.children)
        progress(
            f"  round {each.label}: {config.children} at once {taken.many.wall_s * MS:.0f} ms, "
            f"{config.children} x one {sum(r.wall_s for r in taken.ones) * MS:.0f} ms; "
            f"overhead per child {summarize(figures['overhead_ms']).median:.1f} ms; "
            f"memory per child {figures['memory_mib'][0]:.2f} MiB"
        )
        if each.kept:
            samples.rounds.append(taken)
    return samples


# --- the report ------------------------------------------------------------------------------


def _figures(taken: Round, children: int) -> dict[str, list[float]]:
    """One round's figures, each a list (the one-child overheads are one per run)."""
    base = taken.none.harness_s
    sequential = sum(run.wall_s for run in taken.ones)
    return {
        "none_wall_ms": [taken.none.wall_s * MS],
        "one_wall_ms": [run.wall_s * MS for run in taken.ones],
        "many_wall_ms": [taken.many.wall_s * MS],
        "sequential_wall_ms": [sequential * MS],
        "ratio": [taken.many.wall_s / sequential],
        "overhead_ms": [(run.harness_s - base) * MS for run in taken.ones],
        "turns_ms": [(taken.same_calls.harness_s - base) * MS],
        "being_a_child_ms": [
            (run.harness_s - taken.same_calls.harness_s) * MS for run in taken.ones
        ],
        "overhead_at_once_ms": [(taken.many.harness_s - base) / children * MS],
        "memory_mib": [(taken.rss_many_kib - taken.rss_none_kib) / children / MIB],
    }


def summaries(samples: Samples, config: Config) -> dict[str, Summary]:
    """Each figure's summary, pooled over the rounds."""
    pooled: dict[str, list[float]] = {}
    for taken in samples.rounds:
        for name, values in _figures(taken, config.children).items():
            pooled.setdefault(name, []).extend(values)
    return {name: summarize(values) for name, values in pooled.items()}


def verdicts(table: dict[str, Summary]) -> dict[str, str]:
    """PASS / FAIL of each target, on the median."""
    return {
        "overhead_ms": "PASS" if table["overhead_ms"].median < TARGET_OVERHEAD_MS else "FAIL",
        "memory_mib": "PASS" if table["memory_mib"].median < TARGET_MEMORY_MIB else "FAIL",
    }


COLUMNS = (
    Column("figure", 44, "<", gap=""),
    Column("unit", 4, "<"),
    Column("median", 9),
    Column("p95", 9),
    Column("target", 7),
    Column("verdict", 0, "<", gap="  "),
)


def render(samples: Samples, config: Config) -> str:
    """The table of figures, with the targets' verdicts."""
    table, judged, n = (
        summaries(samples, config),
        verdicts(summaries(samples, config)),
        config.children,
    )
    rows = [
        ("run with no child", "ms", "none_wall_ms", None),
        ("run with one child", "ms", "one_wall_ms", None),
        (f"{n} one-child runs in a row (sum)", "ms", "sequential_wall_ms", None),
        (f"run with {n} children at once", "ms", "many_wall_ms", None),
        (f"ratio, {n} at once / {n} x one", "x", "ratio", None),
        ("overhead per child (one child)", "ms", "overhead_ms", TARGET_OVERHEAD_MS),
        (f"  of which {SAME_CALLS_READS} more turns (no child)", "ms", "turns_ms", None),
        ("  of which being a child (the rest)", "ms", "being_a_child_ms", None),
        (f"overhead per child ({n} at once)", "ms", "overhead_at_once_ms", None),
        (f"memory per child (peak RSS, {n} vs none)", "MiB", "memory_mib", TARGET_MEMORY_MIB),
    ]
    cells = [
        [
            label,
            unit,
            f"{table[key].median:.2f}",
            f"{table[key].p95:.2f}",
            "-" if target is None else f"<{target:g}",
            judged.get(key, "-"),
        ]
        for label, unit, key, target in rows
    ]
    lines = [
        f"{n} subagents of {CHILD_CALLS} calls each ({READS} Reads, then a report), real Session "
        f"over HTTP to the instant fake server, {config.runs} rounds",
        *table_lines(COLUMNS, cells),
        "overhead = harness time (wall less the server's busy time) over the no-child run's; "
        "medians and nearest-rank p95; verdicts on the median",
    ]
    return "\n".join(lines)


def as_json(samples: Samples, config: Config) -> dict[str, Any]:
    """The summary, the verdicts and every raw run."""
    table = summaries(samples, config)
    return {
        "config": asdict(config),
        "summary": {name: summary.as_dict() for name, summary in table.items()},
        "verdicts": verdicts(table),
        "rounds": [asdict(taken) for taken in samples.rounds],
    }


def _status(samples: Samples, config: Config) -> int:
    return 0 if all(v == "PASS" for v in verdicts(summaries(samples, config)).values()) else 1


BENCHMARK = Benchmark(
    prog="python -m benchmarks.subagents",
    doc=__doc__,
    config=Config,
    workdir_prefix="stayer-bench-subagents-",
    collect=collect,
    report=render,
    as_json=as_json,
    status=_status,
)

if __name__ == "__main__":
    sys.exit(BENCHMARK.main())
