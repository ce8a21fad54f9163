"""Background shells against real processes: they run on, are read in pieces, and are stopped
with everything they started. Each test waits on marker files or output, never on a sleep."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from stayer.exec import BackgroundShell, BackgroundShells
from tests.unit.tools.helpers import is_running


async def _until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.01)


async def _read_until(shell: BackgroundShell, wanted: str) -> str:
    """Read the shell's stdout until `wanted` is in what was read; all of it."""
    seen = ""
    deadline = time.monotonic() + 5
    while wanted not in seen:
        assert time.monotonic() < deadline, f"{wanted!r} never came"
        seen += (await shell.read()).stdout.text
        await asyncio.sleep(0.01)
    return seen


@pytest.fixture
async def shells() -> AsyncIterator[BackgroundShells]:
    made = BackgroundShells()
    yield made
    await made.aclose()


async def test_a_shell_runs_on_until_it_is_let_go_and_reports_its_exit(
    shells: BackgroundShells, tmp_path: Path
) -> None:
    shell = await shells.start(
        "touch started; until [ -e go ]; do sleep 0.01; done; echo bye; exit 3",
        cwd=tmp_path,
        env=None,
        max_output_chars=1000,
    )
    await _until((tmp_path / "started").exists)
    assert (shell.id, shell.status, shell.exit_code) == ("bash_1", "running", None)
    (tmp_path / "go").touch()
    assert await shell.wait() == 3
    assert (shell.status, shell.exit_code) == ("failed", 3)
    assert (await shell.read()).stdout.text == "bye\n"


async def test_each_read_gives_only_what_came_since_the_last(
    shells: BackgroundShells, tmp_path: Path
) -> None:
    shell = await shells.start(
        "echo one; until [ -e go ]; do sleep 0.01; done; echo two",
        cwd=tmp_path,
        env=None,
        max_output_chars=1000,
    )
    assert await _read_until(shell, "one") == "one\n"
    (tmp_path / "go").touch()
    await shell.wait()
    second, third = await shell.read(), await shell.read()
    assert (second.stdout.text, second.status, second.exit_code) == ("two\n", "completed", 0)
    assert (third.stdout.text, third.stderr.text) == ("", "")


async def test_ids_count_up_and_the_list_keeps_every_shell(
    shells: BackgroundShells, tmp_path: Path
) -> None:
    first = await shells.start("true", cwd=tmp_path, env=None, max_output_chars=1000)
    second = await shells.start("true", cwd=tmp_path, env=None, max_output_chars=1000)
    await asyncio.gather(first.wait(), second.wait())
    assert [shell.id for shell in shells.list()] == ["bash_1", "bash_2"]
    assert shells.get("bash_2") is second and shells.get("bash_3") is None


async def test_kill_stops_the_whole_group_and_keeps_unread_output(
    shells: BackgroundShells, tmp_path: Path
) -> None:
    shell = await shells.start(
        "echo before; sleep 60 & echo $! > child; wait",
        cwd=tmp_path,
        env=None,
        max_output_chars=1000,
    )
    child_file = tmp_path / "child"
    await _until(lambda: child_file.exists() and child_file.read_text().endswith("\n"))
    child = int(child_file.read_text())
    assert is_running(child)
    await shell.kill()
    assert not is_running(child) and not is_running(shell.pid)
    assert (shell.status, shell.exit_code) == ("killed", 128 + signal.SIGTERM)
    assert (await shell.read()).stdout.text == "before\n"


async def test_closing_stops_running_shells_and_what_finished_ones_left_behind(
    tmp_path: Path,
) -> None:
    shells = BackgroundShells()
    running = await shells.start("exec sleep 60", cwd=tmp_path, env=None, max_output_chars=100)
    finished = await shells.start(
        "sleep 60 & echo $! > daemon", cwd=tmp_path, env=None, max_output_chars=100
    )
    await finished.wait()
    daemon = int((tmp_path / "daemon").read_text())
    assert is_running(daemon) and is_running(running.pid)
    await shells.aclose()
    assert not is_running(daemon) and not is_running(running.pid)
    assert (running.status, finished.status) == ("killed", "completed")


async def test_stdin_is_at_end_of_file(shells: BackgroundShells, tmp_path: Path) -> None:
    shell = await shells.start("cat; echo done", cwd=tmp_path, env=None, max_output_chars=100)
    assert await shell.wait() == 0
    assert (await shell.read()).stdout.text == "done\n"


async def test_output_between_two_reads_is_capped_keeping_start_and_end(
    shells: BackgroundShells, tmp_path: Path
) -> None:
    shell = await shells.start("seq 1 100000", cwd=tmp_path, env=None, max_output_chars=1000)
    await shell.wait()
    printed = "".join(f"{n}\n" for n in range(1, 100_001))
    kept = (await shell.read()).stdout
    assert kept.length == len(printed)
    assert len(kept.head) + len(kept.tail) == 1000
    assert printed.startswith(kept.head) and printed.endswith(kept.tail)
