"""Standard input as lines, for the event loop, without ever blocking it.

A thread of its own reads the descriptor with `os.read` and hands each complete line to the
loop: reading this way works on whatever standard input is (a pipe from the SDK, a file, a
terminal), changes no flag on the descriptor (a non-blocking pipe would be shared with the
process that gave it), and holds no lock of Python's buffered stdin, so the process may exit
while the thread still waits for input. The last line counts even without its newline.

A line is at most `MAX_LINE` bytes: the rest of a longer one, up to its newline, is read and
dropped as it comes (memory stays bounded whatever is sent), and the line is a `TooLong`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading

from msgspec import Struct

from .frames import BadInput

CHUNK = 1 << 16

MAX_LINE = 64 << 20
"""64 MiB: room for a message of several base64 images at the model APIs' own size limits
(claude-agent-sdk puts no limit on what it writes; it reads our lines with a 1 MiB buffer)."""

HEAD = 512
"""How much of a line over the limit is kept, to tell what it was."""

_USER_LINE = re.compile(rb'\s*\{\s*"type"\s*:\s*"user"')
"""How the SDK starts a user message's line (its `type` first)."""

_REPLY_LINE = re.compile(rb'\s*\{\s*"type"\s*:\s*"control_response"')
_REQUEST_ID = re.compile(rb'"request_id"\s*:\s*"([A-Za-z0-9_.:-]{1,200})"')


class TooLong(Struct, frozen=True):
    """A line longer than `limit` bytes, dropped; `head`: its first bytes."""

    limit: int
    head: bytes

    @property
    def error(self) -> str:
        most = f"{self.limit >> 20} MiB" if self.limit >= 1 << 20 else f"{self.limit} bytes"
        return (
            f"an input line is longer than {most} and was dropped; "
            "send smaller messages (images at most a few MiB each)"
        )

    def bad_input(self) -> BadInput:
        """What the session says about it: a user message is owed its error result."""
        return BadInput(self.error, bool(_USER_LINE.match(self.head)))

    def answered(self) -> str | None:
        """The id of stayer's request it was a reply to, when it says (the SDK writes the
        id first): that request fails rather than wait for a reply that will not come."""
        if not _REPLY_LINE.match(self.head):
            return None
        found = _REQUEST_ID.search(self.head)
        return found[1].decode() if found else None


class StdinLines:
    """Lines of a descriptor (standard input by default), read by a daemon thread."""

    def __init__(self, fd: int = 0, limit: int = MAX_LINE) -> None:
        self._fd = fd
        self._limit = limit
        self._lines: asyncio.Queue[bytes | TooLong | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._ended = False
        threading.Thread(target=self._read, name="stayer-stdin", daemon=True).start()

    async def next(self) -> bytes | TooLong | None:
        """The next line (without its newline), a `TooLong` for one over the limit, or None
        once the input has ended."""
        if self._ended:
            return None
        line = await self._lines.get()
        self._ended = line is None
        return line

    def _read(self) -> None:
        line = _Line(self._limit)
        while True:
            try:
                chunk = os.read(self._fd, CHUNK)
            except OSError:  # closed under us, or not readable: the input has ended
                chunk = b""
            if not chunk:
                break
            *complete, rest = chunk.split(b"\n")
            for part in complete:
                line.add(part)
                self._put(line.take())
            if rest:
                line.add(rest)
        if not line.empty:
            self._put(line.take())
        self._put(None)

    def _put(self, line: bytes | TooLong | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody reads any more
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)


class _Line:
    """The line being read, in parts (a long one comes in many reads), up to `limit` bytes:
    past it only its first bytes are kept, to tell what it was."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.head: bytes | None = None  # set once the line is over the limit

    @property
    def empty(self) -> bool:
        return self.size == 0

    def add(self, part: bytes) -> None:
        self.size += len(part)
        if self.head is not None:
            return
        if self.size <= self.limit:
            self.parts.append(part)
            return
        self.head = b"".join([*self.parts[:8], part])[:HEAD]
        self.parts = []

    def take(self) -> bytes | TooLong:
        """The line read, and start the next."""
        head, parts = self.head, self.parts
        self.parts, self.size, self.head = [], 0, None
        if head is not None:
            return TooLong(self.limit, head)
        return b"".join(parts)
