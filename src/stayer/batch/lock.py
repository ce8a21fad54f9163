"""One batch per output folder at a time.

Two batches writing the same `results.jsonl` would each run the tasks the other is running and
both append their lines, breaking "one line per task". The batch holds an exclusive lock on
`DIR/.batch.lock` while it runs; the operating system lets go of it when the process ends, a
kill included, so a lock is never left behind.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stayer.errors import ConfigError

LOCK_FILE = ".batch.lock"


class OutputBusy(ConfigError):
    """Another batch is running with the same output folder."""


class OutputUnusable(ConfigError):
    """The output folder, or the results file in it, cannot be made, read or written."""


@contextmanager
def holding(out_dir: Path) -> Iterator[None]:
    """Hold `out_dir` for this batch (making the folder); raises `OutputBusy` in one line when
    another process holds it, `OutputUnusable` when it cannot be a folder this user writes."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(out_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise OutputUnusable(f"batch: cannot use --out {out_dir}: {_why(out_dir, error)}") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputBusy(
                f"another stayer batch is running with --out {out_dir}; wait for it to end, "
                "or give another folder"
            ) from None
        yield
    finally:
        os.close(descriptor)


def _why(out_dir: Path, error: OSError) -> str:
    """What is wrong with `out_dir`, and what to do, in a few words."""
    if out_dir.exists() and not out_dir.is_dir():
        return "it is a file, not a folder; give a folder (it is made if missing)"
    if isinstance(error, NotADirectoryError):
        return "a part of that path is a file; give a path of folders"
    return f"{error.strerror or error}; give a folder you can write to"
