"""Nothing stayer starts outlives it: a watchdog process ends every process group stayer
started once stayer is gone, however it went (`kill -9` included).

A process killed by SIGKILL runs no code of its own, so someone else must do it. Linux's
parent-death signal (`PR_SET_PDEATHSIG`) is no answer alone: it reaches only the direct child,
never what that child started, and it fires when the *thread* that forked the child ends, while
stayer forks from the event loop's thread and from whichever thread runs a probe. So the first
time stayer starts a process, it also starts one small watchdog (`watchdog_program`, run by
this Python with nothing of stayer imported) in a session of its own, where a Ctrl+C at the
terminal does not reach it, and keeps the only write end of a pipe to its stdin. Each process
group is announced when it starts (`watch_group`) and when it is over (`release_group`; one that
a finished command left running stays watched until it empties). When stayer exits, the kernel
closes the pipe; the watchdog sees the end (or stayer's pid ending, through a pidfd) and stops
every group still alive: SIGTERM, a grace, SIGKILL. Bubblewrap's `--die-with-parent` backs this
up for sandboxed commands, whose pid namespace dies with them.

The watchdog is started before the first process, not at import, so start-up pays nothing for
it until something runs; one that cannot start refuses the process (`OSError`), since a process
nobody would stop is what this is here to prevent. One that died is started again, and told
every group still watched. A command waits at a gate until its group is announced (`process`);
a probe (`probe`, run synchronously) is announced the moment it has started, so only a stayer
killed in that instant leaves one unwatched. A process that leaves its process group (`setsid`)
is not stopped by it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import sys
import threading
from pathlib import Path

from stayer.exec.watchdog_program import group_exists

PROGRAM = Path(__file__).with_name("watchdog_program.py")
_CANNOT_START = "the process watchdog, which stops commands if stayer dies, cannot start"


class Watchdog:
    """The watchdog of this process: started on demand, told which groups to stop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._pipe: int | None = None
        self._groups: set[int] = set()

    @property
    def pid(self) -> int | None:
        """The watchdog's process id, once it runs."""
        return self._pid

    def ensure_running(self) -> None:
        """Start the watchdog unless it runs; `OSError` when it cannot start."""
        with self._lock:
            if self._pipe is None:
                self._start()

    def watch(self, pgid: int) -> None:
        """Have process group `pgid` stopped when this process ends; `OSError` when no
        watchdog can be had, in which case the caller must stop the group itself."""
        with self._lock:
            self._groups.add(pgid)
            try:
                self._send(b"+%d\n" % pgid)
            except OSError:
                self._groups.discard(pgid)
                raise

    def watching(self, pgid: int) -> bool:
        """Whether the watchdog has been told to stop `pgid` should this process end."""
        with self._lock:
            return pgid in self._groups

    def release(self, pgid: int) -> None:
        """Stop watching `pgid` if none of its processes is left (a group still in use stays
        watched; the watchdog drops it by itself once it empties)."""
        if group_exists(pgid):
            return
        with self._lock:
            if pgid in self._groups:
                self._groups.discard(pgid)
                with contextlib.suppress(OSError):  # a dead watchdog forgets it anyway
                    self._send(b"-%d\n" % pgid)

    def _send(self, line: bytes) -> None:
        if self._pipe is None:
            self._start()
        try:
            _write_all(self._require_pipe(), line)
        except BrokenPipeError:  # the watchdog died: a new one learns every group we watch
            self._stop_using()
            self._start()
            self._groups = {pgid for pgid in self._groups if group_exists(pgid)}
            every = b"".join(b"+%d\n" % pgid for pgid in sorted(self._groups))
            _write_all(self._require_pipe(), every)

    def _require_pipe(self) -> int:
        if self._pipe is None:
            raise OSError(errno.EPIPE, "the process watchdog is not running")
        return self._pipe

    def _start(self) -> None:
        if not sys.executable:
            raise OSError(errno.ENOENT, f"{_CANNOT_START} (Python does not know its interpreter)")
        read_end, write_end = (_above_stdio(fd) for fd in os.pipe())
        argv = [sys.executable, "-I", "-S", str(PROGRAM), str(os.getpid())]
        actions = [
            (os.POSIX_SPAWN_DUP2, read_end, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ]
        try:
            self._pid = os.posix_spawn(
                sys.executable, argv, os.environ, file_actions=actions, setsid=True
            )
        except OSError as error:
            os.close(write_end)
            raise OSError(error.errno, f"{_CANNOT_START} ({error.strerror})") from None
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._pipe = write_end

    def _stop_using(self) -> None:
        """Let go of a watchdog that stopped reading: close our end and reap it."""
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if self._pid is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, os.WNOHANG)
            self._pid = None

    def forget_after_fork(self) -> None:
        """In a forked child: this watchdog belongs to the parent (its stdin must close when
        the parent dies), so the child starts its own when it needs one."""
        self._lock = threading.Lock()
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
        self._pipe = None
        self._pid = None
        self._groups = set()


def _above_stdio(fd: int) -> int:
    """`fd`, moved above 0–2 if it landed there (stayer started with one of them closed), so
    that the pipe is never mistaken for a standard stream; close-on-exec either way."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


WATCHDOG = Watchdog()
"""The watchdog of this process."""

os.register_at_fork(after_in_child=WATCHDOG.forget_after_fork)


def watch_group(pgid: int) -> None:
    """Have `pgid` stopped when stayer ends; if that cannot be promised, stop it now and raise
    `OSError`."""
    try:
        WATCHDOG.watch(pgid)
    except OSError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        raise


def release_group(pgid: int) -> None:
    """`pgid` is over as far as stayer knows (see `Watchdog.release`)."""
    WATCHDOG.release(pgid)


def ensure_watchdog() -> None:
    """Start the watchdog before a process starts; `OSError` when it cannot run."""
    WATCHDOG.ensure_running()
