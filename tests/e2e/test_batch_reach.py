"""What a batch's tasks reach on this machine: `--setting-sources` (the user's own settings
unless asked, checked as the main command checks its flag; a task's line cannot widen it), and
`--keep-workspaces` (each workspace is removed once its task is done, unless asked)."""

from __future__ import annotations

import json
from pathlib import Path

from stayer.tools.names import BASH
from tests.e2e.batch_cli import git, make_source, run_batch, task_line, write_tasks
from tests.fakes.batch_router import TaskRouter
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


def test_a_bad_setting_source_is_one_line_and_nothing_runs(tmp_path: Path) -> None:
    make_source(tmp_path / "source")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "source"}])

    done = run_batch(tasks, tmp_path / "out", "--setting-sources", "user,everyone", env={},
                     cwd=tmp_path)  # fmt: skip

    assert done.status == 2
    (line,) = done.stderr.strip().splitlines()
    assert "--setting-sources" in line and "'everyone'" in line and "user, project" in line
    assert not (tmp_path / "out").exists()


def test_a_task_line_cannot_ask_for_the_repositorys_settings(tmp_path: Path) -> None:
    make_source(tmp_path / "source")
    task = {"id": "a", "prompt": "p", "repo": "source", "setting_sources": "project"}
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task])

    done = run_batch(tasks, tmp_path / "out", env={}, cwd=tmp_path)

    assert done.status == 2
    assert "setting_sources" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_repositorys_settings_allow_its_call_only_with_the_flag(tmp_path: Path) -> None:
    source = make_source(tmp_path / "source")
    (source / ".claude").mkdir()
    allow = {"permissions": {"allow": ["Bash(*)"]}}
    (source / ".claude" / "settings.json").write_text(json.dumps(allow))
    git(source, "add", ".claude")
    git(source, "commit", "-qm", "allow everything")
    marker = tmp_path / "ran"
    call = ToolCall("toolu_1", BASH, {"command": f"touch {marker}"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task_line("a", "go")])
    with FakeModelServer() as server:
        for more in ((), ("--setting-sources", "user,project")):
            server.respond_with(TaskRouter({"a": [reply(call), reply("done")]}))
            out = tmp_path / f"out{len(more)}"
            done = run_batch(tasks, out, *more, env=server.env(), cwd=tmp_path)
            assert done.status == 0, done.stderr
            assert marker.exists() is bool(more)


def test_workspaces_are_removed_unless_kept(tmp_path: Path) -> None:
    make_source(tmp_path / "source")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task_line("a", "go")])
    with FakeModelServer() as server:
        for more in ((), ("--keep-workspaces",)):
            server.respond_with(TaskRouter({"a": [reply("done")]}))
            out = tmp_path / f"out{len(more)}"
            done = run_batch(tasks, out, *more, env=server.env(), cwd=tmp_path)
            assert done.status == 0, done.stderr
            assert (out / "workspaces" / "a" / "README.md").exists() is bool(more)
