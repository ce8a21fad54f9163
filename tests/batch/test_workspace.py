"""Workspaces made from real git repositories, the commands run in them, and their diffs."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from pathlib import Path

import pytest

from stayer.batch import workspace_diff as diff_module
from stayer.batch.commands import OUTPUT_TAIL_CHARS
from stayer.batch.tasks import BatchTask
from stayer.batch.workspace import (
    Workspace,
    WorkspaceError,
    make_workspace,
    run_command,
    workspace_diff,
)
from tests.batch.git_repos import git, make_source, picture
from tests.unit.tools.helpers import is_running


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return _source(tmp_path)


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "source"
    make_source(path)
    return path


def _task(repo: str | Path, ref: str | None = None, task_id: str = "t1") -> BatchTask:
    return BatchTask(id=task_id, prompt="do it", repo=str(repo), ref=ref)


def _shas(source: Path) -> dict[str, str]:
    return {
        name: git(source, "rev-parse", f"{ref}^{{commit}}").strip()
        for name, ref in (("first", "v1"), ("second", "main"), ("feature", "feature"))
    }


def _tree(path: Path) -> dict[str, bytes]:
    """The files of a working tree (its `.git` left out)."""
    return {
        str(file.relative_to(path)): file.read_bytes()
        for file in sorted(path.rglob("*"))
        if file.is_file() and ".git" not in file.relative_to(path).parts
    }


# --- the source repository is never changed ------------------------------------------------


async def test_the_source_stays_byte_identical_whatever_the_agent_does(
    source: Path, tmp_path: Path
) -> None:
    before = picture(source)
    root = tmp_path / "workspaces"
    one = await make_workspace(_task(source), root)
    two = await make_workspace(_task(source, "feature", "t2"), root)
    assert picture(source) == before
    for workspace in (one, two):  # what an agent may well do with git in its workspace
        (workspace.path / "a.txt").write_text("the agent's\n")
        git(workspace.path, "checkout", "-qb", "x")
        git(workspace.path, "commit", "-qam", "fix")
        git(workspace.path, "tag", "agent-tag")
        (workspace.path / "a.txt").write_text("more\n")
        git(workspace.path, "stash", "-q")
        git(workspace.path, "branch", "-f", "main", "x")
        git(workspace.path, "gc", "-q", "--prune=now")
        git(workspace.path, "push", "origin", "x", check=False)
    assert picture(source) == before
    assert "x" not in git(source, "branch", "--list", "x")


async def test_many_workspaces_of_one_source_at_once(source: Path, tmp_path: Path) -> None:
    before = picture(source)
    refs = ["main", "v1", "feature", None] * 4
    made = await asyncio.gather(
        *(
            make_workspace(_task(source, ref, f"t{number}"), tmp_path / "ws")
            for number, ref in enumerate(refs)
        )
    )
    shas = _shas(source)
    expected = {"main": shas["second"], "v1": shas["first"], "feature": shas["feature"]}
    assert [workspace.base for workspace in made] == [expected.get(ref or "main") for ref in refs]
    assert len({workspace.path for workspace in made}) == len(refs)
    assert picture(source) == before


async def test_a_push_from_the_workspace_fails_and_names_no_source(
    source: Path, tmp_path: Path
) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    result = await run_command(
        "git push origin HEAD:refs/heads/pushed", workspace.path, dict(os.environ), 30
    )
    assert result.exit_code != 0
    assert git(source, "for-each-ref", "refs/heads/pushed") == ""


# --- refs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected", "content"),
    [
        (None, "second", "two\n"),
        ("main", "second", "two\n"),
        ("v1", "first", "one\n"),  # an annotated tag: its commit
        ("feature", "feature", "one\n"),
        ("feature~1", "first", "one\n"),
    ],
)
async def test_a_ref_names_the_commit_checked_out_detached(
    source: Path, tmp_path: Path, ref: str | None, expected: str, content: str
) -> None:
    workspace = await make_workspace(_task(source, ref), tmp_path / "ws")
    sha = _shas(source)[expected]
    assert (workspace.path, workspace.base) == (tmp_path / "ws" / "t1", sha)
    assert workspace == Workspace(path=workspace.path, base=sha, config=workspace.config)
    assert git(workspace.path, "rev-parse", "HEAD").strip() == sha
    assert git(workspace.path, "symbolic-ref", "-q", "HEAD", check=False) == ""  # detached
    assert (workspace.path / "a.txt").read_text() == content
    # the source's uncommitted work is no part of a workspace
    assert git(workspace.path, "status", "--porcelain") == ""
    assert not (workspace.path / "untracked.txt").exists()


async def test_a_full_sha_and_a_short_one(source: Path, tmp_path: Path) -> None:
    sha = _shas(source)["feature"]
    full = await make_workspace(_task(source, sha), tmp_path / "ws")
    short = await make_workspace(_task(source, sha[:8], "t2"), tmp_path / "ws")
    assert full.base == short.base == sha
    assert (short.path / "feature.txt").read_text() == "feature\n"


@pytest.mark.parametrize("ref", ["no-such-branch", "-h", "HEAD:a.txt", "0" * 40])
async def test_a_bad_ref_is_one_clear_error_and_leaves_nothing(
    source: Path, tmp_path: Path, ref: str
) -> None:
    with pytest.raises(WorkspaceError) as raised:
        await make_workspace(_task(source, ref), tmp_path / "ws")
    message = str(raised.value)
    assert message == (
        f"task t1: {ref!r} names no commit in {source}; "
        "give a branch, tag or commit sha that exists there"
    )
    assert not (tmp_path / "ws" / "t1").exists()


async def test_a_source_that_is_no_repository_any_more(source: Path, tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")  # a repository around it, which must not be taken for it
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "around")
    shutil.rmtree(source / ".git")
    with pytest.raises(WorkspaceError) as raised:
        await make_workspace(_task(source), tmp_path / "ws")
    message = str(raised.value)
    assert message.startswith(f"task t1: cannot read {source}: fatal: not a git repository")
    assert message.endswith("; check that it is a git repository you may read")


async def test_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "empty")
    with pytest.raises(WorkspaceError) as raised:
        await make_workspace(_task(tmp_path / "empty"), tmp_path / "ws")
    assert str(raised.value).startswith(f"task t1: 'HEAD' names no commit in {tmp_path}/empty;")


async def test_the_users_hooks_run_neither_for_us_nor_in_the_workspace(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = tmp_path / "hooks"
    (hooks / "hooks").mkdir(parents=True)
    for name in ("post-checkout", "pre-commit", "post-commit"):
        hook = hooks / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {tmp_path / 'ran'}\n")
        hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(
        f"[core]\n\thooksPath = {hooks / 'hooks'}\n[init]\n\ttemplateDir = {hooks}\n"
        "[user]\n\tname = Agent\n\temail = agent@example.invalid\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    url = await make_workspace(_task(source.as_uri(), "feature", "t2"), tmp_path / "ws")
    for made in (workspace, url):
        assert not (made.path / ".git" / "hooks").exists()
        (made.path / "a.txt").write_text("agent\n")
        result = await run_command(
            "git commit -qam agent && git checkout -q -b x", made.path, dict(os.environ), 30
        )
        assert result.exit_code == 0, result.output
    assert not (tmp_path / "ran").exists()


# --- URLs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [(None, "second"), ("main", "second"), ("feature", "feature"), ("v1", "first")],
)
async def test_a_file_url_is_cloned(
    source: Path, tmp_path: Path, ref: str | None, expected: str
) -> None:
    before = picture(source)
    workspace = await make_workspace(_task(source.as_uri(), ref), tmp_path / "ws")
    assert workspace.base == _shas(source)[expected]
    assert git(workspace.path, "rev-parse", "HEAD").strip() == workspace.base
    assert picture(source) == before


async def test_a_ref_a_url_lacks_is_one_clear_error_and_leaves_nothing(
    source: Path, tmp_path: Path
) -> None:
    url = source.as_uri()
    with pytest.raises(WorkspaceError) as raised:
        await make_workspace(_task(url, "nope"), tmp_path / "ws")
    assert str(raised.value) == (
        f"task t1: 'nope' names no commit in {url}; "
        "give a branch, tag or commit sha that the repository has"
    )
    assert not (tmp_path / "ws" / "t1").exists()


@pytest.mark.parametrize("kind", ["refused", "missing"])
async def test_an_unreachable_url_is_one_clear_error_and_leaves_nothing(
    tmp_path: Path, kind: str
) -> None:
    url = "http://127.0.0.1:9/repo.git" if kind == "refused" else (tmp_path / "none").as_uri()
    with pytest.raises(WorkspaceError) as raised:
        await make_workspace(_task(url), tmp_path / "ws")
    message = str(raised.value)
    assert message.startswith(f"task t1: cannot clone {url}: ")
    assert message.endswith("; check that it is a git repository this machine can reach")
    assert "\n" not in message
    assert not (tmp_path / "ws" / "t1").exists()


async def test_git_never_prompts_for_credentials(tmp_path: Path) -> None:
    # A server asking for a password: git must fail, not wait for someone to type one.
    server = await asyncio.start_server(_ask_for_a_password, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(WorkspaceError, match="cannot clone"):
            await make_workspace(_task(f"http://127.0.0.1:{port}/r.git"), tmp_path / "ws")


async def _ask_for_a_password(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(
        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=x\r\n"
        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    await writer.drain()
    writer.close()


async def test_relative_folders_are_taken_from_where_we_are(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    workspace = await make_workspace(_task("source", "v1"), Path("out/ws"))
    assert workspace.path == tmp_path / "out" / "ws" / "t1"
    assert (workspace.path / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("task_id", ["..", "a/b", ""])
async def test_an_id_that_cannot_name_a_folder_is_refused(tmp_path: Path, task_id: str) -> None:
    with pytest.raises(WorkspaceError, match="cannot name a folder; use a plain name"):
        await make_workspace(_task(tmp_path, task_id=task_id), tmp_path / "ws" / "deeper")
    assert not (tmp_path / "ws").exists()


# --- making over what a killed run left ------------------------------------------------------


async def test_a_leftover_folder_is_replaced(source: Path, tmp_path: Path) -> None:
    leftover = tmp_path / "ws" / "t1"
    (leftover / "deep" / "locked").mkdir(parents=True)
    (leftover / "deep" / "locked" / "file").write_text("left by a killed run")
    (leftover / "half.txt").write_text("x")
    (leftover / "deep" / "locked").chmod(stat.S_IRUSR | stat.S_IXUSR)
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    assert _tree(workspace.path) == {".gitignore": b"*.log\n", "a.txt": b"two\n",
                                     "gone.txt": b"to be deleted\n"}  # fmt: skip
    again = await make_workspace(_task(source, "feature"), tmp_path / "ws")
    assert (again.path / "feature.txt").exists()


async def test_a_leftover_half_clone_is_replaced(source: Path, tmp_path: Path) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    shutil.rmtree(workspace.path / ".git" / "refs")
    (workspace.path / "a.txt").write_text("agent\n")
    again = await make_workspace(_task(source), tmp_path / "ws")
    assert (again.path / "a.txt").read_text() == "two\n"
    assert await workspace_diff(again) == ""


# --- the diff --------------------------------------------------------------------------------


async def test_the_diff_holds_every_change_and_applies_on_base(
    source: Path, tmp_path: Path
) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    path = workspace.path
    (path / "a.txt").write_text("changed\n")
    (path / "gone.txt").unlink()
    (path / "sub").mkdir()
    (path / "sub" / "new.txt").write_text("brand new\n")
    (path / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (path / "run.log").write_text("ignored\n")
    (path / ".gitignore").chmod(0o755)
    git(path, "add", "sub/new.txt")  # staged or not, a change is a change
    index_before = (path / ".git" / "index").read_bytes()
    status_before = git(path, "status", "--porcelain")
    tree_before = _tree(path)

    diff = await workspace_diff(workspace)

    assert (path / ".git" / "index").read_bytes() == index_before
    assert git(path, "status", "--porcelain") == status_before
    assert _tree(path) == tree_before
    changed = [line for line in diff.splitlines() if line.startswith("diff --git")]
    assert changed == [
        "diff --git a/.gitignore b/.gitignore",
        "diff --git a/a.txt b/a.txt",
        "diff --git a/blob.bin b/blob.bin",
        "diff --git a/gone.txt b/gone.txt",
        "diff --git a/sub/new.txt b/sub/new.txt",
    ]
    assert "GIT binary patch" in diff
    fresh = await make_workspace(_task(source, task_id="fresh"), tmp_path / "ws")
    (fresh.path.parent / "patch").write_text(diff)
    git(fresh.path, "apply", "--index", str(fresh.path.parent / "patch"))
    expected = {name: data for name, data in _tree(path).items() if name != "run.log"}
    assert _tree(fresh.path) == expected
    assert (fresh.path / ".gitignore").stat().st_mode & 0o111 == 0o111


async def test_the_diff_counts_what_the_agent_committed(source: Path, tmp_path: Path) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    (workspace.path / "a.txt").write_text("committed\n")
    git(workspace.path, "checkout", "-qb", "fix")
    git(workspace.path, "commit", "-qam", "fix")
    (workspace.path / "later.txt").write_text("later\n")
    diff = await workspace_diff(workspace)
    assert "+committed" in diff
    assert "+later" in diff


async def test_taking_the_diff_runs_nothing_the_agent_configured(
    source: Path, tmp_path: Path
) -> None:
    """A filter, a textconv or an include the agent put in the workspace's git config would run
    when the batch takes the diff, outside the task's policy and sandbox: the clone's config
    goes back first, and the diff is still right."""
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    ran = tmp_path / "ran"
    command = f"sh -c 'touch {ran}; cat'"
    git(workspace.path, "config", "filter.evil.clean", command)
    git(workspace.path, "config", "diff.evil.textconv", command)
    (workspace.path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (workspace.path / ".git" / "info").mkdir(exist_ok=True)
    (workspace.path / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (workspace.path / "a.txt").write_text("changed\n")
    diff = await workspace_diff(workspace)
    assert not ran.exists()
    assert "+changed" in diff
    assert "evil" not in (workspace.path / ".git" / "config").read_text()


@pytest.mark.parametrize("how", ["commondir", "gitfile"])
async def test_a_git_folder_pointed_elsewhere_is_refused_not_read(
    source: Path, tmp_path: Path, how: str
) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    dot_git = workspace.path / ".git"
    if how == "commondir":
        (dot_git / "commondir").write_text(f"{elsewhere}\n")
    else:
        shutil.rmtree(dot_git)
        dot_git.write_text(f"gitdir: {elsewhere}\n")
    with pytest.raises(WorkspaceError, match=r"\.git was replaced or points elsewhere"):
        await workspace_diff(workspace)


async def test_no_change_is_an_empty_diff(source: Path, tmp_path: Path) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    (workspace.path / "x.log").write_text("only an ignored file\n")
    assert await workspace_diff(workspace) == ""


async def test_a_workspace_that_is_no_repository_any_more(source: Path, tmp_path: Path) -> None:
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    # the folder around it is a repository too: the diff must not be taken of that one
    git(tmp_path, "init", "-q")
    shutil.rmtree(workspace.path / ".git")
    with pytest.raises(WorkspaceError, match=r"cannot list its changes: .*still a git"):
        await workspace_diff(workspace)
    assert not (tmp_path / ".git" / "index").exists()


async def test_without_git_on_path_the_error_says_so(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(WorkspaceError, match=r"^git is not installed \(not on PATH\); install"):
        await make_workspace(_task(source), tmp_path / "ws")


async def test_files_past_the_diffs_size_are_left_out_whole_and_it_still_applies(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diff_module, "MAX_DIFF_BYTES", 300)
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    (workspace.path / "a.txt").write_text("small\n")
    (workspace.path / "b.txt").write_text("".join(f"line {i}\n" for i in range(1000)))

    diff = await workspace_diff(workspace)

    assert diff.startswith("stayer: left out of this diff, past its 300 bytes: a/b.txt b/b.txt\n")
    assert [line for line in diff.splitlines() if line.startswith("diff --git")] == [
        "diff --git a/a.txt b/a.txt"
    ]
    fresh = await _applied(diff, source, tmp_path)
    assert (fresh / "a.txt").read_text() == "small\n"
    assert not (fresh / "b.txt").exists()


async def test_large_files_are_left_out_named_and_never_hashed(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diff_module, "MAX_FILE_BYTES", 10)
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    path = workspace.path
    (path / "a.txt").write_text("fits\n")  # was "two\n"
    (path / "gone.txt").unlink()  # its 14 bytes in the base are over the limit
    (path / "new.bin").write_bytes(b"\x00" * 50)
    (path / "staged.bin").write_bytes(b"\x01" * 50)
    git(path, "add", "staged.bin")
    unhashed = git(path, "hash-object", "new.bin").strip()

    diff = await workspace_diff(workspace)

    note = [line for line in diff.splitlines() if line.startswith("stayer:")]
    assert note == [
        f"stayer: left out of this diff, over 10 bytes: {name}"
        for name in ("gone.txt", "new.bin", "staged.bin")
    ]
    assert [line for line in diff.splitlines() if line.startswith("diff --git")] == [
        "diff --git a/a.txt b/a.txt"
    ]
    assert git(path, "cat-file", "-t", unhashed, check=False) == ""  # not in its objects
    assert "new.bin" not in git(path, "ls-files")  # the agent's own index untouched
    fresh = await _applied(diff, source, tmp_path)
    assert (fresh / "a.txt").read_text() == "fits\n"
    assert (fresh / "gone.txt").exists()


async def test_a_diff_that_takes_too_long_is_an_error(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diff_module, "DIFF_TIMEOUT_S", 0.0)
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    (workspace.path / "a.txt").write_text("changed\n")
    with pytest.raises(WorkspaceError, match=r"taking its diff took longer than 0 s"):
        await workspace_diff(workspace)


async def _applied(diff: str, source: Path, tmp_path: Path) -> Path:
    """A fresh workspace of `source` with `diff` applied by `git apply --index`."""
    fresh = await make_workspace(_task(source, task_id="fresh"), tmp_path / "ws")
    patch = fresh.path.parent / "fresh.patch"
    patch.write_text(diff)
    git(fresh.path, "apply", "--index", str(patch))
    return fresh.path


async def test_git_runs_three_times_per_workspace_and_four_times_per_diff(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every task pays for these; a new git call here should be a decision, not a drift."""
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    real = shutil.which("git")
    shim.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls"}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    workspace = await make_workspace(_task(source), tmp_path / "ws")
    made = (tmp_path / "calls").read_text().splitlines()
    (workspace.path / "new.txt").write_text("new\n")
    await workspace_diff(workspace)
    diffed = (tmp_path / "calls").read_text().splitlines()[len(made) :]
    assert [_subcommand(call) for call in made] == ["rev-parse", "clone", "checkout"]
    # listing: new files, changed ones; then hashing what is kept, and the patch
    assert [_subcommand(call) for call in diffed] == ["ls-files", "diff-index", "add", "diff-index"]


