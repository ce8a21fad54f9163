"""What a person sees of a batch while it runs, on standard error.

On a terminal, one live line drawn with rich's progress bar: how many tasks are done of those
this run has to do, how many are running and how many failed, the cost so far, tasks per
minute and an ETA. Rich redraws the line in place a few times a second, the whole line in one
write, so it does not flicker. Where standard error is no terminal (a CI log, a file) nothing
is redrawn: one plain line per finished task instead. Nothing goes to standard output, which
is the summary's (`batch_summary`). A task that failed is named on a line of its own above the
live line, so a person sees which ones to look into while the others run.

The ETA comes from the pace of the tasks finished so far: their mean time times the tasks
left, shared among the concurrent lanes, counted down between finishes.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from msgspec import Struct
from msgspec.structs import replace
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TaskID
from rich.progress_bar import ProgressBar
from rich.text import Text

from stayer.batch.results import ResultFacts, TaskResult

from .batch_facts import (
    BatchFacts,
    cost_text,
    duration_text,
    facts_of,
    failed,
    outcome_text,
)
from .live_output import safe

Clock = Callable[[], float]

REFRESHES_PER_SECOND = 4.0
BAR_WIDTH = 24
MIN_BAR_WIDTH = 6
_LONG = (" done", " running", " failed", " tasks/min")
_SHORT = ("", " run", " fail", "/min")


class Tally(Struct, frozen=True):
    """The counts the live line shows, replaced whole on every change, so the thread that
    draws always reads one consistent set."""

    to_run: int = 0
    """Tasks this run has to do (those with an earlier result are not among them)."""
    earlier: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    cost_usd: float = 0.0
    busy_s: float = 0.0
    """The finished tasks' own durations, summed: their pace."""
    started_at: float = 0.0
    last_done_at: float = 0.0

    def rate(self, now: float) -> float | None:
        """Tasks finished per minute since the batch began; None before the first."""
        elapsed = now - self.started_at
        return self.done * 60 / elapsed if self.done and elapsed > 0 else None

    def eta(self, now: float, concurrency: int) -> float | None:
        """Seconds until the last task is done; None until one task has shown the pace."""
        left = self.to_run - self.done
        if left <= 0:
            return 0.0
        if not self.done:
            return None
        lanes = max(1, min(concurrency, left))
        estimate = left * (self.busy_s / self.done) / lanes
        return max(0.0, estimate - (now - self.last_done_at))


def stderr_view(concurrency: int) -> BatchView:
    """The view of a batch on this process's standard error: live only on a terminal."""
    console = Console(stderr=True, highlight=False)
    # FORCE_COLOR (set in many CI setups) makes rich take any stream for a terminal: a log
    # would get four redraws a second for the batch's whole run. TTY_INTERACTIVE=1 still asks
    # for the live line wherever standard error goes.
    live = console.is_interactive and (
        _isatty(sys.stderr) or os.environ.get("TTY_INTERACTIVE") == "1"
    )
    return BatchView(console, concurrency=concurrency, live=live)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or closed
        return False


