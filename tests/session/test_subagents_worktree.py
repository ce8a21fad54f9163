"""`isolation: "worktree"`: a subagent works in a git worktree of its own, removed after when
it changed nothing and kept, and named to its parent, when it did."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import stayer
from stayer.events import Finished
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call

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
