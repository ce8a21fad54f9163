"""Bash's output copied whole to the session's folder while the command runs.

Memory keeps only the start and end of each stream (`exec.capture`), so the whole of a long
output exists only if it is written down as it arrives: stdout to the result's file, stderr
beside it, joined after the command ends (stdout, then stderr, as the result shows them). Output
that fits one result is not kept: the files are removed.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from stayer.exec import Spool
from stayer.tools.base import ToolContext
from stayer.tools.saved import open_private, result_path

MAX_SAVED_CHARS = 10_000_000
"""The most of each stream saved, so a command that prints without end cannot fill the disk."""


class SavedOutput:
    """The files one Bash call's stdout and stderr are copied to as they arrive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stderr_path = path.with_name(f"{path.stem}.stderr.txt")
        stdout = open_private(path)
        try:
            stderr = open_private(self._stderr_path)
        except OSError:
            stdout.close()
            path.unlink(missing_ok=True)
            raise
        self.stdout = Spool(stdout, MAX_SAVED_CHARS)
        self.stderr = Spool(stderr, MAX_SAVED_CHARS)

    @classmethod
    def for_call(cls, ctx: ToolContext) -> SavedOutput | None:
        """Files for the call `ctx` runs, or None with no session folder or none writable."""
        if ctx.session_dir is None or ctx.tool_use_id is None:
            return None
        try:
            return cls(result_path(ctx.session_dir, ctx.tool_use_id))
        except OSError:
            return None

    @property
    def spools(self) -> tuple[Spool, Spool]:
        """Stdout's and stderr's spools, for `run_command`."""
        return self.stdout, self.stderr

    def _separator(self) -> str:
        needed = self.stdout.written and self.stderr.written and not self.stdout.ends_with_newline
        return "\n" if needed else ""

    @property
    def chars(self) -> int:
        """How many characters the joined file holds."""
        return self.stdout.written + len(self._separator()) + self.stderr.written

    @property
    def lines(self) -> int:
        """How many lines Read shows for the joined file."""
        newlines = self.stdout.lines + len(self._separator()) + self.stderr.lines
        last = self.stderr if self.stderr.written else self.stdout
        return newlines + (1 if last.written and not last.ends_with_newline else 0)

    def keep(self) -> Path:
        """Join stderr onto stdout in one file and return its path; raises `OSError`."""
        separator = self._separator()
        self.close()
        with self.path.open("a", encoding="utf-8", newline="") as joined:
            joined.write(separator)
            with self._stderr_path.open(encoding="utf-8", newline="") as stderr:
                shutil.copyfileobj(stderr, joined)
        self._stderr_path.unlink()
        return self.path

    def close(self) -> None:
        """Stop writing (safe to call more than once)."""
        for spool in self.spools:
            spool.file.close()

    def discard(self) -> None:
        """Remove the files: the output fitted one result, or the call failed."""
        self.close()
        for path in (self.path, self._stderr_path):
            with contextlib.suppress(OSError):
                path.unlink()
