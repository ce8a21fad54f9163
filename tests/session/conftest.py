"""Shows the attack corpus's counts at the end of a run that collected it."""

from __future__ import annotations

import pytest

CORPUS = "test_attack_corpus.py::"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line: how many attacks were refused with no effect, and ordinary commands run."""

    def counted(outcome: str, test: str) -> int:
        reports = terminalreporter.stats.get(outcome, [])
        return sum(1 for r in reports if f"{CORPUS}{test}[" in getattr(r, "nodeid", ""))

    refused = counted("passed", "test_an_attack_is_refused_and_has_no_effect")
    failed = counted("failed", "test_an_attack_is_refused_and_has_no_effect")
    ordinary = counted("passed", "test_an_ordinary_command_runs_unasked")
    if refused or failed or ordinary:
        terminalreporter.write_line(
            f"attack corpus: {refused} attacks refused with no effect, {failed} got through, "
            f"{ordinary} ordinary commands ran unasked"
        )
