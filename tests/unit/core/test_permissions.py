"""Permission modes and rules decide each call; denials explain themselves."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.permissions import (
    Decision,
    PermissionPolicy,
    Rule,
    evaluate,
    lexical_subject,
    parse_mode,
    parse_rules,
    resolve_subject,
)
from stayer.permissions.shell import CommandForms, command_forms
from stayer.tools.base import SubjectKind
from stayer.tools.builtin_specs import BUILTIN_SPECS

KINDS: dict[str, SubjectKind] = {
    **dict.fromkeys(("Read", "Write", "Edit", "Glob", "Grep"), "path"),
    "Bash": "command",
    "WebFetch": "domain",
}


def decide(policy: PermissionPolicy, tool: str, subject: str | None, read_only: bool) -> str:
    """Decide as the session does: path subjects are resolved first."""
    kind = KINDS.get(tool, "none")
    if kind == "path":
        subject = resolve_subject(subject, Path("/w"))
    decision = evaluate(
        policy,
        tool=tool,
        subject=subject,
        read_only=read_only,
        cwd=Path("/w"),
        subject_kind=kind,
    )
    return decision.behavior


def test_default_mode_allows_reading_and_asks_about_changes_with_a_way_out() -> None:
    policy = PermissionPolicy()
    assert decide(policy, "Read", "/w/a", True) == "allow"
    decision = evaluate(policy, tool="Bash", subject="rm -rf x", read_only=False, cwd=Path("/w"))
    assert decision.behavior == "ask"
    assert "--allowedTools Bash" in decision.reason


def test_bypass_allows_everything_but_deny_rules_still_win() -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm *)"]))
    assert decide(policy, "Bash", "ls", False) == "allow"
    assert decide(policy, "Bash", "rm -rf /", False) == "deny"


def test_allow_rules_with_specifiers() -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(git diff:*),Bash(npm test)", "Write"]))
    assert decide(policy, "Bash", "git diff --stat", False) == "allow"
    assert decide(policy, "Bash", "npm test", False) == "allow"
    assert decide(policy, "Bash", "npm publish", False) == "ask"
    assert decide(policy, "Write", "/anywhere", False) == "allow"


def test_accept_edits_allows_edits_inside_the_working_directory_only() -> None:
    policy = PermissionPolicy(mode="acceptEdits")
    assert decide(policy, "Edit", "/w/src/a.py", False) == "allow"
    assert decide(policy, "Edit", "src/a.py", False) == "allow"
    assert decide(policy, "Edit", "/etc/passwd", False) == "ask"
    assert decide(policy, "Bash", "make", False) == "ask"


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
    assert decide(policy, "Bash", "git status; echo PWNED > f", False) == "ask"
    assert decide(policy, "Bash", "git status\nrm -rf x", False) == "ask"
    assert decide(policy, "Bash", "git status | sh", False) == "ask"
    assert decide(policy, "Bash", "git status $(rm -rf x)", False) == "ask"
    assert decide(policy, "Bash", "git status `rm -rf x`", False) == "ask"


def test_a_deny_rule_catches_one_part_of_a_compound_command() -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm:*)"]))
    assert decide(policy, "Bash", "cd build && rm -rf out", False) == "deny"
    assert decide(policy, "Bash", "echo 'rm is fine inside quotes'", False) == "allow"


def test_command_forms_respect_quotes_and_fail_closed() -> None:
    assert command_forms("git commit -m 'a; b' && ls") == CommandForms(
        allow=(("git commit -m a; b",), ("ls",)),
        deny=("git commit -m 'a; b' && ls", "git commit -m a; b", "ls"),
        # not read-only: a deny rule also meets any program named among its words
        mentions=(("git", "commit", "-m", "a; b"), ("a", "b"), ("ls",)),
    )
    assert command_forms("git log -n 3 && ls") == CommandForms(
        allow=(("git log -n 3",), ("ls",)),
        deny=("git log -n 3 && ls", "git log -n 3", "ls"),
    )
    assert command_forms("echo 'unbalanced") == CommandForms(allow=None, deny=None)
    assert command_forms("python3 -c 'print(1)'") == CommandForms(
        allow=(("python3 -c print(1)",),), deny=None
    )
    assert command_forms("echo hi > out.txt") == CommandForms(
        allow=None,
        deny=("echo hi > out.txt", "echo hi"),
        exact=True,
        mentions=(("echo", "hi"),),
    )


def test_paths_are_judged_where_they_really_point() -> None:
    policy = PermissionPolicy(mode="acceptEdits", allow=parse_rules(["Write(notes/*)"]))
    assert decide(policy, "Edit", "~/outside.txt", False) == "ask"
    assert decide(policy, "Edit", "src/../../etc/passwd", False) == "ask"
    assert decide(policy, "Write", "/w/notes/today.md", False) == "allow"
    strict = PermissionPolicy(allow=parse_rules(["Write(notes/*)"]))
    assert decide(strict, "Write", "notes/today.md", False) == "allow"
    assert decide(strict, "Write", "notes/../secrets.md", False) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git status #\ntouch X",  # a comment does not swallow the next line
        "git status x#y\ntouch X",
        "git status $\\\n(touch X)",  # backslash-newline joins into $( ... )
        "git status ${x:=$(touch X)}${x@P}",
        "git status > ~/.bashrc",  # a redirection writes a file
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
    assert decide(policy, "Bash", command, False) == "ask", command


@pytest.mark.parametrize(
    "command",
    ["git status", "git status --short", "git status 2>&1", "git status >/dev/null 2>&1",
     "git status && git status -s", 'git status -- "a (quoted) name"',
     # bash reads this as one command: the \' does not end ANSI-C quoting, so touch never runs
     "git status $'\\'\ntouch X\n#'",
     "git status < /etc/shadow",  # reading stdin from a file writes nothing
     "timeout 5 git status", "nice -n 5 git status"],  # wrappers that change only how it runs
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
            subject_kind="path",
            aliases=(lexical_subject(path, tmp_path),),
        ).behavior

    assert read(".env") == "deny"
    assert read("/etc/hosts") == "deny"
    assert read("config/prod.env") == "allow"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ('echo "$(git rev-parse HEAD)"', "allow"),  # both commands have their rule
        ("echo `git rev-parse HEAD`", "allow"),
        ('echo "$(git rev-parse HEAD)" "$(rm -rf x)"', "ask"),
        ("diff <(git rev-parse HEAD) <(echo x)", "ask"),  # diff has no rule
        ("echo x | (git rev-parse HEAD; echo y)", "allow"),
        ("git rev-parse HEAD && rm -rf x", "ask"),
        ("git rev-parse HEAD; curl https://example.com", "ask"),
        ("echo hi > notes.txt", "ask"),  # a write to a file needs a rule of its own
        ("echo hi >> notes.txt", "ask"),
        ("echo hi &> notes.txt", "ask"),
        ("echo hi 2>&1 >/dev/null", "allow"),
        ("echo hi | tee notes.txt", "ask"),  # tee is a command, with no rule
        ("eval echo hi", "ask"),  # opaque: only a rule for the whole tool allows it
        ("$ECHO hi", "ask"),
        ("sudo echo hi", "ask"),  # sudo changes who runs it; a rule must name it
    ],
)
def test_allow_rules_judge_every_command_the_parse_finds(command: str, verdict: str) -> None:
    policy = PermissionPolicy(allow=parse_rules(["Bash(echo:*)", "Bash(git rev-parse:*)"]))
    assert decide(policy, "Bash", command, False) == verdict, command


def test_a_write_redirection_is_allowed_by_the_whole_tool_or_that_exact_command() -> None:
    exact = PermissionPolicy(allow=parse_rules(["Bash(make > build.log)"]))
    assert decide(exact, "Bash", "make > build.log", False) == "allow"
    assert decide(exact, "Bash", "make > other.log", False) == "ask"
    assert decide(exact, "Bash", "make > build.log; rm -rf ~", False) == "ask"
    whole = PermissionPolicy(allow=parse_rules(["Bash"]))
    assert decide(whole, "Bash", "echo hi > notes.txt && eval x", False) == "allow"


@pytest.mark.parametrize(
    "command",
    ["ls | xargs rm", "find . -name '*.tmp' -exec rm {} \\;", "sudo -u root rm -rf /",
     "timeout 5 rm x", "env -i A=1 rm x", "nice -n 5 /usr/bin/rm x", "echo $(command rm x)",
     "cat <(rm x)", "bash -c 'echo hi'", "ls | sh", "eval ls", "$PROG x", "f() { ls; }; f",
     "\\rm x", "r''m x", "coproc rm x", "echo $(ls; rm x)"],
)  # fmt: skip
def test_deny_rules_see_through_wrappers_and_opaque_lines(command: str) -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm:*)"]))
    assert decide(policy, "Bash", command, False) == "deny", command


def test_a_clear_line_is_not_denied_by_a_rule_for_another_program() -> None:
    policy = PermissionPolicy(mode="bypassPermissions", deny=parse_rules(["Bash(rm:*)"]))
    assert decide(policy, "Bash", "echo rm x; git log --grep rm", False) == "allow"
    assert decide(policy, "Bash", "ls | xargs echo", False) == "allow"


def test_domain_subjects_match_domain_rules_without_regard_to_case() -> None:
    policy = PermissionPolicy(
        allow=parse_rules(["WebFetch(domain:docs.python.org)"]),
        deny=parse_rules(["WebFetch(domain:*.evil.test)"]),
    )
    assert decide(policy, "WebFetch", "Docs.Python.org", False) == "allow"
    assert decide(policy, "WebFetch", "python.org", False) == "ask"
    assert decide(policy, "WebFetch", "a.EVIL.test", False) == "deny"


def fetch(policy: PermissionPolicy, host: str | None) -> Decision:
    """A WebFetch call as the tool declares it: read-only, with the host as its subject."""
    return evaluate(
        policy, tool="WebFetch", subject=host, read_only=True, cwd=Path("/w"), subject_kind="domain"
    )


def test_reaching_a_site_asks_unless_a_rule_or_bypass_allows_it() -> None:
    asked = fetch(PermissionPolicy(), "example.com")
    assert (asked.behavior, asked.question, asked.suggestions) == (
        "ask",
        "mode",
        ("WebFetch(domain:example.com)", "WebFetch"),
    )
    assert asked.reason == (
        "Permission to use WebFetch on example.com has been denied: reaching a site needs the "
        "user's approval, and nobody is here to give it in default mode. Carry on with the "
        "tools you may use; if this one is essential, stop and say so (the user can allow this "
        'host with --allowedTools "WebFetch(domain:example.com)", or every host with '
        "--allowedTools WebFetch)."
    )
    for mode in ("acceptEdits", "default"):
        assert fetch(PermissionPolicy(mode=mode), "example.com").behavior == "ask"
    assert fetch(PermissionPolicy(mode="bypassPermissions"), "example.com").behavior == "allow"
    assert fetch(PermissionPolicy(allow=parse_rules(["WebFetch"])), "a.test").behavior == "allow"
    sub = PermissionPolicy(allow=parse_rules(["WebFetch(domain:*.example.com)"]))
    assert fetch(sub, "api.example.com").behavior == "allow"
    assert fetch(sub, "example.com").behavior == "ask"
    assert fetch(sub, "example.com.evil.test").behavior == "ask"
    assert fetch(PermissionPolicy(), None).behavior == "ask"  # no host the rules could judge


def test_plan_mode_asks_about_a_site_rather_than_refusing_and_dont_ask_refuses() -> None:
    planned = fetch(PermissionPolicy(mode="plan"), "example.com")
    assert planned.behavior == "ask" and "allows only read-only tools" not in planned.reason
    refused = fetch(PermissionPolicy(mode="dontAsk"), "example.com")
    assert refused.behavior == "deny" and "dontAsk" in refused.reason


def test_deny_and_ask_rules_judge_sites_per_domain_in_every_mode() -> None:
    policy = PermissionPolicy(
        mode="bypassPermissions",
        allow=parse_rules(["WebFetch"]),
        deny=parse_rules(["WebFetch(domain:evil.test)"]),
        ask=parse_rules(["WebFetch(domain:*.corp.test)"]),
    )
    assert fetch(policy, "evil.test").behavior == "deny"
    assert fetch(policy, "wiki.corp.test").question == "rule"
    assert fetch(policy, "fine.test").behavior == "allow"


def outside(paths: tuple[str, ...] | None, tool: str = "Bash", mode: str = "default") -> Decision:
    return evaluate(
        PermissionPolicy(mode=parse_mode(mode), directories=(Path("/extra"),)),
        tool=tool,
        subject="cat x",
        read_only=True,
        cwd=Path("/w"),
        subject_kind="command",
        outside=paths,
        reads_as="Read",
    )


def test_a_read_only_call_that_reads_outside_asks_naming_the_rule_and_the_directory() -> None:
    decision = outside(("/etc/passwd", "/etc/group"))
    assert (decision.behavior, decision.suggestions) == ("ask", ("Read(//etc/passwd)",))
    assert decision.reason == (
        "Permission to use Bash has been denied: it reads /etc/passwd (and 1 more outside), "
        "outside the working directories (/w, /extra), and nobody is here to approve that in "
        "default mode. Carry on with the tools you may use; if this one is essential, stop and "
        'say so (the user can allow it with --allowedTools "Read(//etc/passwd)", or add the '
        "directory with --add-dir /etc)."
    )
    folder = outside(("/etc/**",))
    assert folder.suggestions == ("Read(//etc/**)",)
    assert "it reads everything under /etc, outside" in folder.reason
    assert "--add-dir /etc)" in folder.reason
    home = outside((str(Path.home() / ".ssh" / "id_rsa"),))
    assert home.suggestions == ("Read(~/.ssh/id_rsa)",)


def test_a_read_that_cannot_be_told_asks_and_one_inside_is_allowed() -> None:
    unknown = outside(None)
    assert unknown.behavior == "ask"
    assert "which files it reads cannot be told from its words" in unknown.reason
    assert outside(()).behavior == "allow"
    assert outside(("/etc/passwd",), mode="plan").behavior == "ask"  # it changes nothing
    assert outside(("/etc/passwd",), mode="bypassPermissions").behavior == "allow"
    assert outside(("/etc/passwd",), mode="dontAsk").behavior == "deny"


def test_the_permission_layer_names_no_built_in_tool() -> None:
    """Tools declare what their subject is; permissions never special-case one by name."""
    names = {spec.name for spec in BUILTIN_SPECS}
    package = Path(__file__).parents[3] / "src" / "stayer" / "permissions"
    found: list[str] = []
    for source in sorted(package.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docstrings:
                    continue
                words = set(re.findall(r"[A-Za-z]+", node.value))
                found += [f"{source.name}:{node.lineno}: {name}" for name in names & words]
    assert sorted(names) and found == []
