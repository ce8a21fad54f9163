"""While a batch runs, a terminal shows one live line (done, running, failed, cost, pace, ETA);
a log gets one plain line per finished task; standard output gets nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from stayer.batch.listener import BatchListener
from stayer.batch.results import facts_of_result
from stayer.ui.batch_view import BatchView, stderr_view
from tests.ui.batch_results import result

RESULTS = Path("/runs/results.jsonl")


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def terminal(width: int = 140) -> Console:
    return Console(record=True, force_terminal=True, width=width, file=io.StringIO())


def shown(view: BatchView, console: Console) -> str:
    """The live line as drawn now (the frames drawn since the last look are dropped)."""
    console.export_text(clear=True)
    view.refresh()
    return console.export_text(clear=True)


def test_the_live_line_counts_tasks_as_they_start_and_finish() -> None:
    clock, console = Clock(), terminal()
    view = BatchView(console, concurrency=2, clock=clock, auto_refresh=False)
    listener: BatchListener = view
    listener.planned(total=5, skipped=1)
    for task_id in ("a", "b", "c"):
        listener.started(task_id)
    assert shown(view, console) == (
        "⠋ batch (1 done earlier) ━━━━━━━━━━━━━━━━━━━━━━━━ "
        "0/4 done · 3 running · 0 failed · $0.0000 · – tasks/min · ETA –"
    )

    clock.now += 30
    listener.finished(result("a", cost=0.25, duration=20))
    clock.now += 10
    line = shown(view, console)
    # 3 tasks left at 20 s each on 2 lanes: 30 s from the finish, 10 s of them gone by.
    assert line.endswith("1/4 done · 2 running · 0 failed · $0.2500 · 1.5 tasks/min · ETA 20s"), (
        line
    )

    console.export_text(clear=True)
    listener.finished(result("b", check=False, cost=0.5, duration=40))
    listener.finished(result("c", error=("model", "refused"), cost=0, duration=0))
    drawn = console.export_text(clear=True)  # each a line above the live line, drawn again
    assert drawn.count("FAILED") == 2, drawn
    assert "[2/4] b: FAILED completed, check failed (exit 1) · 3 turns · $0.5000 · 40s\n" in drawn
    assert (
        "[3/4] c: FAILED infrastructure error at model: refused · 0 turns · $0.0000 · 0.0s\n"
        in (drawn)
    )
    assert shown(view, console).endswith(
        "3/4 done · 0 running · 2 failed · $0.7500 · 4.5 tasks/min · ETA 20s"
    )
    view.close()


def test_the_eta_shares_what_is_left_among_the_lanes_and_counts_down() -> None:
    clock, console = Clock(), terminal()
    one_lane = BatchView(console, concurrency=1, clock=clock, auto_refresh=False)
    four_lanes = BatchView(terminal(), concurrency=4, clock=clock, auto_refresh=False)
    for view in (one_lane, four_lanes):
        view.planned(total=9, skipped=0)
        view.started("first")
        view.finished(result("first", duration=60))
    assert one_lane.tally.eta(clock.now, 1) == 8 * 60
    assert four_lanes.tally.eta(clock.now, 4) == 8 * 60 / 4
    clock.now += 90
    assert one_lane.counts().plain.endswith("ETA 6m 30s")
    assert four_lanes.counts().plain.endswith("ETA 30s")
    clock.now += 60
    assert four_lanes.counts().plain.endswith("ETA 0.0s")  # late, never negative
    for view in (one_lane, four_lanes):
        view.close()


def test_the_last_line_stays_on_screen_when_the_batch_ends() -> None:
    clock, console = Clock(), terminal()
    with BatchView(console, concurrency=8, clock=clock, auto_refresh=False) as view:
        view.planned(total=2, skipped=0)
        for task_id in ("a", "b"):
            view.started(task_id)
            clock.now += 15
            view.finished(result(task_id, duration=15))
        console.export_text(clear=True)
    last = console.export_text()
    assert last == (  # the spinner gone: nothing runs
        "  batch ━━━━━━━━━━━━━━━━━━━━━━━━ "
        "2/2 done · 0 running · 0 failed · $0.0200 · 4.0 tasks/min · ETA 0.0s\n"
    )
    stream = console.file
    assert isinstance(stream, io.StringIO)
    assert stream.getvalue().endswith("\x1b[?25h")  # the cursor shown again


def test_off_a_terminal_each_finished_task_is_one_plain_line() -> None:
    log = io.StringIO()
    console = Console(file=log, force_terminal=False, width=60)
    view = BatchView(console, concurrency=4, clock=Clock())
    with view:
        view.planned(total=4, skipped=1)
        view.started("fix-login")
        view.started("broken")
        view.started("no-server")
        view.finished(result("fix-login", check=True, cost=0.0123, duration=4.2))
        view.finished(result("broken", "max_turns", check=False, turns=1, duration=75))
        message = "could not reach\nthe model \x1b[31mservice\x1b[0m"
        view.finished(result("no-server", error=("model", message), cost=0, duration=0.3))
    assert log.getvalue().splitlines() == [
        "batch: 3 tasks to run, 4 at a time; 1 already done by an earlier run",
        "[1/3] fix-login: completed, check passed · 3 turns · $0.0123 · 4.2s",
        "[2/3] broken: FAILED max_turns, check failed (exit 1) · 1 turn · $0.0100 · 1m 15s",
        "[3/3] no-server: FAILED infrastructure error at model: could not reach the model "
        "service · 0 turns · $0.0000 · 0.3s",
    ]


def test_the_view_writes_to_standard_error_and_nothing_to_standard_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with stderr_view(concurrency=2) as view:
        view.planned(total=1, skipped=0)
        view.started("only")
        view.finished(result("only"))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "[1/1] only: completed" in captured.err


def test_a_narrow_terminal_gets_the_line_in_fewer_words_and_one_row() -> None:
    clock, console = Clock(), terminal(width=80)
    view = BatchView(console, concurrency=8, clock=clock, auto_refresh=False)
    view.planned(total=500, skipped=0)
    view.started("a")
    assert shown(view, console) == (
        "⠋ batch ━━━━━━━━━━━━━━━━━━━━━━ 0/500 · 1 run · 0 fail · $0.0000 · –/min · ETA –"
    )
    view.close()


def test_a_batch_with_nothing_left_to_run_says_so_in_one_line() -> None:
    console = terminal()
    with BatchView(console, concurrency=8, clock=Clock(), auto_refresh=False) as view:
        view.planned(total=3, skipped=3)
    assert console.export_text() == (
        "batch: nothing to run, every task (3) has a result from an earlier run\n"
    )


def test_the_views_facts_mark_results_it_did_not_see_finish_as_an_earlier_runs() -> None:
    clock = Clock()
    with BatchView(terminal(), concurrency=2, clock=clock, auto_refresh=False) as view:
        view.planned(total=3, skipped=1)
        for task_id in ("b", "c"):
            view.started(task_id)
            clock.now += 30
            view.finished(result(task_id))
    every = [facts_of_result(result(task_id)) for task_id in "abc"]
    facts = view.facts(every, planned=3, results_file=RESULTS)
    assert (facts.tasks, facts.earlier, facts.ran, facts.wall_s) == (3, 1, 2, 60.0)
    assert facts.tasks_per_minute == 2.0


def test_force_color_in_a_log_still_gets_plain_lines_not_redraws(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would take any stream for a terminal
    with stderr_view(concurrency=2) as view:
        view.planned(total=2, skipped=0)
        for task_id in ("a", "b"):
            view.started(task_id)
            view.finished(result(task_id))
    logged = capsys.readouterr().err
    assert "\x1b" not in logged and "\r" not in logged, repr(logged)
    assert logged.splitlines()[1:] == [
        "[1/2] a: completed · 3 turns · $0.0100 · 10s",
        "[2/2] b: completed · 3 turns · $0.0100 · 10s",
    ]