def _subcommand(call: str) -> str:
    words = call.split()
    while words[0] == "-c":
        words = words[2:]
    return words[0]


# --- commands --------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "GREETING": "hello"}


@pytest.mark.parametrize("code", [0, 1, 3, 255])
async def test_a_command_reports_its_exit_code(tmp_path: Path, code: int) -> None:
    result = await run_command(f"exit {code}", tmp_path, _env(), 30)
    assert (result.exit_code, result.timed_out) == (code, False)


async def test_a_command_runs_in_cwd_with_env_and_interleaves_its_output(
    tmp_path: Path,
) -> None:
    command = 'echo "$GREETING"; echo oops >&2; pwd -P; echo last >&2; exit 2'
    result = await run_command(command, tmp_path, _env(), 30)
    assert result.output == f"hello\noops\n{tmp_path.resolve()}\nlast\n"
    assert result.exit_code == 2


async def test_a_long_output_keeps_its_end(tmp_path: Path) -> None:
    command = "for i in $(seq 1 5000); do echo line $i; done; echo THE END >&2"
    result = await run_command(command, tmp_path, _env(), 30)
    whole = "".join(f"line {i}\n" for i in range(1, 5001)) + "THE END\n"
    header, tail = result.output.split("\n", 1)
    assert header == f"[{len(whole) - OUTPUT_TAIL_CHARS} characters before this omitted]"
    assert tail == whole[-OUTPUT_TAIL_CHARS:]


