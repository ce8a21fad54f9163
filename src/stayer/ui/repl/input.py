"""The prompt history of one project, kept across sessions: what Up/Down and Ctrl+R walk.

Each project (working directory) has one file, `<config root>/history/<project slug>.jsonl`,
one JSON string per line, newest last. A line is a whole entry, so a prompt of many lines or a
large paste comes back as it was typed. Several stayer processes may share the file: each
entry is appended with one `write` on a descriptor opened with O_APPEND, so entries never
interleave, and a line that is torn (a process killed mid-write) or garbled is skipped when
read, never fatal. Only the newest `MAX_ENTRIES` are loaded, read from the end of the file (and
no more than `MAX_LOAD_BYTES` of it), so a history that has grown for years costs no more to
open than a young one.

An entry is kept as it was sent: given `expand` (`Pastes.expand`), the placeholders of large
pastes are replaced by the pastes before the entry is stored, so a prompt recalled in a later
session, when those pastes are long forgotten, is still whole. prompt_toolkit's buffer adds its
text to the history after its accept handler has run, so the pastes must outlive that handler.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import msgspec
from prompt_toolkit.history import History

from stayer.session.paths import config_root, project_slug

MAX_ENTRIES = 1_000
"""How many entries a session loads (the newest)."""
MAX_LOAD_BYTES = 32 * 1024 * 1024
"""And how much of the file at most: a thousand large pastes should not slow the start."""

_BLOCK = 65_536
_decode = msgspec.json.Decoder(str)


def history_file(cwd: Path, env: Mapping[str, str]) -> Path:
    """Where the prompts typed in `cwd` are kept (beside, not among, its transcripts)."""
    return config_root(env) / "history" / f"{project_slug(cwd)}.jsonl"


class ProjectHistory(History):
    """prompt_toolkit history over one project's file (see the module)."""

    def __init__(
        self,
        path: Path,
        *,
        max_entries: int = MAX_ENTRIES,
        max_bytes: int = MAX_LOAD_BYTES,
        expand: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._expand = expand

    def append_string(self, string: str) -> None:
        """Add an entry, its paste placeholders expanded (see the module)."""
        super().append_string(self._expand(string) if self._expand else string)

    def load_history_strings(self) -> Iterable[str]:
        """The newest entries first, at most `max_entries` of them from the last `max_bytes` of
        the file; a missing or unreadable file is an empty history."""
        count = size = 0
        try:
            for line in _lines_from_end(self.path):
                size += len(line) + 1
                entry = _entry(line) if size <= self.max_bytes else None
                if entry is not None:
                    yield entry
                    count += 1
                if count >= self.max_entries or size > self.max_bytes:
                    return
        except OSError:
            return

    def store_string(self, string: str) -> None:
        """Append one entry as one line; a history that cannot be written is not worth
        stopping the session for, so failures are dropped."""
        line = msgspec.json.encode(string) + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            # A line torn by a process that died mid-write has no newline: start afresh, so
            # only that entry is lost, not this one too.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            os.write(fd, line)
        except OSError:
            pass
        finally:
            os.close(fd)


def _entry(line: bytes) -> str | None:
    """The entry a line holds; None for a blank, torn or garbled line."""
    if not line.strip():
        return None
    try:
        return _decode.decode(line)
    except msgspec.DecodeError:
        return None


def _lines_from_end(path: Path) -> Iterator[bytes]:
    """The file's lines, last first, read backwards a block at a time."""
    with path.open("rb") as file:
        position = file.seek(0, os.SEEK_END)
        rest = b""
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            file.seek(position)
            rest = file.read(step) + rest
            *complete, rest = _split_keep_first(rest)
            yield from reversed(complete)
        if rest:
            yield rest


def _split_keep_first(data: bytes) -> list[bytes]:
    """`data` split at newlines, the (maybe partial) first piece moved to the end, so the
    caller can keep it for the next block: [whole lines..., first piece]."""
    pieces = data.split(b"\n")
    return [*pieces[1:], pieces[0]]
