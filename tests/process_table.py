"""The process table as a test's signal that a stopped command is gone.

A command under test writes its pids to a file as soon as they all run (`family_command`); the
test waits for that file, stops the command, and then polls the process table until each pid is
gone. A marker the command would write later proves nothing when it is absent a guessed moment
after; a pid that is still running is a failure anyone can see.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from tests.unit.tools.helpers import is_running

_POLL_S = 0.01


def family_command(pids: Path, *, stubborn_reporting_to: Path | None = None) -> str:
    """A shell command that starts `sleep 30` as a child, writes `SHELL_PID SLEEP_PID` to `pids`
    at once (atomically), and waits for the child.

    With `stubborn_reporting_to`, SIGTERM ends neither: the child ignores it, and the shell
    touches that file each time it gets one (the sign its stopper has begun) and waits on.
    """
    report = stubborn_reporting_to
    on_term = f"trap 'touch {report}' TERM; " if report is not None else ""
    child = "(trap '' TERM; exec sleep 30) &" if report is not None else "sleep 30 &"
    return (
        f"{on_term}{child} echo $$ $! > {pids}.tmp && mv {pids}.tmp {pids}; "
        "while kill -0 $! 2>/dev/null; do wait $!; done"
    )


def read_pids(pids: Path) -> list[int]:
    found = [int(word) for word in pids.read_text().split()]
    assert len(found) == 2 and all(is_running(pid) for pid in found), found
    return found


def running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if is_running(pid)]


def assert_gone_within(pids: list[int], within_s: float) -> None:
    """Poll until no pid runs; past `within_s`, kill what is left (so it cannot disturb the next
    test) and fail naming it."""
    deadline = time.monotonic() + within_s
    while alive := running(pids):
        if time.monotonic() > deadline:
            _kill(alive)
            raise AssertionError(f"still running {within_s:g} s after they should stop: {alive}")
        time.sleep(_POLL_S)


async def gone_within(pids: list[int], within_s: float) -> None:
    """`assert_gone_within` for a test on the event loop (which must keep running to reap)."""
    deadline = time.monotonic() + within_s
    while alive := running(pids):
        if time.monotonic() > deadline:
            _kill(alive)
            raise AssertionError(f"still running {within_s:g} s after they should stop: {alive}")
        await asyncio.sleep(_POLL_S)


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
