"""A program under a pseudo-terminal this process owns, every byte it writes kept with the
moment it was read: what the REPL's latency benchmark reads instead of polling a terminal
emulator, so it measures the program and not the emulator.

The reader thread answers the one question prompt_toolkit asks a terminal at start (the cursor
position, `CSI 6 n`), as a terminal would; everything else is only recorded. `wait_for` finds
bytes in the output after a given offset and says when the chunk that completed them was read.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

CURSOR_QUERY = b"\x1b[6n"
CURSOR_ANSWER = b"\x1b[1;1R"


class PtyTimeout(Exception):
    """What was waited for never came."""


class PtyProgram:
    """`argv` running on a `cols` x `rows` pseudo-terminal; its standard error to `stderr`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stderr: Path,
        cols: int = 120,
        rows: int = 40,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        with stderr.open("wb") as errors:
            self.process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=slave,
                stdout=slave,
                stderr=errors,
                start_new_session=True,  # its own session: the pty is its controlling terminal
            )
        os.close(slave)
        self._master = master
        self._raw = bytearray()
        self._ends: list[tuple[int, float]] = []
        """(offset after a chunk, when it was read), in order."""
        self._changed = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 1 << 16)
            except OSError:  # the program is gone (EIO)
                chunk = b""
            now = time.perf_counter()
            if CURSOR_QUERY in chunk:
                os.write(self._master, CURSOR_ANSWER)
            with self._changed:
                if not chunk:
                    self._closed = True
                    self._changed.notify_all()
                    return
                self._raw += chunk
                self._ends.append((len(self._raw), now))
                self._changed.notify_all()

    @property
    def offset(self) -> int:
        """How many bytes the program has written so far."""
        with self._changed:
            return len(self._raw)

    def output(self, start: int = 0, end: int | None = None) -> bytes:
        """What the program wrote between two offsets."""
        with self._changed:
            return bytes(self._raw[start:end])

    def write(self, data: bytes) -> float:
        """`data` typed; the moment it was in the terminal's input."""
        os.write(self._master, data)
        return time.perf_counter()

    def wait_for(self, needle: bytes, start: int, timeout: float = 10.0) -> tuple[float, int]:
        """When `needle` was first read at or after offset `start`, and the offset after it."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = self._raw.find(needle, start)
                if found >= 0:
                    end = found + len(needle)
                    return next(t for offset, t in self._ends if offset >= end), end
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise PtyTimeout(f"{needle!r} never came in {timeout:g}s")
                self._changed.wait(left)

    def next_output(self, start: int, timeout: float = 10.0) -> float:
        """When the first bytes after offset `start` were read."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self._raw) <= start:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise PtyTimeout(f"no output in {timeout:g}s")
                self._changed.wait(left)
            return next(t for offset, t in self._ends if offset > start)

    def cpu_seconds(self) -> float:
        """User and system CPU time the program has used (from /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        """End the program (SIGTERM, then SIGKILL) and the terminal."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        os.close(self._master)
