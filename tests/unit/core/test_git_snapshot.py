"""The git snapshot in the system prompt, from real repositories, and when git will not answer."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from stayer.context.git import (
    MAX_STATUS_CHARS,
    UNNAMEABLE_DRIVER,
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
    assert snapshot == GitSnapshot(problems=("git config: no answer within 0.3 s",))


def test_a_git_that_refuses_the_repository_is_quoted(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    env = fake_git(tmp_path, "echo \"fatal: detected dubious ownership in '$PWD'\" >&2; exit 128")
    snapshot = take_git_snapshot(repo, env=env)
    assert snapshot.problems == (f"git config: fatal: detected dubious ownership in '{repo}'",)
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


# A repository set up to run a program at every turn git could take one. Each program only
# creates its own marker file, so the test sees which, if any, ran.


def _runs(markers: Path, name: str) -> str:
    """A filter command (quoted for a config file) that marks that it ran, then passes the
    content through."""
    return f'"touch {markers / name}; cat"'


def _signed_commit(repo: Path, message: str) -> str:
    """A commit on top of HEAD that carries a (fake) signature, so that a `git log` checking
    signatures runs the configured gpg program for it."""
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    parent = git(repo, "rev-parse", "HEAD").strip()
    raw = (
        f"tree {tree}\nparent {parent}\n"
        "author t <t@example.com> 1700000000 +0000\n"
        "committer t <t@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n"
        f"\n{message}\n"
    )
    body = repo / ".git" / "raw-commit"
    body.write_text(raw)
    sha = git(repo, "hash-object", "-t", "commit", "-w", str(body)).strip()
    git(repo, "update-ref", "refs/heads/main", sha)
    return sha


def hostile_repo(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A repository whose configuration (its own, an included one, a conditional one, the
    global one), attributes and hooks each name a program; returns it, its marker folder and
    an environment naming the global configuration."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = new_repo(tmp_path / "repo")
    for name in ("a.txt", "b.md", "c.rs", "d.cfg", "e.py"):
        (repo / name).write_text(f"{name}\n")
    (repo / ".gitattributes").write_text(
        "*.txt filter=evil.x diff=evil merge=evil\n"
        "*.md filter=included\n*.rs filter=conditional\n*.py filter=global\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    _signed_commit(repo, "signed")
    dot_git = repo / ".git"
    hooks = tmp_path / "hooks"
    for folder in (hooks, dot_git / "hooks"):
        folder.mkdir(exist_ok=True)
        for hook in ("post-index-change", "pre-auto-gc", "reference-transaction", "post-checkout"):
            script = folder / hook
            script.write_text(f"#!/bin/sh\ntouch {markers / (folder.name + '-' + hook)}\n")
            script.chmod(0o755)
    _configure(repo, markers, hooks, gpg=_script(tmp_path, markers, "gpg"))
    global_config = tmp_path / "global.config"
    global_config.write_text(
        f'[filter "global"]\n\tclean = {_runs(markers, "global-clean")}\n'
        # not a program, but a file written wherever the (global) configuration says
        f"[trace2]\n\tnormalTarget = {markers / 'trace2-normal'}\n"
        f"\tperfTarget = {markers / 'trace2-perf'}\n\teventTarget = {markers / 'trace2-event'}\n"
    )
    # Every tracked file now differs from the index in its timestamp only, so a status must
    # compare contents, which is where a clean filter would run.
    for path in repo.iterdir():
        if path.is_file():
            os.utime(path, (978_307_200, 978_307_200))
    return repo, markers, {**GIT_ENV, "GIT_CONFIG_GLOBAL": str(global_config)}


def _configure(repo: Path, markers: Path, hooks: Path, *, gpg: Path) -> None:
    """The repository's own configuration, and what it includes, naming a program at every
    turn: fsmonitor, hooks, filters (one through info/attributes), diff and merge drivers,
    pagers, and a gpg program for the signed commit."""
    dot_git = repo / ".git"
    (dot_git / "info" / "attributes").write_text("*.cfg filter=info\n")
    (dot_git / "included.config").write_text(
        f'[filter "included"]\n\tclean = {_runs(markers, "included-clean")}\n\trequired = true\n'
    )
    (dot_git / "conditional.config").write_text(
        f'[filter "conditional"]\n\tclean = {_runs(markers, "conditional-clean")}\n'
    )
    with (dot_git / "config").open("a") as config:
        config.write(
            f'[core]\n\tfsmonitor = "touch {markers / "fsmonitor"}; false"\n'
            f"\thooksPath = {hooks}\n\tpager = touch {markers / 'core-pager'}\n"
            f'[filter "evil.x"]\n\tclean = {_runs(markers, "clean")}\n'
            f"\tsmudge = {_runs(markers, 'smudge')}\n\trequired = true\n"
            f'[filter "info"]\n\tprocess = {_runs(markers, "process")}\n'
            f'[diff "evil"]\n\ttextconv = {_runs(markers, "textconv")}\n'
            f"\tcommand = touch {markers / 'diff-command'}\n"
            f"[diff]\n\texternal = touch {markers / 'diff-external'}\n"
            f'[merge "evil"]\n\tdriver = touch {markers / "merge-driver"}\n'
            f"[pager]\n\tstatus = touch {markers / 'pager-status'}\n"
            f"\tlog = touch {markers / 'pager-log'}\n"
            f"[log]\n\tshowSignature = true\n"
            f"[gpg]\n\tprogram = {gpg}\n"
            "[include]\n\tpath = included.config\n"
            f'[includeIf "gitdir:{repo}/"]\n\tpath = conditional.config\n'
        )


def hostile_env(tmp_path: Path, markers: Path) -> dict[str, str]:
    """GIT_ variables (as settings files may set them) that would run a program or point git
    at another repository."""
    decoy = new_repo(tmp_path / "decoy")
    commit(decoy, "decoy.txt", "the decoy's commit")
    hooks = tmp_path / "hooks"
    return {
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='touch {markers / 'parameters'}; false'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": str(hooks),
        "GIT_EXTERNAL_DIFF": str(_script(tmp_path, markers, "git-external-diff")),
        "GIT_PAGER": f"touch {markers / 'git-pager'}",
        "PAGER": f"touch {markers / 'pager'}",
        "GIT_DIR": str(decoy / ".git"),
        "GIT_WORK_TREE": str(decoy),
    }


def _script(tmp_path: Path, markers: Path, name: str) -> Path:
    program = tmp_path / f"{name}.sh"
    program.write_text(f"#!/bin/sh\ntouch {markers / name}\n")
    program.chmod(0o755)
    return program


@pytest.mark.parametrize("from_the_environment", [False, True], ids=["config", "environment"])
def test_the_snapshot_runs_no_program_the_repository_or_environment_names(
    tmp_path: Path, from_the_environment: bool
) -> None:
    repo, markers, env = hostile_repo(tmp_path)
    if from_the_environment:
        env |= hostile_env(tmp_path, markers)
    shas = [git(repo, "rev-parse", "--short", rev).strip() for rev in ("HEAD", "HEAD~1")]

    snapshot = take_git_snapshot(repo, env=env, timeout_s=10)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert snapshot == GitSnapshot(
        branch="main", status="", commits=(f"{shas[0]} signed", f"{shas[1]} first")
    )


def test_a_real_change_still_shows_in_a_hostile_repository(tmp_path: Path) -> None:
    repo, markers, env = hostile_repo(tmp_path)
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    # Staged without git add, which would run the repository's filter.
    blob = git(repo, "hash-object", "-w", "--no-filters", "new.txt").strip()
    quiet = ("-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}")
    git(repo, *quiet, "update-index", "--add", "--cacheinfo", f"100644,{blob},new.txt")

    snapshot = take_git_snapshot(repo, env=env, timeout_s=10)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert snapshot.status == " M a.txt\nA  new.txt"
    assert snapshot.problems == ()


def test_a_submodule_is_not_asked_under_its_own_configuration(tmp_path: Path) -> None:
    """git status asks each submodule's own git, which reads the submodule's configuration;
    the snapshot shows a submodule's new commits without asking it."""
    markers = tmp_path / "markers"
    markers.mkdir()
    library = new_repo(tmp_path / "library")
    commit(library, "lib.txt", "library")
    repo = new_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), "sub")
    git(repo, "commit", "-q", "-m", "add the submodule")
    sub = repo / "sub"
    commit(sub, "more.txt", "a new commit in the submodule")
    git(sub, "config", "core.fsmonitor", f"touch {markers / 'submodule-fsmonitor'}; false")
    (sub / "untracked.txt").write_text("x\n")

    snapshot = take_git_snapshot(repo, env=GIT_ENV, timeout_s=10)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert (snapshot.status, snapshot.problems) == (" M sub", ())


