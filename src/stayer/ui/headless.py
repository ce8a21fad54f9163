"""Headless printers: run once and print `text`, `json` or `stream-json` to standard output.

Only the result (or, for stream-json, protocol lines) goes to standard output; diagnostics go
to standard error, so `stayer -p ... | next-program` stays clean. A running tool's live output
is not printed in text or json, as `claude -p` prints only the result there: stream-json carries
it as `tool_progress` lines with `--include-partial-messages`, and the live view draws it.

A reader of standard output that goes away (`| head -c 10`) interrupts the run at once, even
while nothing is written (see `closed_output`), and the run exits with 141, as a program killed
by SIGPIPE does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

from msgspec import Struct

from stayer import json_text
from stayer.driver import Close, Driver, Submit
from stayer.events import (
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    ModelSwitched,
    Retrying,
    SessionStarted,
    Terminal,
)
from stayer.exec import kill_everything_now
from stayer.loop.abort import AbortSignal

from .closed_output import GuardedOutput, watch_reader
from .live import LiveView
from .stream_json import Line, StreamJsonWriter, dumps
from .wording import hook_line, mcp_line

OutputFormat = Literal["text", "json", "stream-json"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
READER_GONE = "standard output was closed: nobody reads the run's output any more"


class Printer(Struct, frozen=True):
    """How to print one run."""

    output_format: OutputFormat = "text"
    verbose: bool = False
    include_partial: bool = False
    include_hooks: bool = False
    api_key_source: str = "none"


def exit_code(finished: Finished | None, signum: int | None = None) -> int:
    """0 when the model finished the work, 128+N when signal N interrupted it, 1 otherwise."""
    if finished is None:
        return EXIT_FAILED
    if finished.terminal in (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS):
        return 128 + signum if signum is not None else EXIT_INTERRUPTED
    return EXIT_OK if finished.terminal is Terminal.COMPLETED else EXIT_FAILED


class Interrupts(Struct):
    """Which signal interrupted the run, if one did."""

    signum: int | None = None


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Ctrl+C, a polite kill (claude-agent-sdk's close()), a closed terminal: all end a run cleanly."""


@contextlib.contextmanager
def interrupt_aborts(stop: Callable[[str], None]) -> Iterator[Interrupts]:
    """The first stop signal interrupts the run cleanly (tools stopped, history closed, a result
    printed); a second one kills every running command and exits at once.

    Plain `signal.signal` handlers, not the event loop's: they run even while the loop is stuck
    (a write to a full pipe nobody reads), which is exactly when a second signal must work.
    """
    loop = asyncio.get_running_loop()
    caught = Interrupts()

    def on_signal(signum: int, _frame: object) -> None:
        if caught.signum is not None:
            kill_everything_now()
            os._exit(128 + signum)
        caught.signum = signum
        reason = f"interrupted by {signal.Signals(signum).name}"
        loop.call_soon_threadsafe(stop, reason)

    previous: dict[int, Any] = {}
    for signum in STOP_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, on_signal)
        except ValueError:  # not the main thread: the caller handles signals
            break
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def retry_line(event: Retrying) -> str:
    """What a person waiting on standard error sees for one retry, like Claude Code's
    "Retrying in Ns… (attempt n/m)", with the reason."""
    delay = f"{event.delay_s:.1f}" if event.delay_s < 10 else f"{event.delay_s:.0f}"
    return (
        f"stayer: retrying in {delay} s (attempt {event.attempt}/{event.max_retries}): "
        f"{event.error}"
    )


def switch_line(event: ModelSwitched) -> str:
    """What a person sees on standard error when a fallback model takes over."""
    return f"stayer: switching to {event.to_model} for the rest of this run: {event.reason}"


