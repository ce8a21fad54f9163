"""Inline snapshots are only compared by a plain test run: `./test` never writes one back."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
COMPARING_ONLY = {"report", "short-report", "disable"}
"""inline-snapshot's flags that change no file; `create`, `fix`, `update`, `trim` and `review`
write tests (review after asking), which only a person asking for them should get."""


def test_a_plain_run_compares_snapshots_and_writes_none() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["inline-snapshot"]
    # Without its own setting inline-snapshot creates and reviews snapshots in a terminal.
    assert set(config["default-flags"]) <= COMPARING_ONLY
    assert set(config["default-flags-tui"]) <= COMPARING_ONLY
