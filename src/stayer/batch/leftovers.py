"""What a task started and left running when it ends: found by a mark in its environment,
stopped.

Every process a task starts (its setup and check commands, the session's Bash calls, in the
foreground or the background, its hooks) gets ``STAYER_BATCH_TASK`` set to the task's mark: its
id and a random part, new for each run of the task. Those commands are stopped with their
process group, but one that leaves the group (``setsid cmd &``, a daemonising test server, a
``docker run -d``-style helper) would outlive its task, and over the hundreds of tasks of a
batch they would pile up. When a task ends, `stop_marked` kills every process of this user
whose environment carries its mark, wherever it was reparented to.

Why a mark rather than making the batch a child subreaper (``PR_SET_CHILD_SUBREAPER``) and
taking what is reparented to it: as a subreaper the batch would have to reap every orphan of
every task that ends on its own, and a zombie shows neither its environment nor whose it is,
so reaping them could take the exit status of a command the event loop is still waiting on.

The mark is read from ``/proc/<pid>/environ`` (the environment a process started with), so
this works on Linux only; elsewhere nothing is stopped (a process that leaves its group
outlives its task there). A process that both leaves its group and clears its environment
(``setsid env -i ...``) is not found either.
"""

from __future__ import annotations

import os
import secrets
import signal
from pathlib import Path

MARK_VARIABLE = "STAYER_BATCH_TASK"
"""The variable holding a task's mark in every process it starts."""
_ROUNDS = 5
"""How many times the process table is searched for a task's processes: one may have forked
while the one before it was being killed."""
_PROC = Path("/proc")


def new_mark(task_id: str) -> str:
    """A mark for one run of task `task_id`: its id, to be read by a person, and a random part,
    so no other run's processes (this task's earlier run, another batch's) ever match it."""
    return f"{task_id}.{secrets.token_hex(8)}"


def stop_marked(mark: str) -> int:
    """Kill (SIGKILL) every process of this user, but this one, whose environment carries
    `mark`; how many were killed. Does nothing where there is no ``/proc``."""
    if not _PROC.is_dir():
        return 0
    wanted = f"\0{MARK_VARIABLE}={mark}\0".encode()
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        found = [pid for pid in _marked(wanted) if pid not in killed]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # gone already, or not ours after all
                continue
            killed.add(pid)
    return len(killed)


def _marked(wanted: bytes) -> list[int]:
    """The pids of this user's processes (this one left out) whose environment holds `wanted`
    (``\\0NAME=VALUE\\0``)."""
    me, uid = os.getpid(), os.getuid()
    found: list[int] = []
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if os.stat(_PROC / entry).st_uid != uid:
                continue
            with open(_PROC / entry / "environ", "rb") as file:
                environ = file.read()
        except OSError:  # gone, or not readable
            continue
        if wanted in b"\0" + environ + b"\0":
            found.append(int(entry))
    return found
