"""The git snapshot in the system prompt, from real repositories, and when git will not answer."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from stayer.context.git import (
    MAX_STATUS_CHARS,
    GitSnapshot,
    git_section,
    parse_branch,
    take_git_snapshot,
)
from stayer.context.prompt import Environment

# The user's own git settings (signing, hooks, templates) must not change what a test sees.
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        env=GIT_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit(repo: Path, name: str, message: str) -> None:
    (repo / name).write_text(f"{message}\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)


def fake_git(tmp_path: Path, script: str) -> dict[str, str]:
    """An environment whose only `git` is `script`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "git"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    return {**GIT_ENV, "PATH": f"{bin_dir}:/bin:/usr/bin"}


def test_branch_status_and_recent_commits_of_a_real_repository(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    commit(repo, "a.txt", "first")
    commit(repo, "b.txt", "second")
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    shas = git(repo, "log", "--format=%h").split()

    snapshot = take_git_snapshot(repo, env=GIT_ENV)

    assert snapshot == GitSnapshot(
        branch="main",
        status=" M a.txt\n?? new.txt",
        commits=(f"{shas[0]} second", f"{shas[1]} first"),
    )
    assert git_section(snapshot) == (
        "# Git\n"
        "A snapshot taken when the session started; it does not follow your changes, so run "
        "git for the current state.\n"
        "Current branch: main\n"
        "Status:\n M a.txt\n?? new.txt\n"
        f"Recent commits:\n{shas[0]} second\n{shas[1]} first"
    )


def test_only_the_five_latest_commits_are_shown(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    for number in range(7):
        commit(repo, f"f{number}.txt", f"commit {number}")
    snapshot = take_git_snapshot(repo, env=GIT_ENV)
    assert snapshot.commits is not None
    assert [line.split(" ", 1)[1] for line in snapshot.commits] == [
        "commit 6",
        "commit 5",
        "commit 4",
        "commit 3",
        "commit 2",
    ]
    assert (snapshot.status, snapshot.problems) == ("", ())
    assert "Status: clean" in git_section(snapshot)


def test_a_new_repository_without_commits_is_no_problem(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "draft.txt").write_text("x\n")
    snapshot = take_git_snapshot(repo, env=GIT_ENV)
    assert snapshot == GitSnapshot(branch="main", status="?? draft.txt", commits=())
    assert git_section(snapshot).endswith("Recent commits: none yet")


def test_a_detached_head_and_an_upstream_are_named(tmp_path: Path) -> None:
    upstream = new_repo(tmp_path / "upstream")
    commit(upstream, "a.txt", "first")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    commit(clone, "b.txt", "local work")
    snapshot = take_git_snapshot(clone, env=GIT_ENV)
    assert (snapshot.branch, snapshot.upstream) == ("main", "origin/main [ahead 1]")
    assert "Current branch: main (tracking origin/main [ahead 1])" in git_section(snapshot)

    git(clone, "checkout", "-q", "--detach")
    assert take_git_snapshot(clone, env=GIT_ENV).branch == "(detached HEAD)"


def test_a_long_status_is_cut_with_a_note(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    commit(repo, "a.txt", "first")
    for number in range(200):
        (repo / f"untracked-file-with-a-long-name-{number:04}.txt").write_text("x")
    snapshot = take_git_snapshot(repo, env=GIT_ENV)
    assert snapshot.status is not None and snapshot.status_cut
    assert len(snapshot.status) <= MAX_STATUS_CHARS
    assert snapshot.status.splitlines()[-1].startswith("?? untracked-file-with-a-long-name-")
    assert "(status cut at 2,000 characters; run `git status` for the rest)" in git_section(
        snapshot
    )


def test_without_git_the_snapshot_says_so_in_one_line(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    env = {**GIT_ENV, "PATH": str(tmp_path / "empty")}
    snapshot = take_git_snapshot(repo, env=env)
    assert snapshot == GitSnapshot(
        problems=("could not start git: No such file or directory",),
    )
    assert git_section(snapshot).endswith(
        "\nUnavailable: could not start git: No such file or directory"
    )


def test_a_git_that_never_answers_costs_only_the_deadline(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    env = fake_git(tmp_path, "exec sleep 60")
    started = time.monotonic()
    snapshot = take_git_snapshot(repo, env=env, timeout_s=0.3)
    assert time.monotonic() - started < 5
    assert snapshot == GitSnapshot(problems=("git status: no answer within 0.3 s",))


def test_a_git_that_refuses_the_repository_is_quoted(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    env = fake_git(tmp_path, "echo \"fatal: detected dubious ownership in '$PWD'\" >&2; exit 128")
    snapshot = take_git_snapshot(repo, env=env)
    assert snapshot.problems == (f"git status: fatal: detected dubious ownership in '{repo}'",)
    assert snapshot.status is None and snapshot.commits is None
    assert "Status" not in git_section(snapshot)


@pytest.mark.parametrize(
    ("header", "parsed"),
    [
        ("## main", ("main", "", False)),
        (
            "## main...origin/main [ahead 1, behind 2]",
            ("main", "origin/main [ahead 1, behind 2]", False),
        ),
        ("## feature/x...origin/feature/x", ("feature/x", "origin/feature/x", False)),
        ("## No commits yet on trunk", ("trunk", "", True)),
        ("## Initial commit on master", ("master", "", True)),
        ("## HEAD (no branch)", ("(detached HEAD)", "", False)),
    ],
)
def test_the_branch_line_is_read_in_each_of_gits_forms(
    header: str, parsed: tuple[str, str, bool]
) -> None:
    assert parse_branch(header) == parsed


def test_the_environment_takes_a_snapshot_only_inside_a_repository(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    commit(repo, "a.txt", "first")
    (repo / "sub").mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()

    inside = Environment.detect(repo / "sub", "m", env=GIT_ENV, git=True)
    assert inside.is_git_repo and inside.git is not None and inside.git.branch == "main"
    assert Environment.detect(repo / "sub", "m", env=GIT_ENV, git=False).git is None
    outside = Environment.detect(plain, "m", env=GIT_ENV, git=True)
    assert (outside.is_git_repo, outside.git) == (False, None)
