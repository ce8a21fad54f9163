"""`isolation: "worktree"`: a subagent works in a git worktree of its own, removed after when
it changed nothing and kept, and named to its parent, when it did."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import stayer
from stayer.events import Finished, ToolCallFinished
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.names import AGENT

from .subagent_kit import HELPER, Router, nested, options
from .test_subagents import result_text, results, run

ISOLATED: dict[str, object] = {"prompt": "work", "isolation": "worktree"}


def repository(path: Path) -> Path:
    path.mkdir()
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty",
         "-m", "start"],
    ):  # fmt: skip
        subprocess.run(command, cwd=path, check=True)
    return path


def branches(repo: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "branch", "--format=%(refname:short)"], cwd=repo, capture_output=True, text=True
    )
    return listed.stdout.split()


def worktrees(repo: Path) -> list[str]:
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True)
    return listed.stdout.splitlines()


def write_where_it_works(request: ModelRequest) -> Reply:
    """The child writes a file in the folder its prompt says it works in."""
    found = re.search(r"^Working directory: (.+)$", request.system, re.MULTILINE)
    assert found is not None
    target = str(Path(found.group(1)) / "made.txt")
    return tool_call("Write", {"file_path": target, "content": "new\n"}, id="w1")


async def test_a_child_that_changed_nothing_leaves_no_worktree(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    helper = ScriptedProvider([text("looked, changed nothing")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(repo, router)) as session:
        events = await run(session, "go")
    assert f"Working directory: {repo}\n" not in helper.requests[0].system
    assert "worktree" not in result_text(results(events)["t1"])
    assert branches(repo) == ["main"]
    assert len(worktrees(repo)) == 1
    router.assert_done()


async def test_a_child_that_changed_files_keeps_its_worktree_and_its_parent_is_told(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path / "repo")
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    helper = ScriptedProvider([write_where_it_works, text("wrote made.txt")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(repo, router)) as session:
        events = await run(session, "go")
    said = result_text(results(events)["t1"])
    found = re.search(r"kept for you: (\S+) \(branch (stayer-agent-\w+)\)", said)
    assert found is not None, said
    kept, branch = Path(found.group(1)), found.group(2)
    assert (kept / "made.txt").read_text() == "new\n"
    assert not (repo / "made.txt").exists()  # the person's checkout is untouched
    assert branch in branches(repo)
    inner = [e.event for e in nested(events) if isinstance(e.event, Finished)]
    assert len(inner) == 1
    router.assert_done()


async def test_isolation_outside_a_repository_is_one_line(tmp_path: Path) -> None:
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    async with stayer.Session(options(tmp_path, lead)) as session:
        events = await run(session, "go")
    block = results(events)["t1"]
    assert block.is_error
    assert result_text(block) == (
        f"isolation 'worktree' needs a git repository, and {tmp_path} is in none; "
        "leave isolation out"
    )


def status(repo: Path) -> str:
    listed = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    return listed.stdout


def with_evil_filter(repo: Path, marker: Path) -> None:
    """A repository whose git configuration names a filter that writes `marker` when run."""
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    (repo / "a.txt").write_text("hi\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "files"], cwd=repo, check=True)
    for key in ("smudge", "clean"):
        command = f"sh -c 'echo {key} >> {marker}; cat'"
        subprocess.run(["git", "config", f"filter.evil.{key}", command], cwd=repo, check=True)


async def test_worktree_git_commands_run_no_filter_the_repository_names(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    with_evil_filter(repo, marker)
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    helper = ScriptedProvider([write_where_it_works, text("wrote made.txt")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(repo, router)) as session:
        events = await run(session, "go")
    said = result_text(results(events)["t1"])
    assert "kept for you" in said  # checked out, looked at: no filter ran for either
    assert not marker.exists()
    router.assert_done()


async def test_isolation_is_refused_in_plan_mode_in_one_line(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    asked = {**ISOLATED, "description": "d", "run_in_background": False}
    lead = ScriptedProvider([tool_call(AGENT, asked, id="t1"), text("ok")])
    async with stayer.Session(options(repo, lead, permission_mode="plan")) as session:
        events = await run(session, "go")
    block = results(events)["t1"]
    assert block.is_error
    assert result_text(block) == (
        "isolation 'worktree' makes a branch and a checkout, and plan mode changes nothing; "
        "leave isolation out while planning"
    )
    assert branches(repo) == ["main"]
    assert len(worktrees(repo)) == 1


async def test_worktrees_live_in_the_repository_out_of_its_status(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    helper = ScriptedProvider([write_where_it_works, text("wrote made.txt")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(repo, router)) as session:
        events = await run(session, "go")
    found = re.search(r"kept for you: (\S+) ", result_text(results(events)["t1"]))
    assert found is not None
    kept = Path(found.group(1))
    assert kept.parent == repo / ".stayer" / "worktrees"
    assert kept.name.startswith("agent-")
    assert "/.stayer/worktrees/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert status(repo) == ""
    router.assert_done()


async def test_a_worktree_child_of_a_persisted_session_writes_in_its_worktree(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path / "repo")
    asked = {**ISOLATED, "description": "d", "run_in_background": False}
    lead = ScriptedProvider([tool_call(AGENT, asked, id="t1"), text("ok")])
    helper = ScriptedProvider([write_where_it_works, text("wrote made.txt")])
    router = Router(lead, **{HELPER: helper})
    given = options(
        repo,
        router,
        permission_mode="acceptEdits",
        persist_session=True,
        env={"STAYER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)},
    )
    async with stayer.Session(given) as session:
        events = await run(session, "go")
    writes = [e.event for e in nested(events) if isinstance(e.event, ToolCallFinished)]
    assert [(w.name, w.result.is_error) for w in writes] == [("Write", False)]
    found = re.search(r"kept for you: (\S+) ", result_text(results(events)["t1"]))
    assert found is not None
    assert (Path(found.group(1)) / "made.txt").read_text() == "new\n"
    router.assert_done()


async def test_a_stayer_folder_that_is_a_link_gets_no_worktree(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".stayer").symlink_to(elsewhere)
    lead = ScriptedProvider([tool_call("Spawn", ISOLATED, id="t1"), text("ok")])
    async with stayer.Session(options(repo, lead)) as session:
        events = await run(session, "go")
    block = results(events)["t1"]
    assert block.is_error
    assert result_text(block) == (
        f"isolation 'worktree' is refused here: {repo / '.stayer'} is a link to another place; "
        "leave isolation out"
    )
    assert branches(repo) == ["main"]
    assert list(elsewhere.iterdir()) == []
