"""Standard input as lines, for the event loop, without ever blocking it.

A thread of its own reads the descriptor with `os.read` and hands each complete line to the
loop: reading this way works on whatever standard input is (a pipe from the SDK, a file, a
terminal), changes no flag on the descriptor (a non-blocking pipe would be shared with the
process that gave it), and holds no lock of Python's buffered stdin, so the process may exit
while the thread still waits for input. The last line counts even without its newline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading

CHUNK = 1 << 16


class StdinLines:
    """Lines of a descriptor (standard input by default), read by a daemon thread."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._ended = False
        threading.Thread(target=self._read, name="stayer-stdin", daemon=True).start()

    async def next(self) -> bytes | None:
        """The next line (without its newline), or None once the input has ended."""
        if self._ended:
            return None
        line = await self._lines.get()
        self._ended = line is None
        return line

    def _read(self) -> None:
        parts: list[bytes] = []  # of the line not yet complete: a long one comes in many reads
        while True:
            try:
                chunk = os.read(self._fd, CHUNK)
            except OSError:  # closed under us, or not readable: the input has ended
                chunk = b""
            if not chunk:
                break
            *complete, rest = chunk.split(b"\n")
            if complete:
                self._put(b"".join([*parts, complete[0]]))
                for line in complete[1:]:
                    self._put(line)
                parts = []
            if rest:
                parts.append(rest)
        if parts:
            self._put(b"".join(parts))
        self._put(None)

    def _put(self, line: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody reads any more
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)
