"""Fixtures for end-to-end tests: the real CLI against a fake model server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import FakeModelServer


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A scripted server; leftovers and history violations fail the test at teardown."""
    with FakeModelServer() as fake:
        yield fake
