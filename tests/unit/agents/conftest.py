"""A Claude Code user and project on disk: a home directory with its folders, a repository
with a subdirectory to start in, and a way to write files into them."""

from __future__ import annotations

from pathlib import Path

import pytest


def write(path: Path, text: str) -> Path:
    """Write `text` to `path`, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """An environment whose user folders are all under `home` (none set explicitly)."""
    return {"HOME": str(home)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path
