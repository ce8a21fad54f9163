"""Permission modes and rules decide each call; denials explain themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.permissions import PermissionPolicy, Rule, evaluate, parse_mode, parse_rules


def decide(policy: PermissionPolicy, tool: str, subject: str | None, read_only: bool) -> str:
    return evaluate(
        policy, tool=tool, subject=subject, read_only=read_only, cwd=Path("/w")
    ).behavior


def test_default_mode_allows_reading_and_denies_changes_with_a_way_out() -> None:
    policy = PermissionPolicy()
    assert decide(policy, "Read", "/w/a", True) == "allow"
    decision = evaluate(policy, tool="Bash", subject="rm -rf x", read_only=False, cwd=Path("/w"))
    assert decision.behavior == "deny"
    assert "--allowedTools Bash" in decision.reason


def test_bypass_allows_everything_but_deny_rules_still_win() -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm *)"]))
    assert decide(policy, "Bash", "ls", False) == "allow"
    assert decide(policy, "Bash", "rm -rf /", False) == "deny"


def test_allow_rules_with_specifiers() -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(git diff:*),Bash(npm test)", "Write"]))
    assert decide(policy, "Bash", "git diff --stat", False) == "allow"
    assert decide(policy, "Bash", "npm test", False) == "allow"
    assert decide(policy, "Bash", "npm publish", False) == "deny"
    assert decide(policy, "Write", "/anywhere", False) == "allow"


def test_accept_edits_allows_edits_inside_the_working_directory_only() -> None:
    policy = PermissionPolicy(mode="acceptEdits")
    assert decide(policy, "Edit", "/w/src/a.py", False) == "allow"
    assert decide(policy, "Edit", "src/a.py", False) == "allow"
    assert decide(policy, "Edit", "/etc/passwd", False) == "deny"
    assert decide(policy, "Bash", "make", False) == "deny"


def test_plan_mode_denies_changes_even_with_an_explanation() -> None:
    decision = evaluate(
        PermissionPolicy(mode="plan"), tool="Write", subject="/w/x", read_only=False, cwd=Path("/w")
    )
    assert decision.behavior == "deny" and "plan mode" in decision.reason


def test_whole_tool_deny_rules_hide_the_tool() -> None:
    policy = PermissionPolicy(deny=parse_rules(["Bash", "Edit(/secret/*)"]))
    assert policy.hides("Bash")
    assert not policy.hides("Edit")


def test_modes_and_rules_reject_nonsense_in_one_line() -> None:
    assert parse_mode("manual") == "default"
    with pytest.raises(ConfigError, match="unknown permission mode 'yolo'; use one of: default"):
        parse_mode("yolo")
    with pytest.raises(ConfigError, match="bad permission rule"):
        Rule.parse("Bash(")
