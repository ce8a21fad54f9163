"""A strict fake editor for the tools' `EditorFiles` seam: buffers over the disk.

Like an editor a person works in, it holds open buffers whose text may differ from the disk;
a file with no buffer reads from the disk, and a write lands in a buffer (opening one), never
on the disk, so a test can tell which of the two a tool touched. Every call is recorded, and a
test may make the next calls fail."""

from __future__ import annotations

from pathlib import Path

from stayer.tools.base import ToolFailure


class FakeEditor:
    """Buffers by absolute path; `reads` and `writes` record what the tools asked for."""

    def __init__(self, buffers: dict[Path, str] | None = None) -> None:
        self.buffers: dict[Path, str] = dict(buffers or {})
        self.reads: list[Path] = []
        self.writes: list[tuple[Path, str]] = []
        self.failure: Exception | None = None
        """Raised by every call while set (an editor that went away, or refused)."""

    async def read_text(self, path: Path) -> str:
        """The buffer's text, else the file's on the disk."""
        assert path.is_absolute(), f"an editor is asked about absolute paths, not {path}"
        self.reads.append(path)
        if self.failure is not None:
            raise self.failure
        if path in self.buffers:
            return self.buffers[path]
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ToolFailure(f"The editor could not read {path}: {exc.strerror}.") from None

    async def write_text(self, path: Path, text: str) -> None:
        """Put `text` in the buffer of `path`; the disk is left alone (unsaved)."""
        assert path.is_absolute(), f"an editor is asked about absolute paths, not {path}"
        self.writes.append((path, text))
        if self.failure is not None:
            raise self.failure
        self.buffers[path] = text
