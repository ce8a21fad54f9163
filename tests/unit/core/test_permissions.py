"""Permission modes and rules decide each call; denials explain themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.permissions import (
    PermissionPolicy,
    Rule,
    command_parts,
    evaluate,
    parse_mode,
    parse_rules,
    resolve_subject,
)

PATH_TOOLS = {"Read", "Write", "Edit", "Glob", "Grep"}


def decide(policy: PermissionPolicy, tool: str, subject: str | None, read_only: bool) -> str:
    """Decide as the session does: path subjects are resolved first."""
    is_path = tool in PATH_TOOLS
    if is_path:
        subject = resolve_subject(subject, Path("/w"))
    decision = evaluate(
        policy,
        tool=tool,
        subject=subject,
        read_only=read_only,
        cwd=Path("/w"),
        subject_is_path=is_path,
    )
    return decision.behavior


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


def test_an_allow_rule_must_cover_every_part_of_a_compound_command() -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(git status:*)", "Bash(ls:*)"]))
    assert decide(policy, "Bash", "git status && ls -la", False) == "allow"
    assert decide(policy, "Bash", "git status; echo PWNED > f", False) == "deny"
    assert decide(policy, "Bash", "git status\nrm -rf x", False) == "deny"
    assert decide(policy, "Bash", "git status | sh", False) == "deny"
    assert decide(policy, "Bash", "git status $(rm -rf x)", False) == "deny"
    assert decide(policy, "Bash", "git status `rm -rf x`", False) == "deny"


def test_a_deny_rule_catches_one_part_of_a_compound_command() -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm:*)"]))
    assert decide(policy, "Bash", "cd build && rm -rf out", False) == "deny"
    assert decide(policy, "Bash", "echo 'rm is fine inside quotes'", False) == "allow"


def test_command_parts_respect_quotes() -> None:
    assert command_parts("git commit -m 'a; b' && ls") == ["git commit -m a; b", "ls"]
    assert command_parts("echo 'unbalanced") is None


def test_paths_are_judged_where_they_really_point() -> None:
    policy = PermissionPolicy(mode="acceptEdits", allow=parse_rules(["Write(notes/*)"]))
    assert decide(policy, "Edit", "~/outside.txt", False) == "deny"
    assert decide(policy, "Edit", "src/../../etc/passwd", False) == "deny"
    assert decide(policy, "Write", "/w/notes/today.md", False) == "allow"
    strict = PermissionPolicy(allow=parse_rules(["Write(notes/*)"]))
    assert decide(strict, "Write", "notes/today.md", False) == "allow"
    assert decide(strict, "Write", "notes/../secrets.md", False) == "deny"
