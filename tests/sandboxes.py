"""Sandboxes for tests, and what tests look at to see one hold: host processes by a marker in
their command line, and a place outside /tmp to try writing to."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from stayer.exec import Sandbox, close_sandbox, make_sandbox, sandbox_problem


def skip_without_sandbox(cwd: Path) -> None:
    """Skip the test, saying why, where bubblewrap cannot run (not installed, no namespaces)."""
    problem = sandbox_problem(Sandbox((cwd,)), cwd=cwd)
    if problem:
        pytest.skip(f"bubblewrap cannot run here: {problem}")


@contextmanager
def working_sandbox(writable: Sequence[Path], *, network: bool = False) -> Iterator[Sandbox]:
    """A session's sandbox (its own /tmp) for `writable`, or the test skipped with the reason."""
    skip_without_sandbox(writable[0])
    sandbox = make_sandbox(writable, network=network)
    try:
        yield sandbox
    finally:
        close_sandbox(sandbox)


@contextmanager
def outside_tmp() -> Iterator[Path]:
    """A fresh directory anyone may write to unsandboxed, outside /tmp (which a sandbox swaps
    for its own), so a write there fails only because the sandbox makes it read-only."""
    path = Path(tempfile.mkdtemp(prefix="stayer-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def running_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line holds `marker` (a sandbox's pid
    namespace gives its processes other pids inside, so `$!` cannot name them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found
