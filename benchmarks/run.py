"""The entry point: `python -m benchmarks.run` measures stayer and the floor and prints a table.

    .venv/bin/python -m benchmarks.run [--runs 10] [--turns 100] [--turn-runs 3] [--warmup 1]
                                       [--no-floor] [--imports | --imports-only]
                                       [--recovery] [--compaction] [--session-turns]
                                       [--repl] [--subagents]
                                       [--json PATH]

Runs are interleaved (stayer, floor, stayer, floor, ...) so a burst of load on a shared machine
hits both alike. Start-up figures are over `--runs` runs; per-turn figures pool every turn of
every `--turn-runs` run (and, to show growth with the history, its first and last tenth); peak
RSS and total wall are per run. Pass/fail compares the median with the target; the p95 column
says whether the tail also makes it. Progress goes to standard error, the table to standard
output, and `--json` writes every raw sample as well. `--imports` adds the `-X importtime`
breakdown of `stayer --version` and of a one-turn `stayer -p` run (see `benchmarks.imports`).
`--recovery` and `--compaction` add the in-process benchmarks of the loop's self-rescue (what
the recovery tree costs a fault-free turn; compaction of a 150k-token history), and
`--session-turns` the harness's time per turn at turns 1, 100 and 1,000 of one Session after a
150k-token history; they run after the rest with their own defaults and tables (see
`benchmarks.recovery`, `benchmarks.compaction`, `benchmarks.session_turns`, which also run
alone with more options). `--repl` adds the REPL's latencies at a terminal (token to screen,
tools and questions shown, interrupts, keystroke echo, idle CPU; see `benchmarks.repl_latency`).
`--subagents` adds ten subagents of five turns at once, against ten one after another, with the
harness's time and memory per child (see `benchmarks.subagents`).
The exit status is 1 when stayer's median misses a target, so a script can notice.
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks import (
    compaction,
    imports,
    machine,
    recovery,
    repl_latency,
    session_turns,
    subagents,
)
from benchmarks.measure import (
    DEFAULT_VENV,
    StartupRun,
    Subject,
    TurnRun,
    async_floor_subject,
    floor_subject,
    measure_startup,
    measure_turns,
    stayer_subject,
    stayer_with_settings_subject,
)
from benchmarks.runner import (
    Benchmark,
    Column,
    option,
    parse_config,
    progress,
    rounds,
    table_lines,
    write_json,
)
from benchmarks.stats import Summary, summarize

MS = 1000.0
MIB = 1024.0


@dataclass(frozen=True, slots=True)
class Target:
    """A goal for one metric (lower is better) and Claude Code's figure measured the same way."""

    limit: float
    claude_code: float


@dataclass(frozen=True, slots=True)
class Row:
    """One metric of the table."""

    metric: str
    unit: str
    stayer: Summary
    floor: Summary | None
    target: Target | None
    async_floor: Summary | None = None

    @property
    def ratio(self) -> float:
        """stayer's median over the floor's."""
        return _ratio(self.stayer, self.floor)

    @property
    def async_ratio(self) -> float:
        """stayer's median over the async floor's."""
        return _ratio(self.stayer, self.async_floor)

    def verdict(self, value: float) -> str:
        """pass / FAIL for `value` against the target, or a dash without one."""
        if self.target is None:
            return "-"
        return "pass" if value < self.target.limit else "FAIL"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "metric": self.metric,
            "unit": self.unit,
            "stayer": self.stayer.as_dict(),
            "floor": self.floor.as_dict() if self.floor else None,
            "ratio_of_medians": None if math.isnan(self.ratio) else self.ratio,
            "async_floor": self.async_floor.as_dict() if self.async_floor else None,
            "ratio_to_async_floor": None if math.isnan(self.async_ratio) else self.async_ratio,
            "target": self.target.limit if self.target else None,
            "claude_code": self.target.claude_code if self.target else None,
            "median_verdict": self.verdict(self.stayer.median),
            "p95_verdict": self.verdict(self.stayer.p95),
        }


