"""A running command's output reaches its watcher as whole lines, at a bounded rate, with what
was left out counted; what the command printed is kept whole regardless."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from stayer.exec import OutputLines, run_command
from stayer.exec.lines import (
    PROGRESS_INTERVAL_S,
    PROGRESS_MAX_CHARS,
    PROGRESS_MAX_LINE_CHARS,
    PROGRESS_MAX_LINES,
    LineRelay,
)


async def _watched(command: str, cwd: Path) -> tuple[list[OutputLines], str, str]:
    seen: list[OutputLines] = []
    result = await run_command(command, cwd=cwd, env=None, timeout_s=60, on_lines=seen.append)
    return seen, result.stdout, result.stderr


async def test_a_line_cut_between_chunks_arrives_whole(tmp_path: Path) -> None:
    seen, stdout, _ = await _watched("printf 'par'; sleep 0.3; printf 'tial\\nnext'", tmp_path)
    # The unfinished last line is held until the command ends, then delivered as a line.
    assert seen == [OutputLines("partial\n"), OutputLines("next\n")]
    assert stdout == "partial\nnext"


async def test_stdout_and_stderr_lines_are_not_torn_into_each_other(tmp_path: Path) -> None:
    command = (
        "printf 'out-'; printf 'err-line\\n' >&2; sleep 0.1; printf 'end\\n'; printf 'last' >&2"
    )
    seen, stdout, stderr = await _watched(command, tmp_path)
    assert seen[0] == OutputLines("err-line\n")  # the first complete line goes out at once
    assert "".join(batch.text for batch in seen) == "err-line\nout-end\nlast\n"
    assert (stdout, stderr) == ("out-end\n", "err-line\nlast")


async def test_a_line_that_redraws_itself_shows_as_a_terminal_leaves_it(tmp_path: Path) -> None:
    seen, stdout, _ = await _watched("printf '10%%\\r50%%\\r100%%\\r\\n'", tmp_path)
    assert seen == [OutputLines("100%\n")]
    assert stdout == "10%\r50%\r100%\r\n"


async def test_a_flood_is_a_few_small_batches_that_count_every_line(tmp_path: Path) -> None:
    lines = 2_700_000  # 100 MB
    started = time.monotonic()
    command = f"yes 'a line of output from a chatty build' | head -n {lines - 1}; echo last"
    seen, stdout, _ = await _watched(command, tmp_path)
    elapsed = time.monotonic() - started

    assert len(seen) <= elapsed / PROGRESS_INTERVAL_S + 2
    for batch in seen:
        shown = batch.text.splitlines()
        assert 1 <= len(shown) <= PROGRESS_MAX_LINES
        assert len(batch.text) <= PROGRESS_MAX_CHARS
    assert sum(len(batch.text.splitlines()) + batch.omitted for batch in seen) == lines
    assert seen[-1].text.endswith("build\nlast\n")  # the latest lines are the ones shown
    assert stdout.startswith("a line of output")  # the result is kept as ever (by its own cap)


async def test_an_endless_line_is_held_only_as_far_as_it_can_be_shown(tmp_path: Path) -> None:
    seen, _, _ = await _watched("head -c 5000000 /dev/zero | tr '\\0' x", tmp_path)
    assert seen == [OutputLines("x" * PROGRESS_MAX_LINE_CHARS + "…\n")]


async def test_a_batch_waits_out_the_interval_and_holds_the_latest_lines() -> None:
    seen: list[OutputLines] = []
    delivered = asyncio.Event()

    def deliver(batch: OutputLines) -> None:
        seen.append(batch)
        delivered.set()

    relay = LineRelay(deliver, interval_s=0.05, max_lines=2)
    relay.add(1, "one\n")
    assert seen == [OutputLines("one\n")]  # nothing went out lately: at once
    delivered.clear()
    relay.add(1, "two\nthree\n")
    relay.add(2, "four\n")
    assert len(seen) == 1  # within the interval: held
    await delivered.wait()
    assert seen == [OutputLines("one\n"), OutputLines("three\nfour\n", omitted=1)]


async def test_an_abandoned_command_delivers_nothing_more() -> None:
    seen: list[OutputLines] = []
    relay = LineRelay(seen.append, interval_s=0.05)
    relay.add(1, "one\n")
    relay.add(1, "two\n")  # due when the interval is up
    relay.close()
    relay.add(1, "three\n")

    # Timers fire in the order they are due: once a later relay's held batch is out, the
    # abandoned relay's would have been too.
    later = asyncio.Event()
    witness = LineRelay(lambda _batch: later.set(), interval_s=0.1)
    witness.add(1, "a\n")
    later.clear()
    witness.add(1, "b\n")
    await later.wait()
    assert seen == [OutputLines("one\n")]
