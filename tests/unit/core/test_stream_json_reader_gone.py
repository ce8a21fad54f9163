"""Output whose reader went away: a failed write and the watcher (with nothing written) both
say so once, writes stop quietly, and a printed run ends with 141."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from stayer.loop.abort import AbortSignal
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.closed_output import EXIT_READER_GONE, GuardedOutput, watch_reader
from stayer.ui.headless import READER_GONE, OutputFormat, Printer, print_run


class Pipe:
    """A real pipe: its writing end as a text stream, and a reader that can go away."""

    def __init__(self) -> None:
        self._reading, writing = os.pipe()
        self.stream = open(writing, "w", encoding="utf-8")  # noqa: SIM115 (closed by close)
        self.reader_open = True

    def read(self, size: int) -> bytes:
        return os.read(self._reading, size)

    def close_reader(self) -> None:
        os.close(self._reading)
        self.reader_open = False

    def close(self) -> None:
        self.stream.close()
        if self.reader_open:  # never twice: the number may belong to someone else by now
            self.close_reader()


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    made = Pipe()
    yield made
    made.close()


def test_a_write_nobody_reads_marks_the_reader_gone_once(pipe: Pipe) -> None:
    stream = pipe.stream
    told: list[str] = []
    output = GuardedOutput(stream, lambda: told.append("gone"))
    output.write("read me\n")
    output.flush()
    assert pipe.read(100) == b"read me\n" and not output.gone

    pipe.close_reader()
    output.write("nobody reads this\n")
    output.flush()  # the pipe refuses it: BrokenPipeError, caught
    output.write("nor this\n")
    output.flush()
    assert (output.gone, told) == (True, ["gone"])
    # the stream now leads to /dev/null, so Python's own flush at exit cannot fail again
    assert stat.S_ISCHR(os.fstat(stream.fileno()).st_mode)
    stream.write("left in the buffer")
    stream.flush()


def test_a_reader_leaving_once_the_output_is_complete_missed_nothing(pipe: Pipe) -> None:
    told: list[str] = []
    output = GuardedOutput(pipe.stream, lambda: told.append("gone"))
    output.write('{"type":"result"}\n')
    output.flush()
    output.complete()
    assert pipe.read(100) == b'{"type":"result"}\n'
    pipe.close_reader()
    output.reader_gone()  # as the watcher would say
    assert (output.gone, told) == (False, [])
    # what follows the result (SessionEnd's hook lines) goes nowhere, quietly
    assert stat.S_ISCHR(os.fstat(pipe.stream.fileno()).st_mode)
    output.write('{"type":"system","subtype":"hook_started"}\n')
    output.flush()
    assert (output.gone, told) == (False, [])


async def test_the_watcher_tells_at_once_when_the_reader_closes_with_nothing_written(
    pipe: Pipe,
) -> None:
    gone = asyncio.Event()
    with watch_reader(pipe.stream, gone.set):
        pipe.close_reader()
        await asyncio.wait_for(gone.wait(), timeout=10)


async def test_output_that_is_not_a_pipe_is_not_watched(tmp_path: Path) -> None:
    told: list[str] = []
    with (tmp_path / "out.txt").open("w") as file, watch_reader(file, lambda: told.append("x")):
        file.write("a file's reader cannot go away\n")
    assert told == []


FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json")


@pytest.mark.parametrize("output_format", FORMATS)
async def test_a_run_nobody_reads_is_interrupted_and_returns_141(
    pipe: Pipe, tmp_path: Path, output_format: OutputFormat
) -> None:
    pipe.close_reader()
    abort = AbortSignal()
    model = ScriptedProvider([text("an answer nobody reads")])
    options = QueryOptions(cwd=tmp_path, provider=model, persist_session=False, abort=abort)
    printer = Printer(output_format=output_format)
    status = await print_run(query("go", options=options), printer, abort, pipe.stream)
    assert status == EXIT_READER_GONE
    assert abort.reason == READER_GONE