def _ratio(over: Summary, under: Summary | None) -> float:
    if under is None or not under.median:
        return math.nan
    return over.median / under.median


@dataclass
class Samples:
    """Everything measured for one subject."""

    startups: list[StartupRun]
    turn_runs: list[TurnRun]


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What to run."""

    runs: int = option(10, "start-up runs per subject", at_least=1)
    turns: int = option(100, "Bash tool turns per run", at_least=1)
    turn_runs: int = option(3, "multi-turn runs per subject", at_least=1)
    warmup: int = option(1, "discarded start-up runs")
    no_floor: bool = option(False, "measure stayer only")
    imports: bool = option(False, "print the import breakdown")
    imports_only: bool = option(False, "only the import breakdown")
    recovery: bool = option(
        False, "also the cost of the recovery machinery, in-process (benchmarks.recovery)"
    )
    compaction: bool = option(
        False, "also the compaction of a 150k-token history (benchmarks.compaction)"
    )
    session_turns: bool = option(
        False,
        "also turns 1, 100 and 1,000 of a session after a 150k-token history "
        "(benchmarks.session_turns)",
    )
    repl: bool = option(False, "also the REPL's latencies at a terminal (benchmarks.repl_latency)")
    subagents: bool = option(
        False, "also ten subagents at once, time and memory per child (benchmarks.subagents)"
    )
    venv: Path = option(
        DEFAULT_VENV,
        "environment whose bin/stayer and bin/python to run (default: .venv, which holds the "
        "dev tools too; a runtime-only one shows what `pip install stayer` users get)",
    )


def _interleaved(
    subjects: Sequence[Subject], runs: int, label: str, measure: Callable[[Subject], Any]
) -> dict[str, list[Any]]:
    """Each subject once per round, always in the same order (the floors after stayer)."""
    results: dict[str, list[Any]] = {subject.name: [] for subject in subjects}
    for each in rounds(subjects, runs, rotate=False):
        for subject in each.arms:
            value = measure(subject)
            results[subject.name].append(value)
            progress(f"  {label} {each.label} {subject.name}: {_describe(value)}")
    return results


def _describe(value: Any) -> str:
    if isinstance(value, TurnRun):
        overhead = summarize(value.overheads_s)
        return (
            f"overhead median {overhead.median * MS:.1f} ms, p95 {overhead.p95 * MS:.1f} ms; "
            f"{value.total_s:.2f} s total; peak RSS {value.peak_rss_kib / MIB:.1f} MiB"
        )
    if isinstance(value, StartupRun):
        return (
            f"{value.first_request_s * MS:.1f} ms to first request, {value.cpu_s * MS:.0f} ms CPU"
        )
    return str(value)


def collect(args: Config, workdir: Path) -> dict[str, Samples]:
    """Warm up, then take every sample (start-up also with a settings file, for stayer)."""
    floors = [] if args.no_floor else [floor_subject(args.venv), async_floor_subject(args.venv)]
    subjects = [stayer_subject(args.venv), *floors]
    with_settings = stayer_with_settings_subject(args.venv, workdir / "user-settings.json")
    starting = [*subjects, with_settings]
    progress(f"warm-up: {args.warmup} discarded run(s) per subject")
    _interleaved(starting, args.warmup, "warm-up", lambda s: measure_startup(s, workdir))
    progress(f"start-up to first request: {args.runs} run(s) per subject")
    startups = _interleaved(starting, args.runs, "start-up", lambda s: measure_startup(s, workdir))
    progress(f"{args.turns} Bash turns: {args.turn_runs} run(s) per subject")
    turns = _interleaved(
        subjects, args.turn_runs, "turns", lambda s: measure_turns(s, args.turns, workdir)
    )
    return {s.name: Samples(startups[s.name], turns.get(s.name, [])) for s in starting}


def _rows(samples: dict[str, Samples], turns: int) -> list[Row]:
    def pick(name: str, take: Callable[[Samples], list[float]]) -> Summary | None:
        return summarize(take(samples[name])) if name in samples else None

    def pooled(field: str, scale: float) -> Callable[[Samples], list[float]]:
        return lambda s: [v * scale for run in s.turn_runs for v in getattr(run, field)]

    tenth = max(1, turns // 10)

    def early_ms(s: Samples) -> list[float]:
        return [v * MS for run in s.turn_runs for v in run.overheads_s[:tenth]]

    def late_ms(s: Samples) -> list[float]:
        return [v * MS for run in s.turn_runs for v in run.overheads_s[-tenth:]]

    def start_ms(s: Samples) -> list[float]:
        return [run.first_request_s * MS for run in s.startups]

    def cpu_per_turn_ms(s: Samples) -> list[float]:
        baseline = summarize([run.cpu_s for run in s.startups]).median
        return [(run.cpu_s - baseline) / turns * MS for run in s.turn_runs]

    def total_s(s: Samples) -> list[float]:
        return [run.total_s for run in s.turn_runs]

    def rss_mib(s: Samples) -> list[float]:
        return [run.peak_rss_kib / MIB for run in s.turn_runs]

    overhead = pooled("overheads_s", MS)
    specs: list[tuple[str, str, Callable[[Samples], list[float]], Target | None]] = [
        ("start-up to first request", "ms", start_ms, Target(200, 420)),
        ("  with a settings file (rules, a hook)", "ms", start_ms, Target(200, 420)),
        ("per-turn overhead (reply end → next req)", "ms", overhead, Target(15, 80)),
        (f"  overhead, first {tenth} turns", "ms", early_ms, None),
        (f"  overhead, last {tenth} turns", "ms", late_ms, None),
        ("per-turn wall (req → next req)", "ms", pooled("turn_walls_s", MS), None),
        ("CPU per turn (process + its bash)", "ms", cpu_per_turn_ms, None),
        (f"whole {turns}-turn run, spawn to exit", "s", total_s, None),
        (f"peak RSS over {turns} turns", "MiB", rss_mib, Target(100, 250)),
    ]
    rows: list[Row] = []
    for metric, unit, take, target in specs:
        subject = "stayer, settings file" if "settings file" in metric else "stayer"
        summary = pick(subject, take)
        assert summary is not None
        floor, async_floor = pick("floor", take), pick("async floor", take)
        rows.append(Row(metric, unit, summary, floor, target, async_floor))
    return rows


def _fmt(value: float | None, unit: str) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2f}" if unit == "s" else f"{value:.1f}"


COLUMNS = (
    Column("metric", 42, "<", gap=""),
    Column("unit", 4, "<"),
    Column("stayer", 8),
    Column("p95", 8),
    Column("floor", 8),
    Column("p95", 8),
    Column("ratio", 6),
    Column("async", 8),
    Column("ratio", 6),
    Column("target", 7),
    Column("Claude", 7),
    Column("median", 6, "<", gap="  "),
    Column("p95", 0, "<", gap="  "),
)


def render_table(rows: Sequence[Row]) -> str:
    """The results as a fixed-width table."""
    cells = []
    for row in rows:
        floor_median = row.floor.median if row.floor else None
        floor_p95 = row.floor.p95 if row.floor else None
        async_median = row.async_floor.median if row.async_floor else None
        cells.append(
            [
                row.metric,
                row.unit,
                _fmt(row.stayer.median, row.unit),
                _fmt(row.stayer.p95, row.unit),
                _fmt(floor_median, row.unit),
                _fmt(floor_p95, row.unit),
                f"{_fmt(row.ratio, 'x'):>5}x",
                _fmt(async_median, row.unit),
                f"{_fmt(row.async_ratio, 'x'):>5}x",
                f"<{row.target.limit:g}" if row.target else "-",
                f"{row.target.claude_code:g}" if row.target else "-",
                row.verdict(row.stayer.median),
                row.verdict(row.stayer.p95),
            ]
        )
    lines = table_lines(COLUMNS, cells)
    lines.append(
        "medians and nearest-rank p95; ratio = stayer median / floor median (then over the "
        "async floor's: the same loop on asyncio and httpx's async client); "
        "Claude = Claude Code measured the same way; pass/FAIL of the median and of the p95"
    )
    return "\n".join(lines)


def _samples_json(samples: dict[str, Samples]) -> dict[str, Any]:
    return {
        name: {
            "startups": [
                {"first_request_s": run.first_request_s, "cpu_s": run.cpu_s} for run in s.startups
            ],
            "turn_runs": [
                {
                    "overheads_s": list(run.overheads_s),
                    "turn_walls_s": list(run.turn_walls_s),
                    "total_s": run.total_s,
                    "peak_rss_kib": run.peak_rss_kib,
                    "ru_maxrss_kib": run.ru_maxrss_kib,
                    "cpu_s": run.cpu_s,
                }
                for run in s.turn_runs
            ],
        }
        for name, s in samples.items()
    }


def _venv_found(config: Config) -> str | None:
    stayer = config.venv.absolute() / "bin" / "stayer"
    return None if stayer.exists() else f"{stayer} does not exist"


IN_PROCESS: tuple[tuple[str, str, Benchmark[Any, Any]], ...] = (
    ("recovery", "recovery machinery, in-process", recovery.BENCHMARK),
    ("compaction", "compaction", compaction.BENCHMARK),
    ("session_turns", "turns deep into a long session", session_turns.BENCHMARK),
    ("repl", "the REPL at a terminal", repl_latency.BENCHMARK),
    ("subagents", "subagents side by side", subagents.BENCHMARK),
)
"""The benchmarks `--recovery`, `--compaction`, `--session-turns`, `--repl` and `--subagents`
add after the main table (`--repl` runs stayer processes of its own, and `--subagents` its
memory probes; the others run in this process)."""


def _in_process(args: Config) -> dict[str, Any]:
    """The added benchmarks asked for, with their default settings (and `--turns` for the
    recovery machinery's), each table printed after the main one; their JSON parts."""
    parts: dict[str, Any] = {}
    for name, what, benchmark in IN_PROCESS:
        if not getattr(args, name):
            continue
        progress(f"{what} ({benchmark.prog.removeprefix('python -m ')})")
        config = recovery.Config(turns=args.turns) if name == "recovery" else benchmark.config()
        found = benchmark.measure(config)
        print()
        print(benchmark.report(found, config))
        parts[name] = benchmark.as_json(found, config)
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print, optionally write JSON; exit status 1 when stayer misses a target."""
    args, json_path = parse_config(
        Config,
        "python -m benchmarks.run",
        __doc__.split("\n", 1)[0],
        sys.argv[1:] if argv is None else argv,
        _venv_found,
    )
    args = replace(args, venv=args.venv.absolute())
    before = machine.describe()
    with tempfile.TemporaryDirectory(prefix="stayer-bench-") as tmp:
        workdir = Path(tmp)
        reports = (
            imports.startup_reports(workdir, args.venv) if args.imports or args.imports_only else []
        )
        if args.imports_only:
            print("\n\n".join(imports.render(report) for report in reports))
            return 0
        samples = collect(args, workdir)
    rows = _rows(samples, args.turns)
    print(render_table(rows))
    for report in reports:
        print()
        print(imports.render(report))
    in_process = _in_process(args)
    if json_path is not None:
        document = {
            "config": asdict(args),
            "summary": [row.as_dict() for row in rows],
            "samples": _samples_json(samples),
            "imports": [
                {"label": r.label, "total_us": r.total_us, "packages": r.packages} for r in reports
            ],
            **in_process,
        }
        write_json(json_path, before, document)
    missed = any(row.verdict(row.stayer.median) == "FAIL" for row in rows)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
