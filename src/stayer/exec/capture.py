"""Keeping a bounded part of a process's output, and cutting output once with one true marker.

A stream is kept in memory as a `Captured`: its start, its end, and how many characters fell
between them, so memory stays bounded however much a command prints; a `Spool` may also copy it
whole to a file as it arrives, so whoever shows only part of it can point at all of it.
Whoever shows several streams together (Bash shows stdout, then stderr) cuts them with
`cut_streams`: one cut across all of them and one marker whose count is every character not
shown, stream by stream. Cutting text that was already cut would hide the first marker's count
inside the second cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from msgspec import Struct


class Captured(Struct, frozen=True):
    """One stream as kept: `head`, then `omitted` characters not kept, then `tail`.

    With nothing omitted, ``head + tail`` is the whole stream.
    """

    head: str
    tail: str = ""
    omitted: int = 0

    @property
    def length(self) -> int:
        """How long the whole stream was, kept or not."""
        return len(self.head) + self.omitted + len(self.tail)

    @property
    def text(self) -> str:
        """What was kept, with a marker where characters were dropped."""
        if not self.omitted:
            return self.head + self.tail
        return self.head + omission_marker(self.omitted) + self.tail

    @property
    def blank(self) -> bool:
        """Whether the stream held nothing but whitespace."""
        return not self.omitted and not (self.head + self.tail).strip()

    def rstrip(self) -> Captured:
        """The stream without trailing whitespace (as far as what was kept shows it)."""
        if not self.omitted:
            return Captured((self.head + self.tail).rstrip())
        return Captured(self.head, self.tail.rstrip(), self.omitted)


def omission_marker(omitted_chars: int) -> str:
    """The line that stands where `omitted_chars` characters of output were dropped."""
    return _marker([("", omitted_chars)])


def _marker(counts: Sequence[tuple[str, int]]) -> str:
    """The marker for characters dropped from named streams (an empty name is not named)."""
    lost = [(name, count) for name, count in counts if count]
    total = sum(count for _, count in lost)
    if len(lost) == 1 and lost[0][0]:
        what = f"{total} characters of {lost[0][0]} omitted"
    elif len(lost) > 1 and all(name for name, _ in lost):
        each = ", ".join(f"{count} of {name}" for name, count in lost)
        what = f"{total} characters omitted: {each}"
    else:
        what = f"{total} characters omitted"
    return f"\n\n... [{what}] ...\n\n"


def truncate_middle(text: str, max_chars: int) -> tuple[str, int]:
    """`text` cut to at most `max_chars` (the marker included) by dropping its middle; returns
    it and the count dropped.

    The cut snaps to line boundaries when one is near, so the result does not start or end
    mid-line.
    """
    return cut_streams([("", Captured(text))], max_chars)


def cut_streams(streams: Sequence[tuple[str, Captured]], max_chars: int) -> tuple[str, int]:
    """Named streams shown one after another (a newline between them), cut once in the middle
    to at most `max_chars`, the marker included; returns the text and the characters dropped.

    The marker counts every character of the streams that is not shown: those their capture
    already dropped and those this cut drops, per stream when the streams are named. The cut
    snaps to line boundaries when one is near.
    """
    total = sum(stream.length for _, stream in streams) + max(0, len(streams) - 1)
    if total <= max_chars and not any(stream.omitted for _, stream in streams):
        return "\n".join(stream.head + stream.tail for _, stream in streams), 0
    # The real marker is no longer than one naming every stream with the largest count.
    room = max(0, max_chars - len(_marker([(name, total) for name, _ in streams])))
    prefix, suffix = _known_ends([stream for _, stream in streams])
    tail_take = min(len(suffix), room - room // 2)
    head_take = min(len(prefix), room - tail_take)
    tail_take = min(len(suffix), room - head_take)
    head = _snap_head(prefix[:head_take])
    tail = _snap_tail(suffix[len(suffix) - tail_take :] if tail_take else "")
    counts = _dropped_per_stream(streams, len(head), total - len(tail))
    return head + _marker(counts) + tail, sum(count for _, count in counts)


def _known_ends(streams: Sequence[Captured]) -> tuple[str, str]:
    """The joined text up to the first dropped stretch, and from the last one on."""
    parts: list[str | int] = []  # text kept, or the length of a stretch not kept
    for index, stream in enumerate(streams):
        if index:
            parts.append("\n")
        if stream.omitted:
            parts += [stream.head, stream.omitted, stream.tail]
        else:
            parts += [stream.head, stream.tail]
    gaps = [index for index, part in enumerate(parts) if isinstance(part, int)]
    if not gaps:
        whole = "".join(part for part in parts if isinstance(part, str))
        return whole, whole
    prefix = "".join(part for part in parts[: gaps[0]] if isinstance(part, str))
    suffix = "".join(part for part in parts[gaps[-1] + 1 :] if isinstance(part, str))
    return prefix, suffix


def _snap_head(head: str) -> str:
    newline = head.rfind("\n")
    return head[: newline + 1] if newline >= len(head) // 2 else head


def _snap_tail(tail: str) -> str:
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) // 2 else tail


def _dropped_per_stream(
    streams: Sequence[tuple[str, Captured]], cut_start: int, cut_end: int
) -> list[tuple[str, int]]:
    """How many characters of each stream lie in [cut_start, cut_end) of the joined text."""
    counts: list[tuple[str, int]] = []
    start = 0
    for name, stream in streams:
        end = start + stream.length
        counts.append((name, max(0, min(end, cut_end) - max(start, cut_start))))
        start = end + 1  # the newline between streams is ours, not the command's
    return counts


class HeadTail:
    """Keeps the first and last characters of a stream, counting what falls between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self._dropped = 0

    def add(self, text: str) -> None:
        """Take the next piece of the stream."""
        room = self._head_limit - self._head_len
        if room > 0:
            taken = text[:room]
            self._head.append(taken)
            self._head_len += len(taken)
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        # Compacting only when the tail doubles keeps the cost linear in the output size.
        if self._tail_len > 2 * self._tail_limit:
            self._keep_tail()

    def _keep_tail(self) -> None:
        joined = "".join(self._tail)
        kept = joined[len(joined) - self._tail_limit :] if self._tail_limit else ""
        self._dropped += len(joined) - len(kept)
        self._tail = [kept]
        self._tail_len = len(kept)

    def captured(self) -> Captured:
        """Everything kept so far, and the count dropped."""
        if self._tail_len > self._tail_limit:
            self._keep_tail()
        return Captured("".join(self._head), "".join(self._tail), self._dropped)


class Spool:
    """Copies a stream to an open file as it arrives, up to `max_chars` characters.

    The cap keeps a command that prints without end from filling the disk; `dropped` counts
    what did not fit, so whoever points at the file can say it is not all there.
    """

    def __init__(self, file: TextIO, max_chars: int) -> None:
        self.file = file
        self.max_chars = max_chars
        self.written = 0
        self.lines = 0
        self.dropped = 0
        self.ends_with_newline = False

    def add(self, text: str) -> None:
        """Write the next piece of the stream, as far as the cap allows."""
        taken = text[: max(0, self.max_chars - self.written)]
        self.dropped += len(text) - len(taken)
        if not taken:
            return
        self.file.write(taken)
        self.written += len(taken)
        self.lines += taken.count("\n")
        self.ends_with_newline = taken.endswith("\n")
