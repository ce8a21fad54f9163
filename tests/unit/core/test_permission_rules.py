"""Rule forms (gitignore paths, domains, MCP servers), deny > ask > allow, and the live mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.permissions import (
    PermissionPolicy,
    PermissionState,
    Rule,
    evaluate,
    parse_rules,
)
from stayer.tools.base import SubjectKind

CWD = Path("/w")
HOME = Path.home()


def matches(rule: str, path: str, *, root: Path | None = None) -> bool:
    return Rule.parse(rule, root=root).matches("Read", path, CWD, kind="path")


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("Read(*.env)", "/w/.env", True),  # `*` may be empty and dotfiles are not special
        ("Read(*.env)", "/w/prod.env", True),
        ("Read(*.env)", "/w/config/deep/prod.env", True),  # no slash inside: any depth
        ("Read(*.env)", "/elsewhere/prod.env", False),  # below the working directory only
        ("Read(.env)", "/w/sub/.env", True),
        ("Read(./.env)", "/w/sub/.env", False),  # `./` anchors it
        ("Read(./.env)", "/w/.env", True),
        ("Read(secrets/**)", "/w/secrets/a/b.key", True),
        ("Read(secrets/**)", "/w/src/secrets/a.key", False),  # a slash inside anchors it
        ("Read(secrets)", "/w/secrets/a.key", True),  # a directory covers what is in it
        ("Read(src/*.py)", "/w/src/a.py", True),
        ("Read(src/*.py)", "/w/src/pkg/a.py", False),  # `*` stops at `/`
        ("Read(src/**/*.py)", "/w/src/a.py", True),  # `**/` may be no directory at all
        ("Read(src/**/*.py)", "/w/src/pkg/deep/a.py", True),
        ("Read(src/?.py)", "/w/src/a.py", True),
        ("Read(src/[ab].py)", "/w/src/c.py", False),
        ("Read(src/[!ab].py)", "/w/src/c.py", True),
        ("Read(//etc/**)", "/etc/ssh/sshd_config", True),
        ("Read(//etc/**)", "/w/etc/x", False),
        ("Read(~/notes/*)", str(HOME / "notes" / "a.md"), True),
        ("Read(~/notes/*)", "/w/notes/a.md", False),
    ],
)
def test_path_rules_read_like_gitignore(rule: str, path: str, expected: bool) -> None:
    assert matches(rule, path) is expected, (rule, path)


def test_a_rooted_pattern_is_relative_to_the_settings_file_that_holds_it() -> None:
    settings_dir = Path("/projects/app")
    assert matches("Read(/build/**)", "/projects/app/build/out.js", root=settings_dir)
    assert not matches("Read(/build/**)", "/w/build/out.js", root=settings_dir)
    # a flag rule has no settings file: its root is the working directory
    assert matches("Read(/build/**)", "/w/build/out.js")
    assert parse_rules(["Read(/x)"], root=settings_dir) == (Rule("Read", "/x", settings_dir),)


def test_domain_rules_may_cover_subdomains_with_a_wildcard() -> None:
    rule = Rule.parse("WebFetch(domain:*.example.com)")
    assert rule.matches("WebFetch", "docs.example.com", CWD, kind="domain")
    assert rule.matches("WebFetch", "a.b.EXAMPLE.com", CWD, kind="domain")
    assert not rule.matches("WebFetch", "example.com", CWD, kind="domain")
    assert not rule.matches("WebFetch", "example.com.evil.test", CWD, kind="domain")


@pytest.mark.parametrize(
    ("rule", "tool", "expected"),
    [
        ("mcp__github", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__delete_repo", False),
        ("mcp__github", "mcp__githubby__x", False),
        ("mcp__git", "mcp__github__x", False),
    ],
)
def test_mcp_rules_name_a_tool_or_a_whole_server(rule: str, tool: str, expected: bool) -> None:
    assert Rule.parse(rule).matches(tool, None, CWD) is expected
    assert PermissionPolicy(deny=parse_rules([rule])).hides(tool) is expected


def decide(
    policy: PermissionPolicy,
    tool: str,
    subject: str | None,
    *,
    kind: SubjectKind = "none",
    read_only: bool = False,
    exits_plan: bool = False,
) -> str:
    return evaluate(
        policy,
        tool=tool,
        subject=subject,
        read_only=read_only,
        cwd=CWD,
        subject_kind=kind,
        exits_plan=exits_plan,
    ).behavior


def test_deny_beats_ask_beats_allow_whatever_the_mode() -> None:
    rules = {
        "allow": parse_rules(["Bash"]),
        "ask": parse_rules(["Bash(git push:*)"]),
        "deny": parse_rules(["Bash(git push --force:*)"]),
    }
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        policy = PermissionPolicy(mode=mode, **rules)  # type: ignore[arg-type]
        assert decide(policy, "Bash", "git status", kind="command") == "allow", mode
        assert decide(policy, "Bash", "git push origin", kind="command") == "ask", mode
        assert decide(policy, "Bash", "git push --force x", kind="command") == "deny", mode


def test_an_ask_rule_names_itself_and_asks_even_for_a_read() -> None:
    policy = PermissionPolicy(ask=parse_rules(["Read(secrets/**)"]))
    decision = evaluate(
        policy, tool="Read", subject="/w/secrets/k", read_only=True, cwd=CWD, subject_kind="path"
    )
    assert (decision.behavior, decision.rule) == ("ask", "Read(secrets/**)")
    assert decide(policy, "Read", "/w/src/k", kind="path", read_only=True) == "allow"


def test_dont_ask_turns_every_ask_into_a_denial_and_allows_the_rest() -> None:
    policy = PermissionPolicy(mode="dontAsk", ask=parse_rules(["Read(secrets/**)"]))
    assert decide(policy, "Read", "/w/secrets/k", kind="path", read_only=True) == "deny"
    assert decide(policy, "Read", "/w/src/k", kind="path", read_only=True) == "allow"
    denial = evaluate(policy, tool="Bash", subject="make", read_only=False, cwd=CWD)
    assert denial.behavior == "deny" and "dontAsk mode" in denial.reason


def test_leaving_plan_mode_asks_only_in_plan_mode() -> None:
    plan = evaluate(
        PermissionPolicy(mode="plan", after_plan="acceptEdits"),
        tool="Planner",
        subject=None,
        read_only=True,
        cwd=CWD,
        exits_plan=True,
    )
    assert (plan.behavior, plan.mode) == ("ask", "acceptEdits")
    for mode in ("default", "bypassPermissions"):
        assert decide(PermissionPolicy(mode=mode), "Planner", None, exits_plan=True) == "deny"


def test_the_live_mode_remembers_where_plan_mode_came_from() -> None:
    state = PermissionState(PermissionPolicy(mode="acceptEdits"))
    state.set_mode("plan")
    assert (state.mode, state.policy.after_plan) == ("plan", "acceptEdits")
    state.set_mode(state.policy.after_plan)
    assert state.mode == "acceptEdits"
    starts_in_plan = PermissionState(PermissionPolicy(mode="plan"))
    assert starts_in_plan.policy.after_plan == "default"
