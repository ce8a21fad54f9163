"""Test-wide guards: no connection may leave the machine, and no file goes to or comes from the
real home (stayer's own folder, `STAYER_CONFIG_DIR`, and Claude Code's, `CLAUDE_CONFIG_DIR`,
whose CLAUDE.md is a memory file, are temporary ones for every run under test, the CLI's
subprocesses included, unless a test names its own)."""

from __future__ import annotations

import ipaddress
import os
import socket
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

_real_connect = socket.socket.connect
os.environ["STAYER_CONFIG_DIR"] = tempfile.mkdtemp(prefix="stayer-tests-config-")
os.environ["CLAUDE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="stayer-tests-claude-")


def _is_local(address: Any) -> bool:
    if isinstance(address, str):  # a Unix socket path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise ConnectionRefusedError(f"tests may only connect to loopback, not {address!r}")
    _real_connect(self, address)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    yield
