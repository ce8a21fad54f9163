"""git calls that print history are reads of every file the history holds.

A secret committed once stays in the history after it is deleted, so `git log -p` or `git show`
could print it. Such a call asks when the repository's history (or index) holds a file a Read
deny or ask rule names, and goes on unasked when it does not: a `Read(.env)` rule for a file
that was never committed leaves `git diff` alone. Real repositories, real git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stayer.loop.state import CanUseTool, ToolCall
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider
from stayer.session.git_history import pathspecs
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare
from stayer.tools.builtin.bash import BashInput, BashTool

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.test",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.test",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("TOKEN=never-committed\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    return root


def checker(root: Path, *rules: str) -> CanUseTool:
    """One session's permission callback (its history answers kept between calls)."""
    setup = prepare(
        QueryOptions(
            cwd=str(root),
            provider=ScriptedProvider([]),
            disallowed_tools=list(rules),
            persist_session=False,
        )
    )
    return setup.params.can_use_tool


async def decide(root: Path, command: str, *rules: str) -> Decision:
    call = ToolCall(BashTool(), "t1", BashInput(command=command))
    return await checker(root, *rules)(call)


async def test_history_of_a_file_never_committed_is_no_concern(repo: Path) -> None:
    for command in ("git diff", "git log -p", "git show HEAD", "git log -p --all"):
        decision = await decide(repo, command, "Read(.env)")
        assert decision.behavior == "allow", (command, decision.reason)


async def test_a_secret_deleted_long_ago_is_still_in_the_history(repo: Path) -> None:
    (repo / "secrets").mkdir()
    (repo / "secrets" / "key.txt").write_text("s3cret\n")
    git(repo, "add", "secrets")
    git(repo, "commit", "-q", "-m", "oops")
    git(repo, "rm", "-q", "-r", "secrets")
    git(repo, "commit", "-q", "-m", "remove the key")
    assert not (repo / "secrets").exists()
    for command in ("git log -p", "git show HEAD~1", "git diff HEAD~2 HEAD~1", "git log -Gs3"):
        decision = await decide(repo, command, "Read(secrets/**)")
        assert decision.behavior == "ask", command
        assert decision.question == "rule"
        assert "history" in decision.reason and str(repo) in decision.reason
    # metadata only, or limited to paths the rule does not name: no question
    for command in ("git log --oneline", "git log -p -- src/", "git status"):
        decision = await decide(repo, command, "Read(secrets/**)")
        assert decision.behavior == "allow", (command, decision.reason)


async def test_a_staged_file_counts_before_any_commit(repo: Path) -> None:
    (repo / "config.secret").write_text("pw\n")
    git(repo, "add", "config.secret")
    decision = await decide(repo, "git diff --cached", "Read(*.secret)")
    assert decision.behavior == "ask"


async def test_the_answer_follows_a_new_commit(repo: Path) -> None:
    check = checker(repo, "Read(notes.txt)")  # one session: the first answer is kept
    call = ToolCall(BashTool(), "t1", BashInput(command="git show HEAD"))
    assert (await check(call)).behavior == "allow"
    (repo / "notes.txt").write_text("private\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    assert (await check(call)).behavior == "ask"


async def test_an_ask_rule_asks_and_a_deny_rule_on_a_path_still_denies(repo: Path) -> None:
    decision = await decide(repo, "git show HEAD:src/app.py", "Read(src/**)")
    assert decision.behavior == "deny"  # the path named in the words is read outright


async def test_outside_a_repository_there_is_no_history(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    decision = await decide(tmp_path / "plain", "git log -p", "Read(secrets/**)")
    assert decision.behavior == "allow", decision.reason


def test_rule_patterns_become_pathspecs_under_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert pathspecs(root, (f"{root}/secrets/**", f"{root}/**/.env")) == (
        ":(glob,icase)secrets/**",
        ":(glob,icase)secrets/**/**",
        ":(glob,icase)**/.env",
        ":(glob,icase)**/.env/**",
    )
    # a rule about files elsewhere says nothing of this repository
    assert pathspecs(root, ("/etc/**", f"{tmp_path}/other/**")) == ()
    # a rule from a folder above that reaches into every depth below it
    assert pathspecs(root, (f"{tmp_path}/**/id_rsa",)) == (
        ":(glob,icase)**/id_rsa",
        ":(glob,icase)**/id_rsa/**",
    )
    # one level only above the root cannot be put as a pathspec: assume the worst
    assert pathspecs(root, (f"{tmp_path}/*/key",)) is None


async def test_in_a_linked_worktree_the_answer_follows_a_new_commit_too(repo: Path) -> None:
    # a worktree's `.git` is a file naming refs kept elsewhere: no answer may go stale
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    check = checker(worktree, "Read(notes.txt)")
    call = ToolCall(BashTool(), "t1", BashInput(command="git show HEAD"))
    assert (await check(call)).behavior == "allow"
    (worktree / "notes.txt").write_text("private\n")
    git(worktree, "add", "notes.txt")
    git(worktree, "commit", "-q", "-m", "notes")
    assert (await check(call)).behavior == "ask"