async def test_undecodable_output_is_replaced(tmp_path: Path) -> None:
    result = await run_command(r"printf 'a\377b'", tmp_path, _env(), 30)
    assert result.output == "a\ufffdb"


async def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    command = "sleep 300 & echo $! > child; echo started; sleep 300"
    result = await run_command(command, tmp_path, _env(), 0.5)
    assert result.timed_out
    assert result.output == "started\n"
    assert result.exit_code != 0
    assert not is_running(int((tmp_path / "child").read_text()))


async def test_a_child_that_would_outlive_its_shell_is_stopped(tmp_path: Path) -> None:
    command = "nohup sleep 300 >/dev/null 2>&1 & echo $! > child; echo done"
    result = await run_command(command, tmp_path, _env(), 30)
    assert (result.exit_code, result.output, result.timed_out) == (0, "done\n", False)
    assert not is_running(int((tmp_path / "child").read_text()))


async def test_cancelling_kills_the_whole_group(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "child")  # reading it waits for the command to write the pid
    command = "sleep 300 & echo $! > child; sleep 300"
    running = asyncio.create_task(run_command(command, tmp_path, _env(), 60))
    child = int(await asyncio.to_thread((tmp_path / "child").read_text))
    assert is_running(child)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert not is_running(child)


async def test_a_missing_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"^cannot run a command in .*missing: "):
        await run_command("true", tmp_path / "missing", _env(), 30)
