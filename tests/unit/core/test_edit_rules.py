"""Edit rules judge every write to a file, as in Claude Code ("Edit rules apply to all built-in
tools that edit files"): Write and NotebookEdit on the file a rule names, and what a shell
command writes besides its line (a redirection, `tee`, `git diff --output=`); each tool
declares whose rules judge its writes (`Tool.writes_under`). A deny rule denies such a write
in every mode; an ask rule asks; a command that writes somewhere known only when it runs asks
while an Edit deny rule with a pattern is in force, since that write cannot be judged
against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.permissions import (
    Decision,
    PermissionMode,
    PermissionPolicy,
    Writes,
    evaluate,
    parse_rules,
)
from stayer.tools.registry import builtin_tools

CWD = Path("/w")
TOOLS = {tool.name: tool for tool in builtin_tools()}
MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "bypassPermissions", "dontAsk")


def policy(
    mode: PermissionMode = "default",
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
) -> PermissionPolicy:
    return PermissionPolicy(
        mode=mode, allow=parse_rules(allow), ask=parse_rules(ask), deny=parse_rules(deny)
    )


def file_write(rules: PermissionPolicy, tool: str, path: str) -> Decision:
    """A file tool's write, judged as the session judges it: Write and NotebookEdit declare
    that Edit's rules judge what they write (`Tool.writes_under`)."""
    return evaluate(
        rules,
        tool=tool,
        subject=path,
        read_only=False,
        cwd=CWD,
        subject_kind="path",
        writes_as=TOOLS[tool].writes_under,
    )


def command(rules: PermissionPolicy, line: str, writes: Writes) -> Decision:
    return evaluate(
        rules,
        tool="Bash",
        subject=line,
        read_only=False,
        cwd=CWD,
        subject_kind="command",
        writes=writes,
        writes_as=TOOLS["Bash"].writes_under,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["Write", "NotebookEdit", "Edit"])
def test_an_edit_deny_rule_stops_every_file_tool_in_every_mode(
    tool: str, mode: PermissionMode
) -> None:
    rules = policy(mode, deny=("Edit(.env)",))
    decision = file_write(rules, tool, "/w/.env")
    assert (decision.behavior, decision.rule) == ("deny", "Edit(.env)")
    assert file_write(rules, tool, "/w/src/app.py").rule is None  # no rule names that one


def test_edit_ask_and_allow_rules_judge_write_too() -> None:
    asked = file_write(policy(ask=("Edit(config/**)",)), "Write", "/w/config/prod.yml")
    assert (asked.behavior, asked.rule) == ("ask", "Edit(config/**)")
    allowed = file_write(policy(allow=("Edit(src/**)",)), "Write", "/w/src/new.py")
    assert allowed.behavior == "allow"
    elsewhere = file_write(policy(allow=("Edit(src/**)",)), "Write", "/w/docs/new.md")
    assert elsewhere.behavior == "ask"


@pytest.mark.parametrize("mode", MODES)
def test_a_command_writing_a_file_an_edit_deny_rule_names_is_denied(mode: PermissionMode) -> None:
    rules = policy(mode, allow=("Bash(git diff:*)",), deny=("Edit(.env)",))
    decision = command(rules, "git diff --output=.env", Writes(paths=("/w/.env",)))
    assert decision.behavior == "deny"
    assert decision.reason == (
        "Permission to use Bash has been denied: it writes /w/.env, which the deny rule "
        "Edit(.env) covers."
    )
    ordinary = command(rules, "git diff --output=src/x", Writes(paths=("/w/src/x",)))
    assert ordinary.behavior == "allow"


def test_a_command_writing_a_file_an_edit_ask_rule_names_asks() -> None:
    rules = policy("bypassPermissions", ask=("Edit(config/**)",))
    decision = command(rules, "ls > config/x", Writes(paths=("/w/config/x",)))
    assert (decision.behavior, decision.rule) == ("ask", "Edit(config/**)")


def test_a_write_known_only_when_it_runs_asks_while_an_edit_deny_rule_is_in_force() -> None:
    unknown = Writes(unknown=('"$f"',))
    rules = policy("bypassPermissions", deny=("Edit(.env)",))
    decision = command(rules, 'git diff --output="$f"', unknown)
    assert (decision.behavior, decision.rule) == ("ask", "Edit(.env)")
    assert decision.reason.startswith(
        'Permission to use Bash has been denied: it writes "$f", a file known only when it '
        "runs, so the deny rule Edit(.env) cannot be checked against it."
    )
    no_edit_rule = policy("bypassPermissions", deny=("Read(.env)",))
    assert command(no_edit_rule, 'git diff --output="$f"', unknown).behavior == "allow"