def test_missing_objects_are_not_fetched(tmp_path: Path) -> None:
    """A partial clone fetches objects it lacks from its promisor remote, whose URL may be a
    command (`ext::`); the snapshot fetches nothing and says what git could not read."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = new_repo(tmp_path / "repo")
    commit(repo, "a.txt", "first")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    orphan = (
        f"tree {tree}\nparent {'1' * 40}\n"
        "author t <t@example.com> 1700000000 +0000\n"
        "committer t <t@example.com> 1700000000 +0000\n\nits parent is missing\n"
    )
    (tmp_path / "commit").write_text(orphan)
    sha = git(repo, "hash-object", "-t", "commit", "-w", "--literally", str(tmp_path / "commit"))
    git(repo, "update-ref", "refs/heads/main", sha.strip())
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.promisor", "true"),
        ("protocol.ext.allow", "always"),
        ("remote.origin.url", f"ext::sh -c touch% {markers / 'fetched'}"),
    ):
        git(repo, "config", key, value)

    snapshot = take_git_snapshot(repo, env=GIT_ENV, timeout_s=10)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert (snapshot.branch, snapshot.commits) == ("main", None)
    assert len(snapshot.problems) == 1 and snapshot.problems[0].startswith("git log: ")


def test_a_status_past_the_deadline_names_the_whole_deadline(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    env = fake_git(
        tmp_path,
        'for word; do case "$word" in\n'
        "  config) exit 1;;\n  log) echo 'abc first'; exit 0;;\n  status) exec sleep 60;;\n"
        "esac; done",
    )
    snapshot = take_git_snapshot(repo, env=env, timeout_s=0.5)
    assert snapshot == GitSnapshot(problems=("git status: no answer within 0.5 s",))


def test_a_driver_git_cannot_be_told_to_leave_out_stops_the_status(tmp_path: Path) -> None:
    """`-c filter.a=b.clean=` would set `filter.a`: no way to blank this one, so no status."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = new_repo(tmp_path / "repo")
    (repo / ".gitattributes").write_text("*.txt filter=a=b\n")
    commit(repo, "a.txt", "first")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[filter "a=b"]\n\tclean = {_runs(markers, "clean")}\n')
    os.utime(repo / "a.txt", (978_307_200, 978_307_200))

    snapshot = take_git_snapshot(repo, env=GIT_ENV, timeout_s=10)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert snapshot == GitSnapshot(problems=(UNNAMEABLE_DRIVER,))
