"""The entry point: `python -m benchmarks.run` measures stayer and the floor and prints a table.

    .venv/bin/python -m benchmarks.run [--runs 10] [--turns 100] [--turn-runs 3] [--warmup 1]
                                       [--no-floor] [--imports | --imports-only]
                                       [--recovery] [--compaction] [--session-turns]
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
alone with more options).
The exit status is 1 when stayer's median misses a target, so a script can notice.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import compaction, imports, machine, recovery, session_turns
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


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _interleaved(
    subjects: Sequence[Subject], runs: int, label: str, measure: Callable[[Subject], Any]
) -> dict[str, list[Any]]:
    results: dict[str, list[Any]] = {subject.name: [] for subject in subjects}
    for index in range(runs):
        for subject in subjects:
            value = measure(subject)
            results[subject.name].append(value)
            _progress(f"  {label} {index + 1}/{runs} {subject.name}: {_describe(value)}")
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


def collect(args: argparse.Namespace, workdir: Path) -> dict[str, Samples]:
    """Warm up, then take every sample (start-up also with a settings file, for stayer)."""
    floors = [] if args.no_floor else [floor_subject(args.venv), async_floor_subject(args.venv)]
    subjects = [stayer_subject(args.venv), *floors]
    with_settings = stayer_with_settings_subject(args.venv, workdir / "user-settings.json")
    starting = [*subjects, with_settings]
    _progress(f"warm-up: {args.warmup} discarded run(s) per subject")
    _interleaved(starting, args.warmup, "warm-up", lambda s: measure_startup(s, workdir))
    _progress(f"start-up to first request: {args.runs} run(s) per subject")
    startups = _interleaved(starting, args.runs, "start-up", lambda s: measure_startup(s, workdir))
    _progress(f"{args.turns} Bash turns: {args.turn_runs} run(s) per subject")
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


def render_table(rows: Sequence[Row]) -> str:
    """The results as a fixed-width table."""
    header = (
        f"{'metric':<42} {'unit':<4} {'stayer':>8} {'p95':>8} {'floor':>8} {'p95':>8} "
        f"{'ratio':>6} {'async':>8} {'ratio':>6} {'target':>7} {'Claude':>7}  median  p95"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        floor_median = row.floor.median if row.floor else None
        floor_p95 = row.floor.p95 if row.floor else None
        async_median = row.async_floor.median if row.async_floor else None
        target = f"<{row.target.limit:g}" if row.target else "-"
        claude = f"{row.target.claude_code:g}" if row.target else "-"
        lines.append(
            f"{row.metric:<42} {row.unit:<4} {_fmt(row.stayer.median, row.unit):>8} "
            f"{_fmt(row.stayer.p95, row.unit):>8} {_fmt(floor_median, row.unit):>8} "
            f"{_fmt(floor_p95, row.unit):>8} {_fmt(row.ratio, 'x'):>5}x "
            f"{_fmt(async_median, row.unit):>8} {_fmt(row.async_ratio, 'x'):>5}x {target:>7} "
            f"{claude:>7}  {row.verdict(row.stayer.median):<6}  {row.verdict(row.stayer.p95)}"
        )
    lines.append(
        "medians and nearest-rank p95; ratio = stayer median / floor median (then over the "
        "async floor's: the same loop on asyncio and httpx's async client); "
        "Claude = Claude Code measured the same way; pass/FAIL of the median and of the p95"
    )
    return "\n".join(lines)


def _write_json(path: Path, args: argparse.Namespace, before: dict[str, Any], **parts: Any) -> None:
    document = {
        "machine_before": before,
        "machine_after": machine.describe(),
        "config": {k: v for k, v in vars(args).items() if k != "json"},
        **parts,
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


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


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--runs", type=int, default=10, help="start-up runs per subject")
    parser.add_argument("--turns", type=int, default=100, help="Bash tool turns per run")
    parser.add_argument("--turn-runs", type=int, default=3, help="multi-turn runs per subject")
    parser.add_argument("--warmup", type=int, default=1, help="discarded start-up runs")
    parser.add_argument("--no-floor", action="store_true", help="measure stayer only")
    parser.add_argument("--imports", action="store_true", help="print the import breakdown")
    parser.add_argument("--imports-only", action="store_true", help="only the import breakdown")
    parser.add_argument(
        "--recovery",
        action="store_true",
        help="also the cost of the recovery machinery, in-process (benchmarks.recovery)",
    )
    parser.add_argument(
        "--compaction",
        action="store_true",
        help="also the compaction of a 150k-token history (benchmarks.compaction)",
    )
    parser.add_argument(
        "--session-turns",
        action="store_true",
        help="also turns 1, 100 and 1,000 of a session after a 150k-token history "
        "(benchmarks.session_turns)",
    )
    parser.add_argument("--json", type=Path, help="write every sample and summary here")
    parser.add_argument(
        "--venv",
        type=Path,
        default=DEFAULT_VENV,
        help="environment whose bin/stayer and bin/python to run (default: .venv, which holds "
        "the dev tools too; a runtime-only one shows what `pip install stayer` users get)",
    )
    args = parser.parse_args(list(argv))
    args.venv = args.venv.absolute()
    if not (args.venv / "bin" / "stayer").exists():
        parser.error(f"{args.venv}/bin/stayer does not exist")
    for name in ("runs", "turns", "turn_runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def _in_process(args: argparse.Namespace) -> dict[str, Any]:
    """The in-process benchmarks asked for, with their default settings (and `--turns`), each
    table printed after the main one; their JSON parts."""
    parts: dict[str, Any] = {}
    if args.recovery:
        _progress("recovery machinery, in-process (benchmarks.recovery)")
        config = recovery.Config(turns=args.turns)
        found = recovery.BENCHMARK.measure(config)
        print()
        print(recovery.BENCHMARK.report(found, config))
        parts["recovery"] = recovery.BENCHMARK.as_json(found, config)
    if args.compaction:
        _progress("compaction (benchmarks.compaction)")
        settings = compaction.Config()
        measured = compaction.measure(settings)
        print()
        print(compaction.render(compaction.rows(measured), measured, settings))
        parts["compaction"] = compaction.as_json(measured, settings)
    if args.session_turns:
        _progress("turns deep into a long session (benchmarks.session_turns)")
        turns_config = session_turns.Config()
        taken = session_turns.measure(turns_config)
        print()
        print(session_turns.render(taken, turns_config))
        parts["session_turns"] = session_turns.as_json(taken, turns_config)
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print, optionally write JSON; exit status 1 when stayer misses a target."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
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
    if args.json is not None:
        _write_json(
            args.json,
            args,
            before,
            summary=[row.as_dict() for row in rows],
            samples=_samples_json(samples),
            imports=[
                {"label": r.label, "total_us": r.total_us, "packages": r.packages} for r in reports
            ],
            **in_process,
        )
        _progress(f"wrote {args.json}")
    missed = any(row.verdict(row.stayer.median) == "FAIL" for row in rows)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
