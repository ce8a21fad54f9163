"""A running command's output as whole lines for a live view, at a bounded rate.

Output arrives in chunks that end anywhere; a live view wants lines. `LineRelay` holds each
stream's unfinished line until its newline (or the end of the command), so stdout and stderr
lines are never torn into each other, and hands on complete lines in the order they completed.

It is bounded whatever the command prints: it delivers at most one batch per `interval_s`
(the first at once, the rest when the interval is up), each batch the latest `max_lines` lines
within `max_chars`, every line cut to `max_line_chars`; the lines left out are counted in the
batch after them. So a command that prints 100 MB costs its consumers a few small batches a
second, and the one after a quiet stretch arrives without delay. A line is shown as a terminal
would leave it: after its last carriage return (progress bars redraw themselves that way).
What a command printed is kept elsewhere (`capture`); this is for watching only.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from msgspec import Struct

PROGRESS_INTERVAL_S = 0.2
"""At most five batches a second per command, plus the last one when it ends."""

PROGRESS_MAX_LINES = 20
PROGRESS_MAX_CHARS = 4_000
PROGRESS_MAX_LINE_CHARS = 500


class OutputLines(Struct, frozen=True):
    """Whole lines a running command printed, each ending in a newline; `omitted` lines it
    printed just before them were left out to keep the view bounded."""

    text: str
    omitted: int = 0


class LineRelay:
    """Turns the chunks of a command's streams into bounded batches of whole lines."""

    def __init__(
        self,
        deliver: Callable[[OutputLines], None],
        *,
        interval_s: float = PROGRESS_INTERVAL_S,
        max_lines: int = PROGRESS_MAX_LINES,
        max_chars: int = PROGRESS_MAX_CHARS,
        max_line_chars: int = PROGRESS_MAX_LINE_CHARS,
    ) -> None:
        self._deliver = deliver
        self._interval_s = interval_s
        self._max_chars = max_chars
        self._max_line_chars = max_line_chars
        self._loop = asyncio.get_running_loop()
        self._tails: dict[int, str] = {}
        self._pending: deque[str] = deque(maxlen=max_lines)
        self._omitted = 0
        self._last_delivery: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def add(self, stream: int, text: str) -> None:
        """Take the next chunk of `stream` (any key naming it, such as its file descriptor)."""
        if self._closed or not text:
            return
        *complete, rest = (self._tails.get(stream, "") + text).split("\n")
        self._tails[stream] = self._bounded_tail(rest)
        if not complete:
            return
        keep = self._pending.maxlen or 1
        self._omitted += max(0, len(complete) - keep)
        for line in complete[-keep:]:
            self._push(line)
        self._schedule()

    def finish(self) -> None:
        """The command ended: deliver unfinished lines and everything pending now."""
        if self._closed:
            return
        for stream in sorted(self._tails):
            if self._tails[stream]:
                self._push(self._tails[stream])
        self._tails.clear()
        self._flush()
        self.close()

    def close(self) -> None:
        """Deliver nothing more, not even what is pending (the command was abandoned)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _push(self, line: str) -> None:
        if len(self._pending) == self._pending.maxlen:
            self._omitted += 1
        self._pending.append(self._visible(line))

    def _schedule(self) -> None:
        if self._timer is not None:
            return
        now = self._loop.time()
        due = now if self._last_delivery is None else self._last_delivery + self._interval_s
        if due <= now:
            self._flush()
        else:
            self._timer = self._loop.call_at(due, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if not self._closed:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        lines = list(self._pending)
        self._pending.clear()
        size = sum(len(line) + 1 for line in lines)
        while len(lines) > 1 and size > self._max_chars:
            size -= len(lines.pop(0)) + 1
            self._omitted += 1
        batch = OutputLines("".join(line + "\n" for line in lines), self._omitted)
        self._omitted = 0
        self._last_delivery = self._loop.time()
        self._deliver(batch)

    def _visible(self, line: str) -> str:
        """What a terminal shows of `line`, cut to the longest line a batch holds."""
        line = line.rstrip("\r")
        line = line[line.rfind("\r") + 1 :]
        if len(line) <= self._max_line_chars:
            return line
        return line[: self._max_line_chars] + "…"

    def _bounded_tail(self, tail: str) -> str:
        """An unfinished line, kept only as far as it can still be shown: from its last
        carriage return, and a little past the longest line, so its cut still shows."""
        restart = tail.rstrip("\r").rfind("\r")
        if restart >= 0:
            tail = tail[restart + 1 :]
        return tail[: self._max_line_chars + 2]
