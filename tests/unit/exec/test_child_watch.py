"""The processes the exec layer starts are waited for on the event loop, not by a thread each
(Python 3.11's default watcher starts one per process and holds the loop until it runs)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from stayer.exec import run_command

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"),
    reason="Python 3.12 and later watch by pidfd already; pidfds are Linux's",
)


async def _until_exists(path: Path, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.01)


async def test_running_commands_have_no_waiting_thread_and_their_status_comes_back(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    script = f"touch started-$1; while [ ! -e {go} ]; do sleep 0.01; done; exit $1"
    runs = [
        asyncio.create_task(
            run_command(f"sh -c '{script}' sh {n}", cwd=tmp_path, env=None, timeout_s=30)
        )
        for n in (3, 4, 5)
    ]
    for n in (3, 4, 5):
        await _until_exists(tmp_path / f"started-{n}")
    waiting = [t.name for t in threading.enumerate() if "waitpid" in t.name]
    go.touch()
    results = await asyncio.gather(*runs)
    assert waiting == []
    assert [result.exit_code for result in results] == [3, 4, 5]
