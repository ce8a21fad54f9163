"""A command cancelled while asyncio is still connecting its pipes (the run was interrupted
just as the command started) must not leave what it started running, nor hang the caller."""

from __future__ import annotations

import asyncio
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


def _block_until_exists(path: Path) -> None:
    """Wait for `path` without yielding to the event loop (on purpose: see the caller)."""
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.005)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the child through /proc")
async def test_a_command_cancelled_while_starting_leaves_nothing_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    command = f"sleep 300 & echo $! > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; wait"
    task = asyncio.create_task(run_command(command, cwd=tmp_path, env=None, timeout_s=600))
    for _ in range(100):  # one step at a time, until the shell is forked
        await asyncio.sleep(0)
        if _forked(str(pid_file)):
            break
    assert not task.done()
    # Hold the event loop (no await) until the shell has started its grandchild: the pipes
    # cannot finish connecting meanwhile, so the start is still pending when we cancel.
    _block_until_exists(pid_file)
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), timeout=15)
        sleeper = int(pid_file.read_text())
        assert not is_running(sleeper), "the command's grandchild outlived the cancellation"
    finally:  # after a failure, leave nothing running
        if is_running(sleeper := int(pid_file.read_text())):
            os.kill(sleeper, signal.SIGKILL)
