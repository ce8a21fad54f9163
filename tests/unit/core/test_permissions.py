"""Permission modes and rules decide each call; denials explain themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.permissions import (
    PermissionPolicy,
    Rule,
    evaluate,
    lexical_subject,
    parse_mode,
    parse_rules,
    resolve_subject,
)
from stayer.permissions.shell import command_parts

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


@pytest.mark.parametrize(
    "command",
    [
        "git status #\ntouch X",  # a comment does not swallow the next line
        "git status x#y\ntouch X",
        "git status $\\\n(touch X)",  # backslash-newline joins into $( ... )
        "git status $'\\'\ntouch X\n#'",  # ANSI-C quoting
        "git status ${x:=$(touch X)}${x@P}",
        "git status > ~/.bashrc",  # a redirection writes a file
        "git status < /etc/shadow",
        "git status & touch X",
        "git status |& sh",
        "(git status; touch X)",
        "{ git status; touch X; }",
        "git statusfoo",  # the prefix form ends at a word boundary
        "git status\\\n; touch X",
    ],
)
def test_allow_rules_cannot_be_stretched_over_other_commands(command: str) -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(git status:*)"]))
    assert decide(policy, "Bash", command, False) == "deny", command


@pytest.mark.parametrize(
    "command",
    ["git status", "git status --short", "git status 2>&1", "git status >/dev/null 2>&1",
     "git status && git status -s", 'git status -- "a (quoted) name"'],
)  # fmt: skip
def test_allow_rules_still_cover_ordinary_commands(command: str) -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(git status:*)"]))
    assert decide(policy, "Bash", command, False) == "allow", command


@pytest.mark.parametrize(
    "command",
    ["FOO=1 rm x", "/bin/rm x", "command rm x", "env rm x", "(rm x)", "echo $(rm -rf x)",
     "ls #\nrm x", "sudo rm -rf /"],
)  # fmt: skip
def test_deny_rules_see_through_prefixes_and_opaque_commands(command: str) -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm:*)"]))
    assert decide(policy, "Bash", command, False) == "deny", command


def test_deny_rules_also_see_the_path_as_written(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "prod.env").write_text("SECRET=1")
    (tmp_path / ".env").symlink_to(tmp_path / "config" / "prod.env")
    policy = PermissionPolicy(deny=parse_rules(["Read(.env)", "Read(//etc/**)"]))

    def read(path: str) -> str:
        return evaluate(
            policy,
            tool="Read",
            subject=resolve_subject(path, tmp_path),
            read_only=True,
            cwd=tmp_path,
            subject_is_path=True,
            aliases=(lexical_subject(path, tmp_path),),
        ).behavior

    assert read(".env") == "deny"
    assert read("/etc/hosts") == "deny"
    assert read("config/prod.env") == "allow"
