"""The folders every settings test reads from: the user's, and a project's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The user folders, empty, and the environment that points at them."""
    (tmp_path / "stayer-home").mkdir()
    (tmp_path / "claude-home").mkdir()
    return {
        "STAYER_CONFIG_DIR": str(tmp_path / "stayer-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home"),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path
