"""Standard output whose reader may go away (`stayer -p ... | head -c 10`).

A program killed by SIGPIPE stops at its next write. stayer must stop even while it writes
nothing (a long tool call running), and stop cleanly: interrupt the run, let its tools stop and
its transcript settle, then exit with 141 (128 + SIGPIPE), as such a program would. Two ways to
notice that the reader has gone:

* a write or flush that fails because nobody reads (Python ignores SIGPIPE, so it is an
  exception: BrokenPipeError, or ConnectionResetError on a socket);
* for a pipe or a socket, a watcher thread polling the descriptor for POLLERR/POLLHUP, which
  the kernel raises on the writing end once the reading end is closed, with nothing written.
  Nothing else is polled for, so a full pipe whose reader is only slow never counts.

A write that fails for another reason (ENOSPC: `> /dev/full`, EIO) ends the output the same
way, said in one line on standard error, and `status` is then 1: the output is lost, not
left unread.

From then on every write is dropped, and the descriptor is pointed at /dev/null: what is left
in Python's buffers is flushed there at exit instead of failing again ("Exception ignored ...
BrokenPipeError" on standard error).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import select
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

EXIT_READER_GONE = 141
"""The status of a program that SIGPIPE killed (128 + 13), which shells and scripts expect."""


class GuardedOutput:
    """A text stream to write to that stops quietly once its reader has gone."""

    def __init__(self, stream: TextIO, on_gone: Callable[[], None]) -> None:
        self._stream = stream
        self._on_gone = on_gone
        self.gone = False
        """Whether the reader went away before the output was complete (every write since
        was dropped)."""
        self._complete = False
        self.failed = False
        """Whether a write failed for a reason other than its reader leaving."""

    @property
    def status(self) -> int:
        """The exit status for output that ended early: 141 for a reader gone (as SIGPIPE
        would), 1 for a write that failed."""
        return 1 if self.failed else EXIT_READER_GONE

    def write(self, text: str) -> None:
        """Write `text`, unless the reader is gone (noticed here or by the watcher)."""
        if self.gone:
            return
        try:
            self._stream.write(text)
        except (BrokenPipeError, ConnectionResetError):
            self.reader_gone()
        except OSError as error:
            self._write_failed(error)

    def flush(self) -> None:
        """Flush what was written, unless the reader is gone."""
        if self.gone:
            return
        try:
            self._stream.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.reader_gone()
        except OSError as error:
            self._write_failed(error)

    def complete(self) -> None:
        """All of the output is out: a reader that leaves from now on missed nothing (a
        program SIGPIPE would kill goes on to exit normally once it writes no more)."""
        self._complete = True

    def _write_failed(self, error: OSError) -> None:
        """Standard output cannot be written: say so once, then stop as for a reader gone."""
        if not self._complete:
            self.failed = True
            reason = error.strerror or type(error).__name__
            with contextlib.suppress(OSError, ValueError):
                print(
                    f"stayer: standard output cannot be written ({reason}); stopping",
                    file=sys.stderr,
                    flush=True,
                )
        self.reader_gone()

    def reader_gone(self) -> None:
        """Nobody reads any more: drop what follows and, unless the output was complete (what
        follows it, the SessionEnd hooks' lines, is no loss), tell `on_gone`, once."""
        if self.gone:
            return
        _point_at_devnull(self._stream)
        if self._complete:
            return
        self.gone = True
        self._on_gone()


def _point_at_devnull(stream: TextIO) -> None:
    """Let the stream's buffered rest, and any later write, go to /dev/null."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


def _watchable(stream: TextIO) -> int | None:
    """The descriptor behind `stream` when it is a pipe or a socket, whose reader can go away
    unseen; None for a terminal (SIGHUP tells of its hang-up), a file, or no descriptor."""
    if not hasattr(select, "poll"):
        return None
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


@contextlib.contextmanager
def watch_reader(stream: TextIO, on_gone: Callable[[], None]) -> Iterator[None]:
    """While inside, call `on_gone` (on the running event loop) as soon as the reader of
    `stream` goes away, even if nothing is being written."""
    fd = _watchable(stream)
    if fd is None:
        yield
        return
    loop = asyncio.get_running_loop()
    wake_read, wake_write = os.pipe()

    def tell() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing left to stop
            loop.call_soon_threadsafe(on_gone)

    thread = threading.Thread(
        target=_watch, args=(fd, wake_read, tell), name="stayer-reader-watch", daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        os.write(wake_write, b"!")
        thread.join()
        os.close(wake_read)
        os.close(wake_write)


def _watch(fd: int, wake: int, tell: Callable[[], None]) -> None:
    """Block until the reader of `fd` goes away (then `tell`) or `wake` is written to."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: POLLERR and POLLHUP are always reported
    poller.register(wake, select.POLLIN)
    while True:
        for ready, mask in poller.poll():
            if ready == wake:
                return
            if mask & (select.POLLERR | select.POLLHUP):
                tell()
                return
            if mask & select.POLLNVAL:  # not a descriptor poll can watch: writes still tell
                return
