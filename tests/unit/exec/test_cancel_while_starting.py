"""A command cancelled while asyncio is still connecting its pipes (the run was interrupted
just as the command started) must not leave what it started running, nor hang the caller."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from stayer.exec import run_command
from tests.unit.tools.helpers import is_running


def _forked(marker: str) -> bool:
    """Whether a process whose command line holds `marker` exists yet (the command's shell)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def _gated_or_ran(marker: str, ran: Path) -> bool:
    """Wait without yielding to the event loop (on purpose: see the caller) until the command
    has run (`ran` exists) or its process sits at the gate; True when it sits at the gate."""
    deadline = time.monotonic() + 20
    while not ran.exists():
        assert time.monotonic() < deadline, "the command neither ran nor waited at the gate"
        for entry in Path("/proc").iterdir():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"/bin/sh", b"-c"] and marker.encode() in b" ".join(argv):
                return True
        time.sleep(0.005)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the child through /proc")
async def test_a_command_cancelled_while_starting_never_runs(tmp_path: Path) -> None:
    """asyncio connects a child's pipes over a few turns of the event loop; a command is held at
    the gate meanwhile, so one cancelled then never runs, and nothing is left behind."""
    pid_file = tmp_path / "sleep.pid"
    command = f"sleep 300 & echo $! > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; wait"
    task = asyncio.create_task(run_command(command, cwd=tmp_path, env=None, timeout_s=600))
    for _ in range(100):  # one step at a time, until the shell is forked
        await asyncio.sleep(0)
        if _forked(str(pid_file)):
            break
    assert not task.done()
    # Hold the event loop (no await): the start cannot finish meanwhile. Unguarded, the command
    # would run now and start its grandchild before its group is even watched.
    try:
        assert _gated_or_ran(str(pid_file), pid_file), "the command ran before it was watched"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), timeout=15)
        assert not _forked(str(pid_file)), "the gated command outlived the cancellation"
        assert not pid_file.exists()
    finally:  # after a failure, leave nothing running
        if pid_file.exists() and is_running(sleeper := int(pid_file.read_text())):
            os.kill(sleeper, signal.SIGKILL)
        task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, timeout=15)
