"""Shows the permission corpus's counts at the end of a run that collected it."""

from __future__ import annotations

import pytest

CORPUS = "test_permission_corpus.py::"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line: how many bypass attempts were refused and ordinary commands allowed."""

    def counted(outcome: str, test: str) -> int:
        reports = terminalreporter.stats.get(outcome, [])
        return sum(1 for r in reports if f"{CORPUS}{test}[" in getattr(r, "nodeid", ""))

    refused = counted("passed", "test_bypass_attempt_is_not_allowed")
    known = counted("xfailed", "test_bypass_attempt_is_not_allowed")
    allowed = counted("passed", "test_ordinary_command_is_allowed")
    if refused or known or allowed:
        terminalreporter.write_line(
            f"permission corpus: {refused} bypass attempts refused, {known} known holes "
            f"(xfail), {allowed} ordinary commands allowed"
        )
