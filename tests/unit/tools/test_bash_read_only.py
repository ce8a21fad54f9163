"""Bash calls are read-only, and so concurrency-safe, only when a real parse shows they look."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.loop.state import ToolCall
from stayer.permissions import PermissionPolicy, evaluate, parse_rules
from stayer.providers.scripted import ScriptedProvider
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare
from stayer.tools.builtin.bash import BashInput, BashTool
from stayer.tools.builtin.bash_read_only import is_read_only_command

READ_ONLY = [
    "ls -la",
    "cat README.md | head -20",
    "tail -n 50 log.txt",
    "wc -l src/*.py",
    "grep -rn 'def main' src",
    "rg -o 'TODO.*' src",  # -o is --only-matching, not an output file
    "find . -name '*.py' -type f",
    "git status",
    "git --no-pager log --oneline -5",
    "cd src",  # a folder later calls start in; where it may go is judged as a read
    "cd src && ls -la",
    "git diff HEAD~1 -- src",
    "git show HEAD:README.md",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feat*'",
    "git rev-parse --show-toplevel",
    "git ls-files -m",
    "echo hello; pwd; which python3",
    'echo "$(git rev-parse HEAD)"',
    "sed -n '1,20p' file.txt",
    "sed -n -e '/start/,/end/p' f",
    "sed 's/a/b/g' f",
    "sort -u names.txt | uniq -c",
    "ls 2>&1 >/dev/null",
    "cat < input.txt",
    "find . -name '*.py' | xargs wc -l",
    "timeout 5 nice -n 10 grep -c x f",
    "LC_ALL=C sort f",
    "command -v rg",
    "env",
    "[ -f x ] && cat x",
    "jq '.name' package.json",
    "date +%Y-%m-%d",
    "diff <(sort a) <(sort b)",
    "for f in a b; do wc -c $f; done",
]

NOT_READ_ONLY = [
    "rm -rf build",
    "touch x",
    "ls > listing.txt",  # a write redirection
    "echo x >> log",
    "ls &> out",
    "ls | tee listing.txt",
    "git -C sub --no-pager log --oneline -5",  # another repository's config would apply
    "git --git-dir=evil status",
    "git --work-tree=x status",
    "cd sub && git status",
    "mkdir -p out && ls",
    "git status && rm x",
    "git commit -m x",
    "git branch new-feature",  # a name without --list creates the branch
    "git branch -D old",
    "git -c core.pager=evil log",  # -c can make git run anything
    "git diff --output=patch.txt",
    "git log --out=x",  # abbreviations of long options count
    "git $SUB",
    "find . -delete",
    "find . -name '*.o' -exec rm {} \\;",
    "find . -fprint out.txt",
    "find . $ARGS",  # could hold -delete
    "sed -i 's/a/b/' f",
    "sed -n 's/a/b/w out.txt' f",
    "sed -n 1p $F",
    "sed -f script.sed f",
    "sort -o sorted.txt f",
    "sort -ro sorted.txt f",  # -o in a bundle
    "sort $OPTS f",
    "rg --pre ./unpack x",
    "uniq in.txt out.txt",
    "date -s 2020-01-01",
    "tree -o out.txt",
    "xargs rm",
    "ls | xargs sort -o out",
    "sudo ls",
    "GIT_EXTERNAL_DIFF=./evil git diff",
    "/tmp/ls",  # not the ls the table means
    "eval ls",
    "$CMD",
    "bash -c ls",
    "ls | sh",
    "f() { ls; }",
    "python3 -c 'print(1)'",
    "awk '{ print > \"out\" }' f",
    "echo 'unbalanced",
    "npm test",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_commands_that_only_look_are_read_only(command: str) -> None:
    assert is_read_only_command(command), command


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_commands_that_may_change_things_are_not(command: str) -> None:
    assert not is_read_only_command(command), command


def test_the_tool_is_concurrency_safe_exactly_when_read_only_and_in_the_foreground() -> None:
    tool = BashTool()
    looks = BashInput(command="git status && ls")
    changes = BashInput(command="git status && touch x")
    behind = BashInput(command="tail -f log.txt", run_in_background=True)
    verdicts = [
        (tool.is_read_only(given), tool.is_concurrency_safe(given))
        for given in (looks, changes, behind)
    ]
    assert verdicts == [(True, True), (False, False), (True, False)]


def test_a_read_only_command_needs_no_rule_while_a_deny_rule_still_wins() -> None:
    tool = BashTool()

    def decide(command: str, policy: PermissionPolicy) -> str:
        given = BashInput(command=command)
        return evaluate(
            policy,
            tool=tool.name,
            subject=tool.permission_subject(given),
            read_only=tool.is_read_only(given),
            cwd=Path("/w"),
            subject_kind=tool.subject_kind,
        ).behavior

    assert decide("git log --oneline | head", PermissionPolicy()) == "allow"
    assert decide("git log --oneline | head", PermissionPolicy(mode="plan")) == "allow"
    assert decide("git log > log.txt", PermissionPolicy()) == "ask"
    denied = PermissionPolicy(deny=parse_rules(["Bash(git log:*)"]))
    assert decide("echo x; git log", denied) == "deny"


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("cat secrets/key.txt", "deny"),
        ("head -n 1 ./secrets/key.txt", "deny"),
        ("grep token secrets/key.txt notes.txt", "deny"),
        ("cat < secrets/key.txt", "deny"),
        ("cat notes/../secrets/key.txt", "deny"),
        ("cat link-to-key", "deny"),  # where the link really points
        ("sort --files0-from=secrets/key.txt", "deny"),
        ("cat secrets/*", "deny"),  # a glob: known only when it runs
        ('cat "$(echo secrets)/key.txt"', "deny"),
        ("nice -n 5 cat secrets/key.txt", "deny"),
        ("cat notes.txt", "allow"),
        ("git log --oneline", "allow"),
        ("echo who=$USER", "allow"),  # echo opens no file, whatever its words expand to
        ("cat $FILE", "deny"),
    ],
)
async def test_a_read_deny_rule_stops_a_shell_command_reading_that_file(
    tmp_path: Path, command: str, verdict: str
) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("s3cret")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes.txt").write_text("fine")
    (tmp_path / "link-to-key").symlink_to(tmp_path / "secrets" / "key.txt")
    setup = prepare(
        QueryOptions(
            cwd=str(tmp_path),
            provider=ScriptedProvider([]),
            disallowed_tools=["Read(secrets/**)"],
            permission_mode="bypassPermissions",  # deny rules win in every mode
            persist_session=False,
        )
    )
    tool = BashTool()
    decision = await setup.params.can_use_tool(ToolCall(tool, "t1", BashInput(command=command)))
    assert decision.behavior == verdict, decision.reason
    if verdict == "deny":
        assert "denied" in decision.reason