class BatchView:
    """A `BatchListener` that shows the batch on `console` (standard error's); use it in a
    `with` block, which takes the live line down (leaving its last state) when the batch
    ends."""

    def __init__(
        self,
        console: Console,
        *,
        concurrency: int,
        clock: Clock = time.monotonic,
        auto_refresh: bool = True,
        live: bool | None = None,
    ) -> None:
        """`live`: whether to draw the live line (None: when `console` is an interactive
        terminal) rather than a plain line per task."""
        self.console = console
        self.concurrency = concurrency
        self.tally = Tally()
        self._clock = clock
        self._running: set[str] = set()
        self._ran: set[str] = set()
        self._live = console.is_interactive if live is None else live
        self._progress = Progress(
            SpinnerColumn(),
            _Description(),
            _Bar(self),
            _Counts(self),
            console=console,
            auto_refresh=auto_refresh,
            refresh_per_second=REFRESHES_PER_SECOND,
            redirect_stdout=False,  # standard output is the summary's, never the live line's
            get_time=clock,
        )
        self._task: TaskID | None = None

    # --- the listener ---

    def planned(self, total: int, skipped: int) -> None:
        now = self._clock()
        to_run = max(0, total - skipped)
        self.tally = Tally(to_run=to_run, earlier=skipped, started_at=now, last_done_at=now)
        if self._live and to_run:
            self._task = self._progress.add_task(_description(skipped), total=to_run)
            self._progress.start()
        else:
            self._say(_plan_line(to_run, skipped, self.concurrency))

    def started(self, task_id: str) -> None:
        self._running.add(task_id)
        self.tally = replace(self.tally, running=len(self._running))

    def finished(self, result: TaskResult) -> None:
        self._running.discard(result.id)
        self._ran.add(result.id)
        tally = self.tally
        self.tally = tally = replace(
            tally,
            running=len(self._running),
            done=tally.done + 1,
            failed=tally.failed + failed(result),
            cost_usd=tally.cost_usd + result.cost_usd,
            busy_s=tally.busy_s + max(0.0, result.duration_s),
            last_done_at=self._clock(),
        )
        if self._task is not None:
            self._progress.update(self._task, completed=tally.done)
            if failed(result):  # which tasks failed, above the line, for a person to look into
                self._say(finished_line(result, tally.done, tally.to_run))
        elif not self._live:
            self._say(finished_line(result, tally.done, tally.to_run))

    # --- the view ---

    @property
    def wall_s(self) -> float:
        """How long the batch has been running (0 before it was planned)."""
        return self._clock() - self.tally.started_at if self.tally.started_at else 0.0

    def counts(self, *, short: bool = False) -> Text:
        """The live line's counts, as drawn now (`short`: in fewer words, for a narrow
        terminal)."""
        tally, now = self.tally, self._clock()
        words = _SHORT if short else _LONG
        text = Text(f"{tally.done}/{tally.to_run}{words[0]} · {tally.running}{words[1]} · ")
        text.append(f"{tally.failed}{words[2]}", style="red" if tally.failed else "")
        text.append(f" · {cost_text(tally.cost_usd)} · ")
        rate = tally.rate(now)
        text.append(f"{rate:.1f}" if rate is not None else "–")
        eta = tally.eta(now, self.concurrency)
        text.append(f"{words[3]} · ETA {duration_text(eta) if eta is not None else '–'}")
        return text

    def facts(
        self, results: Sequence[ResultFacts], *, planned: int, results_file: Path
    ) -> BatchFacts:
        """The facts of the batch's `results` (of every task with a line, an earlier run's
        too: those this view did not see finish)."""
        earlier = {result.id for result in results if result.id not in self._ran}
        return facts_of(
            results,
            earlier=earlier,
            wall_s=self.wall_s,
            results_file=results_file,
            planned=planned,
        )

    def refresh(self) -> None:
        """Draw the live line now (it is redrawn a few times a second anyway)."""
        if self._task is not None:
            self._progress.refresh()

    def close(self) -> None:
        """Leave the live line as it is last drawn, and the cursor under it."""
        if self._task is not None:
            self._progress.stop()
            self._task = None

    def __enter__(self) -> BatchView:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _say(self, line: str) -> None:
        # In a log a line is never cut; above the live line, rich wraps it to the width.
        self.console.print(line, markup=False, highlight=False, soft_wrap=not self._live)


class _Description(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(task.description)


class _Bar(ProgressColumn):
    """The bar, narrowed (down to nothing) so the line fits a narrow terminal in one row."""

    def __init__(self, view: BatchView) -> None:
        super().__init__()
        self._view = view

    def render(self, task: Task) -> RenderableType:
        counts = _fitting_counts(self._view, task.description)
        spare = self._view.console.width - _fixed_cells(task.description, counts)
        if spare < MIN_BAR_WIDTH:
            return Text()
        return ProgressBar(
            total=task.total,
            completed=task.completed,
            width=min(BAR_WIDTH, spare),
            pulse=not task.started,
            animation_time=task.get_time(),
        )


class _Counts(ProgressColumn):
    def __init__(self, view: BatchView) -> None:
        super().__init__()
        self._view = view

    def render(self, task: Task) -> Text:
        return _fitting_counts(self._view, task.description)


def _fitting_counts(view: BatchView, description: str) -> Text:
    """The counts in full, or in fewer words when in full they leave the line no room."""
    counts = view.counts()
    if _fixed_cells(description, counts) + MIN_BAR_WIDTH > view.console.width:
        return view.counts(short=True)
    return counts


def _fixed_cells(description: str, counts: Text) -> int:
    """The cells of the line but the bar's: the spinner, the words, a space between each of
    the four columns, and the last cell left free, as some terminals wrap a row that fills it."""
    return 1 + cell_len(description) + counts.cell_len + 3 + 1


def _description(earlier: int) -> str:
    return f"batch ({earlier} done earlier)" if earlier else "batch"


def _plan_line(to_run: int, earlier: int, concurrency: int) -> str:
    if not to_run:
        return f"batch: nothing to run, every task ({earlier}) has a result from an earlier run"
    tasks = f"{to_run} task" + ("" if to_run == 1 else "s")
    line = f"batch: {tasks} to run, {concurrency} at a time"
    if earlier:
        line += f"; {earlier} already done by an earlier run"
    return line


def finished_line(result: TaskResult, done: int, to_run: int) -> str:
    """One finished task as a plain line (a log's): its place, id, outcome, turns, cost,
    time."""
    mark = "FAILED " if failed(result) else ""
    turns = f"{result.turns} turn" + ("" if result.turns == 1 else "s")
    said = safe(outcome_text(result).replace("\n", " "))
    return (
        f"[{done}/{to_run}] {result.id}: {mark}{said} · {turns} · "
        f"{cost_text(result.cost_usd)} · {duration_text(result.duration_s)}"
    )
