"""Results too long for the model: saved whole to a file, with a preview that points at it.

A result over its tool's limit is written to `<session folder>/tool-results/<tool_use_id>.txt`,
readable by its owner only (output can hold secrets), and the model gets its start, its end and
the path, so it can Read or Grep the rest instead of losing the middle for good, as Claude Code
does. The preview is small on purpose: the point of saving is to keep the context free.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TextIO

from stayer.exec import Captured, cut_streams

RESULTS_DIR = "tool-results"
PREVIEW_CHARS = 3_000
"""How much of a saved result the model sees: its start and end, a marker between them."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def result_path(session_dir: Path, tool_use_id: str, part: int = 0) -> Path:
    """Where the `part`-th oversized text of the call `tool_use_id` is saved."""
    name = _UNSAFE.sub("_", tool_use_id) or "result"
    if part:
        name = f"{name}-{part + 1}"
    return session_dir / RESULTS_DIR / f"{name}.txt"


def open_private(path: Path) -> TextIO:
    """`path` opened for writing, created owner-only (0600) with owner-only folders."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # newline="" writes the text exactly, so Read's line numbers match what the tool returned
    return os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="")


def save_text(path: Path, text: str) -> None:
    """Write `text` whole to `path` (owner-only); raises `OSError` when it cannot."""
    with open_private(path) as file:
        file.write(text)


def count_lines(text: str) -> int:
    """How many lines Read would show for `text`."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def preview(
    streams: list[tuple[str, Captured]],
    *,
    path: Path,
    chars: int,
    lines: int,
    limit: int,
) -> str:
    """What the model sees of a saved result: a note with the path, then its start and end.

    `streams` are the result's parts as kept in memory (Bash's stdout and stderr, or one text);
    `chars` and `lines` describe the file.
    """
    body, _ = cut_streams(streams, PREVIEW_CHARS)
    note = (
        f"[This result has {chars} characters ({lines} lines), more than the {limit} one result "
        f"may hold here, so it was saved to {path}. Its start and end follow. To see "
        "the rest, Read that file with offset and limit (in lines), or Grep it for what you "
        "need.]"
    )
    return f"{note}\n\n{body}"