class HeadlessOutput:
    """A sink printing one run's events as `text`, `json` or `stream-json` (see the module);
    `close` prints the outcome and says the exit status. `stop` is called, with the reason,
    when standard output's reader goes away."""

    def __init__(
        self, printer: Printer, out: TextIO = sys.stdout, stop: Callable[[str], None] | None = None
    ) -> None:
        self.printer = printer
        self.out = out
        self.stop = stop
        self._writer = StreamJsonWriter(
            include_partial=printer.include_partial,
            api_key_source=printer.api_key_source,
            include_hooks=printer.include_hooks,
        )
        self._collected: list[Line] = []
        self._finished: Finished | None = None
        self._output = GuardedOutput(out, self._reader_gone)

    def transcripts_in(self, session_dir: Path | None) -> None:
        """Where the session's folder is: a background subagent's `task_notification` names
        its transcript there as its `output_file`."""
        self._writer.session_dir = str(session_dir or "")

    def _reader_gone(self) -> None:
        if self.stop is not None:
            self.stop(READER_GONE)

    def reader_gone(self) -> None:
        """Standard output's reader went away (see `closed_output.watch_reader`)."""
        self._output.reader_gone()

    async def __call__(self, event: Event) -> None:
        printer, output = self.printer, self._output
        if printer.output_format != "stream-json":
            _note(event)
        lines = self._writer.lines(event)
        if printer.output_format == "stream-json":
            for line in lines:
                output.write(dumps(line) + "\n")
            output.flush()
        elif printer.output_format == "json" and printer.verbose:
            self._collected.extend(lines)
        if isinstance(event, Finished):
            self._finished = event
            if printer.output_format == "stream-json":
                output.complete()  # its result line is out: the reader may leave now

    def close(self, signum: int | None = None) -> int:
        """Print the outcome; the exit status (`signum`: the signal that interrupted it)."""
        finished, output = self._finished, self._output
        if finished is not None and not output.gone:
            _print_outcome(finished, self._writer, self.printer, self._collected, output)
        if output.gone:  # whatever the run came to, nobody reads it: end as SIGPIPE would
            return output.status
        return exit_code(finished, signum)


async def run_headless(driver: Driver, prompt: str, output: HeadlessOutput) -> int:
    """`stayer -p`: one prompt through `driver` (whose sink is `output`), then the session's
    end; a stop signal or a reader gone interrupts it. Returns the exit status."""
    output.stop = driver.interrupt
    output.transcripts_in(driver.session.setup.params.tool_context.session_dir)
    with interrupt_aborts(driver.interrupt) as caught, watch_reader(output.out, output.reader_gone):
        driver.send(Submit(prompt))
        driver.send(Close())
        await driver.run()
    return output.close(caught.signum)


async def print_run(
    events: AsyncIterator[Event], printer: Printer, abort: AbortSignal, out: TextIO = sys.stdout
) -> int:
    """Consume a run's events (`stayer.query()`'s, say), print them as asked, and return the
    exit status."""
    output = HeadlessOutput(printer, out, abort.abort)
    with interrupt_aborts(abort.abort) as caught, watch_reader(out, output.reader_gone):
        async for event in events:
            await output(event)
    return output.close(caught.signum)


def _note(event: Event) -> None:
    """Waits, model switches and hooks that blocked or failed on standard error, so a text or
    json run is never silent about them."""
    if isinstance(event, Retrying):
        _say(retry_line(event))
    elif isinstance(event, ModelSwitched):
        _say(switch_line(event))
    elif isinstance(event, HookRan) and event.outcome != "success":
        _say(hook_line(event))
    elif isinstance(event, McpServerStatus | SessionStarted):
        for server in event.mcp_servers if isinstance(event, SessionStarted) else (event,):
            line = mcp_line(server)
            if line is not None:
                _say(f"stayer: {line}")


def _say(line: str) -> None:
    """A line on standard error; none if its reader has gone too (`2>&1 | head`), whose
    standard output then went first: the run is being stopped for it."""
    with contextlib.suppress(BrokenPipeError):
        print(line, file=sys.stderr, flush=True)


def _print_outcome(
    finished: Finished,
    writer: StreamJsonWriter,
    printer: Printer,
    collected: list[Line],
    out: GuardedOutput,
) -> None:
    if printer.output_format == "json":
        if printer.verbose:
            out.write("[" + ",".join(dumps(line) for line in collected) + "]\n")
        else:
            out.write(dumps(writer.result(finished)) + "\n")
    elif printer.output_format == "text":
        if finished.terminal is Terminal.COMPLETED:
            out.write(json_text.encodable(finished.result_text.rstrip("\n")) + "\n")
        else:
            print(f"stayer: {finished.terminal.value}: {finished.message}", file=sys.stderr)
    out.flush()


async def show_live(events: AsyncIterator[Event], abort: AbortSignal, out: TextIO) -> int:
    """Render a run for a person watching a terminal; returns the exit status."""
    view = LiveView.for_stream(out)
    finished: Finished | None = None
    with interrupt_aborts(abort.abort) as caught:
        async for event in events:
            view.show(event)
            if isinstance(event, Finished):
                finished = event
    return exit_code(finished, caught.signum)
