"""The watchdog program: ends the process groups of one stayer process once it is gone.

Run as a script with nothing of stayer imported (``python -I -S watchdog_program.py PID``),
so it starts fast and depends on nothing stayer might break; `stayer.exec.watchdog` starts it
and explains the design. It reads lines from stdin: ``+PGID`` when stayer started a process
group, ``-PGID`` when that group is over. Stayer is gone when stdin reaches its end (the one
write end, stayer's, closed: it exited, or the kernel closed it for a killed process), when
stayer's pid ends (a pidfd, in case the write end leaked into another process), or when this
process has a new parent. Then each group still alive gets SIGTERM (and SIGCONT, so a stopped
one can act on it), the members left after a grace get SIGKILL, and the program exits.

While stayer lives, groups that have emptied are dropped every second, so that a number the
kernel hands out again later never names a stranger's group when the end comes.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

GRACE_S = 2.0
"""How long a group may take to exit after SIGTERM before its members get SIGKILL."""
CHECK_S = 1.0
"""How often empty groups are dropped (and, without a pidfd, the parent is checked)."""
_POLL_S = 0.02
_CHUNK = 65_536
_PROC = Path("/proc")


def main(argv: list[str]) -> int:
    """Watch the stayer process whose pid is `argv[1]`; end its groups when it is gone."""
    owner = int(argv[1])
    os.chdir("/")  # hold no directory of stayer's busy (an unmount would wait for us)
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(number, signal.SIG_IGN)  # meant for stayer's terminal, never for us
    groups: set[int] = set()
    wait_for_the_end(owner, groups)
    end_groups(groups)
    return 0


def wait_for_the_end(owner: int, groups: set[int]) -> None:
    """Keep `groups` as stdin's lines say until `owner` is gone, reading whatever it wrote."""
    owner_fd = _pidfd(owner)
    poller = select.poll()
    poller.register(0, select.POLLIN)
    if owner_fd is not None:
        poller.register(owner_fd, select.POLLIN)
    pending = b""
    while os.getppid() == owner:
        idle = owner_fd is not None and not groups
        ready = dict(poller.poll(None if idle else CHECK_S * 1000))
        if 0 in ready:
            chunk = os.read(0, _CHUNK)
            if not chunk:
                return
            pending = apply_lines(pending + chunk, groups)
        if owner_fd is not None and owner_fd in ready:
            break
        groups.difference_update([pgid for pgid in groups if not group_exists(pgid)])
    _drain(pending, groups)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` ends; None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(pending: bytes, groups: set[int]) -> None:
    """Take every line already written, without waiting for more: the writer is gone, but a
    leaked copy of its pipe may stay open."""
    os.set_blocking(0, False)
    with contextlib.suppress(OSError):
        while chunk := os.read(0, _CHUNK):
            pending = apply_lines(pending + chunk, groups)


def apply_lines(data: bytes, groups: set[int]) -> bytes:
    """Apply each whole line of `data` to `groups`; returns the unfinished last line."""
    *lines, rest = data.split(b"\n")
    for line in lines:
        sign, number = line[:1], line[1:]
        if not number.isdigit() or int(number) <= 1:
            continue  # never a group we may signal (0 would be our own, 1 init's)
        if sign == b"+":
            groups.add(int(number))
        elif sign == b"-":
            groups.discard(int(number))
    return rest


def end_groups(groups: Iterable[int]) -> None:
    """SIGTERM every group still there, then SIGKILL what is left of them after the grace."""
    live = {pgid for pgid in groups if group_exists(pgid)}
    for pgid in live:
        _signal(pgid, signal.SIGTERM)
        _signal(pgid, signal.SIGCONT)
    deadline = time.monotonic() + GRACE_S
    while live and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        live = {pgid for pgid in live if group_running(pgid)}
    for pgid in live:
        _signal(pgid, signal.SIGKILL)


def _signal(pgid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, number)


def group_exists(pgid: int) -> bool:
    """Whether any process (a zombie too) still belongs to the group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_running(pgid: int) -> bool:
    """Whether a member of the group still runs: zombies, waiting for a reaper that may be
    slow (or, in some containers, absent), do not count."""
    if not group_exists(pgid):
        return False
    return bool(members(pgid)) if _PROC.is_dir() else True


def members(pgid: int) -> list[tuple[int, str]]:
    """The running members of a process group (zombies left out), each with its program's
    short name, read from /proc (empty where there is none)."""
    found: list[tuple[int, str]] = []
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            found.append((int(entry.name), stat[stat.find("(") + 1 : stat.rfind(")")]))
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv))
