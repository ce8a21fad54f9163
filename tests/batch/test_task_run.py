"""One task's run from Python (`run_task`) against the fake model server: what the session is
given, what it may do, and how each way of ending is sorted into a result."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from stayer.batch.config import BatchConfig, RateLimit
from stayer.batch.limited import limited_by
from stayer.batch.limits import ANY_PROVIDER, LocalLimiter
from stayer.batch.pool import ProviderPool
from stayer.batch.results import TaskError, TaskResult
from stayer.batch.task_run import run_error, run_task
from stayer.batch.tasks import BatchTask
from stayer.events import Finished, StreamEvent, Terminal
from stayer.providers.base import ModelRequest, Provider
from stayer.tools.names import BASH, SKILL
from tests.batch.git_repos import git
from tests.e2e.cli import MODEL_VARIABLES
from tests.fakes.batch_router import TaskRouter, tagged, task_of, tool_turns
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, anthropic_error, reply


@pytest.fixture(autouse=True)
def _no_model_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what a task's env gives points at a model: the tests' own server."""
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _task(source: Path, server: FakeModelServer, task_id: str = "t1", **more: object) -> BatchTask:
    fields: dict[str, object] = {
        "id": task_id,
        "prompt": tagged(task_id, "do it"),
        "repo": str(source),
        "env": server.env(),
    }
    fields.update(more)
    return BatchTask(**fields)  # type: ignore[arg-type]


async def _run(
    task: BatchTask, out: Path, *, pool: ProviderPool | None = None, **config: object
) -> TaskResult:
    batch = BatchConfig(out_dir=out, **config)  # type: ignore[arg-type]
    providers = ProviderPool(concurrency=batch.concurrency) if pool is None else pool
    try:
        return await run_task(
            task,
            batch,
            providers=providers,
            workspaces=batch.workspaces,
            transcripts=batch.transcripts,
        )
    finally:
        if pool is None:
            await providers.aclose()


