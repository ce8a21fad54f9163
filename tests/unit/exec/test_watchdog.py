"""The process watchdog, with real processes: a stand-in for stayer (`watchdog_owner.py`)
starts commands through `stayer.exec` and then dies; whatever it started must die with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stayer.exec import run_command, run_probes, watchdog
from stayer.exec.watchdog_program import apply_lines
from tests.unit.tools.helpers import is_running

OWNER = Path(__file__).with_name("watchdog_owner.py")
GONE_WITHIN_S = 20.0


class Owner:
    """The stand-in stayer process, taking orders on its stdin."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(OWNER)],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, order: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(order + "\n")
        self.process.stdin.flush()

    def ask(self, order: str) -> str:
        self.send(order)
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def kill(self) -> None:
        self.process.kill()
        self.process.communicate(timeout=15)

    def exit(self) -> None:
        self.process.communicate(timeout=15)


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Owner]:
    stand_in = Owner(tmp_path)
    try:
        yield stand_in
    finally:
        if stand_in.process.poll() is None:
            stand_in.kill()


def family(folder: Path, name: str = "pids") -> tuple[str, Path]:
    """A command that starts a shell with a child of its own, writes the three pids to the
    returned file once all run, and waits."""
    inner, pids = folder / f"{name}-inner", folder / name
    command = (
        f"bash -c 'sleep 1000 & echo $$ $! > {inner}.tmp; mv {inner}.tmp {inner}; wait' & "
        f"while [ ! -s {inner} ]; do sleep 0.01; done; "
        f'echo $$ "$(cat {inner})" > {pids}.tmp && mv {pids}.tmp {pids}; wait'
    )
    return command, pids


def pids_in(path: Path) -> list[int]:
    """The pids a command wrote to `path`, once it has (polled: the file is the signal)."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)
    pids = [int(word) for word in path.read_text().split()]
    assert pids and all(is_running(pid) for pid in pids)
    return pids


def assert_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while alive := [pid for pid in pids if is_running(pid)]:
        if time.monotonic() > deadline:
            for pid in alive:  # leave nothing behind for the next test
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"still running after {GONE_WITHIN_S:g} s: {alive}")
        time.sleep(0.02)


def test_what_a_killed_owner_watched_dies_with_it(owner: Owner, tmp_path: Path) -> None:
    command, pids_file = family(tmp_path)
    owner.ask(f"watch {command}")
    pids = pids_in(pids_file)
    owner.kill()
    assert_gone(pids)


def test_what_an_owner_watched_dies_when_it_exits_normally(owner: Owner, tmp_path: Path) -> None:
    command, pids_file = family(tmp_path)
    owner.ask(f"watch {command}")
    pids = pids_in(pids_file)
    owner.exit()
    assert_gone(pids)


def test_a_group_nobody_asked_to_watch_is_left_alone(owner: Owner, tmp_path: Path) -> None:
    command, pids_file = family(tmp_path)
    owner.ask(f"watch {command}")
    stranger = int(owner.ask("start exec sleep 1000"))
    watcher = int(owner.ask("watchdog"))
    pids = pids_in(pids_file)
    owner.kill()
    assert_gone([*pids, watcher])  # the watchdog exits once its work is done
    try:
        assert is_running(stranger)
    finally:
        os.kill(stranger, signal.SIGKILL)


def test_what_a_finished_command_left_running_dies_too(owner: Owner, tmp_path: Path) -> None:
    pid_file = tmp_path / "left"
    leader = owner.ask(f"watch sleep 1000 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}")
    (left,) = pids_in(pid_file)
    assert owner.ask(f"wait {leader}") == "released"  # its shell is gone, its group is not
    owner.kill()
    assert_gone([left])


def test_a_group_that_ignores_sigterm_is_killed(owner: Owner, tmp_path: Path) -> None:
    pid_file = tmp_path / "stubborn"
    owner.ask(f"watch trap '' TERM; echo $$ > {pid_file}; while :; do sleep 0.05; done")
    pids = pids_in(pid_file)
    owner.kill()
    assert_gone(pids)


@pytest.mark.parametrize("order", ["probe", "command"])
def test_a_probe_or_command_still_running_dies_with_its_owner(
    owner: Owner, tmp_path: Path, order: str
) -> None:
    command, pids_file = family(tmp_path)
    owner.send(f"{order} {command}")  # no answer: it blocks until the command ends
    pids = pids_in(pids_file)
    owner.kill()
    assert_gone(pids)


def test_a_watchdog_that_died_is_replaced_and_told_everything(owner: Owner, tmp_path: Path) -> None:
    first_command, first_file = family(tmp_path, "first")
    owner.ask(f"watch {first_command}")
    first = pids_in(first_file)
    watcher = int(owner.ask("watchdog"))
    os.kill(watcher, signal.SIGKILL)
    assert_gone([watcher])
    second_command, second_file = family(tmp_path, "second")
    owner.ask(f"watch {second_command}")
    second = pids_in(second_file)
    assert int(owner.ask("watchdog")) not in (watcher, 0)
    owner.kill()
    assert_gone([*first, *second])


async def test_without_a_watchdog_no_command_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchdog, "WATCHDOG", watchdog.Watchdog())
    monkeypatch.setattr(sys, "executable", "")
    marker = tmp_path / "ran"
    with pytest.raises(OSError, match="the process watchdog, which stops commands if stayer dies"):
        await run_command(f"touch {marker}", cwd=tmp_path, env=None, timeout_s=10)
    (result,) = run_probes(
        [["touch", str(marker)]], cwd=tmp_path, env=None, timeout_s=10, max_bytes=100
    )
    assert result.exit_code is None
    assert result.problem.startswith("the process watchdog cannot run: ")
    assert not marker.exists()


def test_the_watchdog_reads_whole_lines_and_never_names_init_or_itself() -> None:
    groups = {7}
    rest = apply_lines(b"+12\n-7\n+1\n+0\n+x\n?5\n+3", groups)
    assert (groups, rest) == ({12}, b"+3")
