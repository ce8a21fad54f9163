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


_CORPORA = (
    ("test_permission_corpus.py::", "test_bypass_attempt_is_not_allowed",
     "test_ordinary_command_is_allowed",
     "permission corpus: {passed} bypass attempts refused, {failed} got through, {ordinary} "
     "ordinary commands allowed"),
    ("test_attack_corpus.py::", "test_an_attack_is_refused_and_has_no_effect",
     "test_an_ordinary_command_runs_unasked",
     "attack corpus: {passed} attacks refused with no effect, {failed} got through, "
     "{ordinary} ordinary commands ran unasked"),
)  # fmt: skip


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per corpus the run collected: attempts refused, attempts that got through,
    and ordinary commands allowed."""

    def counted(outcome: str, module: str, test: str) -> int:
        reports = terminalreporter.stats.get(outcome, [])
        return sum(1 for r in reports if f"{module}{test}[" in getattr(r, "nodeid", ""))

    for module, attack, ordinary, line in _CORPORA:
        passed = counted("passed", module, attack)
        failed = counted("failed", module, attack)
        allowed = counted("passed", module, ordinary)
        if passed or failed or allowed:
            terminalreporter.write_line(line.format(passed=passed, failed=failed, ordinary=allowed))