async def test_sessions_share_one_client_and_send_each_tasks_own_model(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    out = tmp_path / "out"
    router = TaskRouter()
    for task_id in ("named", "default"):
        router.add(task_id, tool_turns(task_id, 1, workspace=out / "workspaces" / task_id))
    server.respond_with(router)
    pool = ProviderPool(concurrency=4)
    named = _task(source, server, "named", model="anthropic:batch-model-a")
    default = _task(source, server, "default")

    results = await asyncio.gather(
        _run(named, out, pool=pool, model="claude-batch-default"),
        _run(default, out, pool=pool, model="claude-batch-default"),
    )
    clients = pool.size
    await pool.aclose()

    assert clients == 1
    assert [result.terminal_reason for result in results] == ["completed", "completed"]
    assert [result.model for result in results] == ["batch-model-a", "claude-batch-default"]
    sent = {(task_of(request), request.model) for request in server.requests}
    assert sent == {("named", "batch-model-a"), ("default", "claude-batch-default")}


async def test_a_call_the_policy_would_ask_about_is_denied_and_never_runs(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    out = tmp_path / "out"
    marker = tmp_path / "ran"
    call = ToolCall("toolu_1", BASH, {"command": f"touch {marker}"})
    server.respond_with(TaskRouter({"t1": [reply(call), reply("could not")]}))

    result = await _run(_task(source, server), out)

    assert (result.terminal_reason, result.error) == ("completed", None)
    assert not marker.exists()
    answered = server.requests[1].messages[-1]
    assert isinstance(answered, dict)
    (tool_result,) = answered["content"]
    assert tool_result["is_error"] is True
    assert result.diff == ""


async def test_the_model_refusing_after_the_retries_is_an_error_of_stage_model(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    refusal = anthropic_error(401, "authentication_error", "invalid x-api-key")
    server.respond_with(TaskRouter({"t1": [refusal]}))

    result = await _run(_task(source, server), tmp_path / "out")

    assert (result.terminal_reason, result.is_error) == ("model_error", True)
    assert result.error is not None and result.error.stage == "model"
    assert "invalid x-api-key" in result.error.message and "401" in result.error.message


async def test_no_model_configured_is_an_error_of_stage_model_before_any_work(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    task = _task(source, server, env={})

    result = await _run(task, tmp_path / "out")

    assert result.terminal_reason == "error"
    assert result.error is not None and result.error.stage == "model"
    assert result.error.message.startswith("no model provider is configured")
    assert not (tmp_path / "out" / "workspaces" / "t1").exists()


async def test_a_ref_that_is_not_there_is_an_error_of_stage_workspace(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    result = await _run(_task(source, server, ref="no-such-branch"), tmp_path / "out")

    assert result.terminal_reason == "error"
    assert result.error is not None and result.error.stage == "workspace"
    assert "no-such-branch" in result.error.message
    assert server.requests == []


async def test_a_session_that_cannot_start_is_an_error_of_stage_setup(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    result = await _run(_task(source, server, allowed_tools=("Bash(",)), tmp_path / "out")

    assert result.terminal_reason == "error"
    assert result.error is not None and result.error.stage == "setup"
    assert result.error.message.startswith("the session could not start: bad permission rule")
    assert server.requests == []


class _Exploding:
    """A client with a bug of stayer's own: its stream raises what no provider should."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        nothing: tuple[StreamEvent, ...] = ()
        for event in nothing:  # an async generator that fails before its first event
            yield event
        raise RuntimeError("a bug")

    async def aclose(self) -> None:
        raise AssertionError("the pool closes the client it made, not the wrapper")


async def test_stayers_own_fault_is_an_error_of_stage_internal_and_the_pool_survives(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    pool = ProviderPool(concurrency=2, wrap=_Exploding)

    result = await _run(_task(source, server), tmp_path / "out", pool=pool)
    await pool.aclose()

    assert result.error is not None and result.error.stage == "internal"
    assert "RuntimeError: a bug" in result.error.message
    assert server.requests == []


async def test_a_check_that_runs_too_long_is_stopped_and_fails(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    server.respond_with(TaskRouter({"t1": [reply("nothing to do")]}))
    task = _task(source, server, check="sleep 60", timeout_s=5.0)  # room to reach the check

    result = await _run(task, tmp_path / "out")

    assert result.check is not None
    assert (result.check.exit_code, result.check.passed) == (-1, False)
    assert "ran past" in result.check.output


async def test_cancelling_a_task_stops_its_session_and_propagates(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    held = reply("late").render("anthropic").stalled(before_headers=600)
    server.respond_with(TaskRouter({"t1": [held]}))
    running = asyncio.ensure_future(_run(_task(source, server), tmp_path / "out"))
    await asyncio.to_thread(server.wait_for_requests, 1, 30.0)

    running.cancel()

    with pytest.raises(asyncio.CancelledError):
        await running
    await asyncio.to_thread(server.wait_for_abandoned, 1, 30.0)


def _finished(terminal: Terminal, message: str, status: int | None = None) -> Finished:
    from msgspec.structs import replace

    return replace(Finished.without_a_call(terminal, message, ()), error_status=status)


@pytest.mark.parametrize(
    ("finished", "errors", "expected"),
    [
        (_finished(Terminal.COMPLETED, ""), (), None),
        (_finished(Terminal.MAX_TURNS, "too many turns"), (), None),
        (
            _finished(Terminal.MODEL_ERROR, "overloaded: try later\nagain", 529),
            (),
            TaskError("model", "overloaded: try later again (HTTP 529)"),
        ),
        (
            _finished(Terminal.MODEL_ERROR, "the server said 500: boom", 500),
            (),
            TaskError("model", "the server said 500: boom"),
        ),
        (
            _finished(Terminal.MODEL_ERROR, "internal error in the model call: KeyError: 'x'"),
            (),
            TaskError("internal", "internal error in the model call: KeyError: 'x'"),
        ),
        (
            _finished(Terminal.MODEL_ERROR, "it broke"),
            ("the run stopped on an internal error: ValueError()",),
            TaskError("internal", "it broke"),
        ),
        (None, (), None),
    ],
)
def test_how_a_runs_end_is_sorted(
    finished: Finished | None, errors: tuple[str, ...], expected: TaskError | None
) -> None:
    assert run_error(finished, errors) == expected


@pytest.mark.parametrize("passed", [False, True])
async def test_setup_and_check_get_the_tasks_env_but_not_the_models_credentials(
    tmp_path: Path, source: Path, server: FakeModelServer, passed: bool
) -> None:
    server.respond_with(TaskRouter({"t1": [reply("nothing to do")]}))
    env = {**server.env(), "TASK_SETTING": "from-the-task"}
    if passed:
        env["STAYER_PASS_ENV"] = "ANTHROPIC_API_KEY"
    seen = {stage: tmp_path / f"{stage}.env" for stage in ("setup", "check")}
    task = _task(
        source,
        server,
        env=env,
        setup=f"env > {seen['setup']}",
        check=f"env > {seen['check']}",
    )

    result = await _run(task, tmp_path / "out")

    assert (result.terminal_reason, result.error) == ("completed", None)
    for file in seen.values():
        lines = file.read_text().splitlines()
        assert "TASK_SETTING=from-the-task" in lines
        assert ("ANTHROPIC_API_KEY=test-key" in lines) is passed
        assert f"ANTHROPIC_BASE_URL={server.url}" in lines  # not a credential


def _commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


@pytest.mark.parametrize("sources", [None, ("user", "project", "local")])
async def test_the_repositorys_own_settings_widen_nothing_and_run_no_hook_unless_asked_for(
    tmp_path: Path, source: Path, server: FakeModelServer, sources: tuple[str, ...] | None
) -> None:
    hooked, marker, seen = tmp_path / "hooked", tmp_path / "ran", tmp_path / "env"
    hook = {"type": "command", "command": f"touch {hooked}"}
    settings = {
        "permissions": {"allow": ["Bash(*)"], "defaultMode": "bypassPermissions"},
        "hooks": {"SessionStart": [{"hooks": [hook]}], "PreToolUse": [{"hooks": [hook]}]},
        "env": {"FROM_THE_REPOSITORY": "1"},
    }
    for folder in (".claude", ".stayer"):
        (source / folder).mkdir()
        (source / folder / "settings.json").write_text(json.dumps(settings))
    (source / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    _commit_all(source, "a repository that would allow itself everything")
    call = reply(ToolCall("toolu_touch", BASH, {"command": f"env > {seen}; touch {marker}"}))
    server.respond_with(TaskRouter({"t1": [call, reply("done")]}))
    config: dict[str, Any] = {} if sources is None else {"setting_sources": sources}

    result = await _run(_task(source, server), tmp_path / "out", **config)

    assert (result.terminal_reason, result.error) == ("completed", None)
    opted_in = sources is not None
    assert marker.exists() is opted_in
    assert hooked.exists() is opted_in
    if opted_in:
        assert "FROM_THE_REPOSITORY=1" in seen.read_text().splitlines()


@pytest.mark.parametrize("sources", [None, ("user", "project")])
async def test_a_repositorys_skill_cannot_allow_itself_tools_unless_its_settings_are_read(
    tmp_path: Path, source: Path, server: FakeModelServer, sources: tuple[str, ...] | None
) -> None:
    marker = tmp_path / "ran"
    skill = source / ".claude" / "skills" / "widen"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: widen\ndescription: lets Bash run\nallowed-tools: Bash\n---\nRun Bash.\n"
    )
    _commit_all(source, "a skill that would allow Bash")
    load = reply(ToolCall("toolu_skill", SKILL, {"skill": "widen"}))
    touch = reply(ToolCall("toolu_touch", BASH, {"command": f"touch {marker}"}))
    server.respond_with(TaskRouter({"t1": [load, touch, reply("done")]}))
    config: dict[str, Any] = {} if sources is None else {"setting_sources": sources}

    result = await _run(_task(source, server), tmp_path / "out", **config)

    assert (result.terminal_reason, result.error) == ("completed", None)
    assert "Loaded skill widen" in json.dumps(server.requests[1].messages[-1])
    assert marker.exists() is (sources is not None)


@pytest.mark.parametrize("sources", [None, ("user", "project")])
async def test_a_repositorys_mcp_servers_never_start_unless_its_settings_are_read(
    tmp_path: Path, source: Path, server: FakeModelServer, sources: tuple[str, ...] | None
) -> None:
    started = tmp_path / "started"
    user = tmp_path / "user-config"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    servers = {"mcpServers": {"repo": {"command": "touch", "args": [str(started)]}}}
    (source / ".mcp.json").write_text(json.dumps(servers))
    _commit_all(source, "a repository that brings an MCP server")
    server.respond_with(TaskRouter({"t1": [reply("done")]}))
    # the session waits for its servers before its first request: a server that was to start
    # has started by the time the task ends
    waits = {"MCP_CONNECTION_NONBLOCKING": "0", "STAYER_CONFIG_DIR": str(user)}
    task = _task(source, server, env={**server.env(), **waits})
    config: dict[str, Any] = {} if sources is None else {"setting_sources": sources}

    result = await _run(task, tmp_path / "out", **config)

    assert result.terminal_reason == "completed"
    assert started.exists() is (sources is not None)


async def test_a_timeout_while_the_model_service_fails_is_an_error_of_stage_model(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    # the service asks for a wait longer than the task has: the time runs out in the retry
    overloaded = anthropic_error(
        529, "overloaded_error", "Overloaded", headers={"retry-after": "600"}
    )
    server.respond_with(TaskRouter({"t1": [overloaded]}))

    result = await _run(_task(source, server, timeout_s=6.0), tmp_path / "out")

    assert (result.terminal_reason, result.is_error) == ("timeout", True)
    assert result.error is not None and result.error.stage == "model"
    assert "Overloaded" in result.error.message and "529" in result.error.message


async def test_a_timeout_after_the_model_answered_again_is_the_agents(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    overloaded = anthropic_error(500, "api_error", "boom", headers={"retry-after": "0"})
    sleeping = reply(ToolCall("toolu_1", BASH, {"command": "sleep 600"}))
    server.respond_with(TaskRouter({"t1": [overloaded, sleeping]}))
    task = _task(source, server, timeout_s=6.0, permission_mode="bypassPermissions")

    result = await _run(task, tmp_path / "out")

    assert (result.terminal_reason, result.error) == ("timeout", None)
    assert len(server.requests) == 2


def _escaping(name: str, pid_file: Path) -> str:
    """A command that starts `sleep` in a session of its own (out of the command's process
    group), and returns once it has written its pid."""
    inner = f"echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; exec sleep {name}"
    return (
        f"setsid sh -c '{inner}' </dev/null >/dev/null 2>&1 & "
        f"until [ -s {pid_file} ]; do sleep 0.01; done"
    )


async def test_what_a_task_started_in_a_session_of_its_own_ends_with_the_task(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    from tests.process_table import gone_within

    from_setup, from_bash = tmp_path / "setup.pid", tmp_path / "bash.pid"
    call = ToolCall("toolu_1", BASH, {"command": _escaping("7772", from_bash)})
    server.respond_with(TaskRouter({"t1": [reply(call), reply("done")]}))
    task = _task(
        source, server, setup=_escaping("7771", from_setup), permission_mode="bypassPermissions"
    )

    result = await _run(task, tmp_path / "out")

    assert (result.terminal_reason, result.error) == ("completed", None)
    pids = [int(file.read_text()) for file in (from_setup, from_bash)]
    await gone_within(pids, 30.0)


def test_only_the_tasks_own_leftovers_are_stopped(tmp_path: Path) -> None:
    import subprocess

    from stayer.batch.leftovers import MARK_VARIABLE, new_mark, stop_marked

    mine, other = new_mark("t1"), new_mark("t1")
    started = [
        subprocess.Popen(["sleep", "7773"], env={**os.environ, MARK_VARIABLE: mark})
        for mark in (mine, other)
    ]
    try:
        assert stop_marked(mine) == 1
        assert started[0].wait() == -9
        assert started[1].poll() is None
    finally:
        for process in started:
            process.kill()
            process.wait()


async def test_writing_into_the_workspaces_objects_leaves_the_source_whole(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    server.respond_with(TaskRouter({"t1": [reply("done")]}))
    every_object = (
        "find .git/objects -type f | while read -r f; do "
        'chmod u+w "$f" && printf garbage >> "$f" || exit 1; done'
    )
    task = _task(source, server, check=every_object)

    result = await _run(task, tmp_path / "out")

    assert result.check is not None and result.check.passed, result.check
    git(source, "fsck", "--full", "--strict")
    assert git(source, "log", "--format=%s") == "first\n"


@pytest.mark.parametrize("keep", [False, True])
async def test_the_workspace_is_removed_once_its_diff_and_check_are_taken_unless_kept(
    tmp_path: Path, source: Path, server: FakeModelServer, keep: bool
) -> None:
    out = tmp_path / "out"
    server.respond_with(
        TaskRouter({"t1": tool_turns("t1", 1, workspace=out / "workspaces" / "t1")})
    )
    task = _task(source, server, check="test -f t1-1.txt", permission_mode="acceptEdits")

    result = await _run(task, out, keep_workspaces=keep)

    assert "+t1 1" in result.diff
    assert result.check is not None and result.check.passed
    assert (out / "workspaces" / "t1").exists() is keep


@pytest.mark.parametrize("sandbox", [False, True])
async def test_with_the_sandbox_an_agent_allowed_git_cannot_push_into_the_source(
    tmp_path: Path, source: Path, server: FakeModelServer, sandbox: bool
) -> None:
    from tests.sandboxes import skip_without_sandbox

    if sandbox:
        skip_without_sandbox(tmp_path)
    refs = git(source, "for-each-ref")
    push = ToolCall("toolu_1", BASH, {"command": f"git push {source} HEAD:refs/heads/pushed"})
    server.respond_with(TaskRouter({"t1": [reply(push), reply("done")]}))
    task = _task(source, server, allowed_tools=("Bash(git *)",))

    result = await _run(task, tmp_path / "out", sandbox=sandbox)

    assert (result.terminal_reason, result.error) == ("completed", None)
    answered = json.dumps(server.requests[1].messages[-1])
    assert ("[new branch]" in answered) is not sandbox
    assert (git(source, "for-each-ref") == refs) is sandbox


async def _held_fleet(how: str) -> LocalLimiter:
    """A limiter whose gate stays closed far past the task's time: a pause another task's 429
    asked for, or a requests-per-minute limit already spent."""
    if how == "paused":
        limiter = LocalLimiter({})
        await limiter.slow_down("anthropic", 600.0)
    else:
        limiter = LocalLimiter({ANY_PROVIDER: RateLimit(requests_per_minute=0.1)})
        await limiter.acquire("anthropic", 0)  # the one request the bucket holds
    return limiter


@pytest.mark.parametrize("how", ["paused", "spent"])
async def test_a_timeout_while_the_batchs_rate_limit_holds_the_call_is_an_error_of_stage_model(
    tmp_path: Path, source: Path, server: FakeModelServer, how: str
) -> None:
    server.respond_with(TaskRouter({"t1": [reply("never sent")]}))
    pool = ProviderPool(concurrency=1, wrap=limited_by(await _held_fleet(how)))
    try:
        result = await _run(_task(source, server, timeout_s=6.0), tmp_path / "out", pool=pool)
    finally:
        await pool.aclose()

    assert (result.terminal_reason, result.is_error) == ("timeout", True)
    assert result.error is not None and result.error.stage == "model"
    assert "held by the batch's rate limit" in result.error.message
    assert server.requests == []


async def test_a_timeout_in_the_agents_own_tool_call_under_a_rate_limit_is_the_agents(
    tmp_path: Path, source: Path, server: FakeModelServer
) -> None:
    sleeping = reply(ToolCall("toolu_1", BASH, {"command": "sleep 600"}))
    server.respond_with(TaskRouter({"t1": [sleeping]}))
    limiter = LocalLimiter({ANY_PROVIDER: RateLimit(requests_per_minute=600.0)})
    pool = ProviderPool(concurrency=1, wrap=limited_by(limiter))
    task = _task(source, server, timeout_s=6.0, permission_mode="bypassPermissions")
    try:
        result = await _run(task, tmp_path / "out", pool=pool)
    finally:
        await pool.aclose()

    assert (result.terminal_reason, result.error) == ("timeout", None)
    assert len(server.requests) == 1
