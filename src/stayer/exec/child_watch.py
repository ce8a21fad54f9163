"""How asyncio learns that a process we started has exited: by a pidfd on the event loop.

Python 3.11's default child watcher starts a thread for every process and makes the event loop
wait until that thread has started; a batch starts about five git processes a task, so its one
event loop spent a good part of its time starting threads (0.65 ms a process in a profile of
`stayer batch`). Python 3.12 watches by pidfd on Linux instead: the loop waits for a process's
exit as it waits for a socket, with no thread. `watch_children_by_pidfd` does the same on
3.11, once, before the first process starts, where the kernel has pidfds (Linux 5.3 and later)
and the program has not chosen a watcher or a loop policy of its own. 3.11's own pidfd
watcher is tied to one loop, and a process may run several in turn (or in threads), so the
watcher here, like 3.12's, uses whichever loop starts the process.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVarTuple, Unpack

_Ts = TypeVarTuple("_Ts")

_decided = False


if sys.version_info < (3, 12):  # the watchers are deprecated in 3.12 and gone in 3.14

    class _PidfdWatcher(asyncio.AbstractChildWatcher):
        """Waits for each child through its pidfd, on the loop running when it was started."""

        def add_child_handler(
            self, pid: int, callback: Callable[[int, int, Unpack[_Ts]], object], *args: *_Ts
        ) -> None:
            loop = asyncio.get_running_loop()
            pidfd = os.pidfd_open(pid)
            loop._add_reader(pidfd, self._reap, loop, pid, pidfd, callback, args)  # type: ignore[attr-defined]

        def _reap(
            self,
            loop: asyncio.AbstractEventLoop,
            pid: int,
            pidfd: int,
            callback: Any,
            args: tuple[Any, ...],
        ) -> None:
            loop._remove_reader(pidfd)  # type: ignore[attr-defined]
            try:
                _, status = os.waitpid(pid, 0)
                returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # reaped by someone else: asyncio's own answer for that
                returncode = 255
            finally:
                os.close(pidfd)
            callback(pid, returncode, *args)

        def remove_child_handler(self, pid: int) -> bool:
            return True  # the reader goes when the process exits; nothing else is held

        def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
            pass

        def close(self) -> None:
            pass

        def is_active(self) -> bool:
            return True

        def __enter__(self) -> _PidfdWatcher:
            return self

        def __exit__(self, *_: object) -> None:
            pass


def watch_children_by_pidfd() -> None:
    """Make the pidfd watcher asyncio's, if it is Python 3.11's thread-per-process default
    and the kernel has pidfds; once per process, and never over a caller's own choice."""
    global _decided
    if _decided:
        return
    _decided = True
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return  # 3.12 and later watch by pidfd already; elsewhere there is none
    policy = asyncio.get_event_loop_policy()
    if type(policy) is not asyncio.DefaultEventLoopPolicy:
        return
    if type(policy.get_child_watcher()) is not asyncio.ThreadedChildWatcher:
        return
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return  # a kernel, or a sandbox, without pidfds
    policy.set_child_watcher(_PidfdWatcher())
