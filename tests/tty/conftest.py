"""Fixtures of the terminal tests: the fake model server, and panes running stayer on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import FakeModelServer
from tests.tty.harness import OpenPane, Pane, opened


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
def open_pane(tmp_path: Path, server: FakeModelServer) -> OpenPane:
    """`open_pane(*args, cols=, rows=, plain=, env=, repo=)`: a pane running `stayer ARGS` on
    the test's fake server, closed when its `with` block ends."""

    def start(*args: str, **options: Any) -> AbstractContextManager[Pane]:
        return opened(tmp_path, server, *args, **options)

    return start


@pytest.fixture
def pane(open_pane: OpenPane) -> Iterator[Pane]:
    """`stayer` with no arguments in a 100x30 pane, its welcome and input box on screen."""
    with open_pane() as opened_pane:
        opened_pane.wait_idle()
        yield opened_pane
