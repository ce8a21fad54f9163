"""What the batch's tests share: one fake model server per test, and a source repository of
one commit (tests that need a richer one, `test_workspace`, make their own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.git_repos import git
from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A git repository at `tmp_path/source` with one commit holding README.md."""
    path = tmp_path / "source"
    path.mkdir()
    git(path, "init", "-q")
    (path / "README.md").write_text("hello\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "first")
    return path
