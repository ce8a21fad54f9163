"""One task of a batch, from its workspace to its result: `run_task`.

The task's workspace is made from its repository (`workspace`), its `setup` command runs there,
then a full Session (the loop, recovery, guardrails) works on the prompt through a `Driver`,
with the batch's shared model client for the task's model. The setup and check commands get the
environment Bash does (`stayer.exec.child_env`: stayer's and the task's `env`, without the
model's credentials unless ``STAYER_PASS_ENV`` names them), since they usually run the
repository's own code. Nobody can answer a permission
question in a batch, so the session gets no decider: a call the task's permission mode and
allowed tools would ask about is denied. Making the workspace, the setup and the session run
under the task's time; when it runs out the session is interrupted and still ends with its
`Finished`, and the task's reason is `timeout`. The `check` command then runs with a time of its
own, and the workspace is then removed (unless `keep_workspaces`). The session keeps its
transcript and files in `<transcripts>/<id>/`, under the output folder, not among the user's
own sessions.

What went wrong is sorted once, here: failures of the infrastructure (the workspace, the setup,
the model service after the loop's retries, stayer itself) are an `error` with its stage, which
`--retry-errors` runs again; everything the agent did, a timeout included, is its own result,
but for a timeout that caught the run retrying a failed model call (its last `Retrying` event
not followed by an answer), or one of its model calls held by the batch's rate limit (waiting at
the fleet's limiter, `limited.HOLD`): that one is the service's, `timeout` with a `model` error.
Nothing a task does escapes `run_task` but a cancellation (the batch stopping), which stops
the session the same orderly way before it propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.driver import Close, Driver
from stayer.errors import ConfigError, StayerError
from stayer.events import Event, Finished, MessageStarted, Retrying, Terminal
from stayer.exec.child_env import child_env
from stayer.messages import Usage
from stayer.session.options import QueryOptions

from .config import BatchConfig
from .leftovers import MARK_VARIABLE, new_mark, stop_marked
from .limited import HOLD, Hold
from .pool import Client, ProviderPool
from .results import CheckOutcome, Stage, TaskError, TaskResult
from .tasks import BatchTask
from .workspace import (
    Workspace,
    WorkspaceError,
    make_workspace,
    remove_workspace,
    run_command,
    workspace_diff,
)

DEFAULT_PERMISSION_MODE = "default"
STOP_GRACE_S = 10.0
"""After an interrupt, how long a session has to end on its own before it is cancelled (which
stops whatever it still runs at once)."""
INTERNAL_MARKS = ("internal error", "the run stopped on an internal error")
"""How a `model_error` caused by stayer's own fault, not the model service's, begins."""
_MESSAGE_CAP = 2000
REPOSITORY_SOURCES = frozenset({"project", "local"})
"""The setting sources that live in the task's repository: read only on request, as is what
they could approve (the repository's `.mcp.json` servers)."""


class Ended(Struct, frozen=True):
    """How a task's session ended: its `Finished` (None if it never opened), whether the task's
    time ran out, its transcript, and the driver's lines about what it could not do."""

    finished: Finished | None
    timed_out: bool
    transcript: Path | None = None
    errors: tuple[str, ...] = ()
    failing: Retrying | None = None
    """The model call's failure the run was retrying when it ended, if it was (a later
    answer from the model clears it)."""
    held: bool = False
    """Whether a model call of the run was waiting at the batch's rate limit when its time ran
    out."""


class _Failed(Exception):
    """An infrastructure failure before the session: ends the task with an `error`."""

    def __init__(self, stage: Stage, message: str) -> None:
        super().__init__(message)
        self.stage: Stage = stage


async def run_task(
    task: BatchTask,
    config: BatchConfig,
    *,
    providers: ProviderPool,
    workspaces: Path,
    transcripts: Path,
) -> TaskResult:
    """Run `task` to its result line; never raises but `CancelledError` (see the module)."""
    started = time.monotonic()
    model = task.model or config.model
    try:
        return await _run(task, config, providers, workspaces, transcripts, started)
    except _Failed as failed:
        return failure(task, failed.stage, str(failed), started, model=model)
    except Exception as error:  # stayer's own fault: this task ends, the batch goes on
        line = f"stayer failed running the task: {type(error).__name__}: {error}"
        return failure(task, "internal", line, started, model=model)


async def _run(
    task: BatchTask,
    config: BatchConfig,
    providers: ProviderPool,
    workspaces: Path,
    transcripts: Path,
    started: float,
) -> TaskResult:
    timeout_s = task.timeout_s or config.timeout_s
    clock = _Clock(started, asyncio.get_running_loop().time() + timeout_s, timeout_s)
    mark = new_mark(task.id)
    env = {**os.environ, **task.env, MARK_VARIABLE: mark}
    try:
        client = providers.client(task.model or config.model, env)
    except ConfigError as error:
        raise _Failed("model", str(error)) from None
    try:
        return await _run_marked(task, config, client, env, (workspaces, transcripts), clock)
    finally:  # what left its process group (setsid) must not outlive the task
        await asyncio.shield(asyncio.to_thread(stop_marked, mark))
        if not config.keep_workspaces:
            await _remove_workspace(workspaces, task.id)


async def _remove_workspace(workspaces: Path, task_id: str) -> None:
    """Remove a task's workspace once its diff and check are taken; one that cannot be
    removed is left (the next run of the task replaces it)."""
    with contextlib.suppress(WorkspaceError):
        await asyncio.to_thread(remove_workspace, workspaces, task_id)


class _Clock(Struct, frozen=True):
    """A task's time: when it started (`time.monotonic`), its deadline (the event loop's
    clock) and its length."""

    started: float
    deadline: float
    timeout_s: float


async def _run_marked(
    task: BatchTask,
    config: BatchConfig,
    client: Client,
    env: dict[str, str],
    folders: tuple[Path, Path],
    clock: _Clock,
) -> TaskResult:
    """The task from its workspace on, every process it starts carrying its mark in `env`."""
    deadline, timeout_s = clock.deadline, clock.timeout_s
    workspace = await _workspace(task, folders[0], deadline, timeout_s)
    commands_env = child_env(env)  # the repository's code must not read the model's keys
    await _setup(task, workspace, commands_env, deadline, timeout_s)
    options = task_options(task, config, client, workspace.path, env)
    options = replace(options, sessions_dir=folders[1] / task.id)  # not ~/.stayer/projects
    ended = await run_session(options, task.prompt, deadline, timeout_s)
    transcript = _written(ended.transcript)
    result = outcome(
        task,
        ended,
        transcript=transcript,
        model=client.choice.display_name,
        duration_s=time.monotonic() - clock.started,
    )
    return await _after(result, task, workspace, commands_env, timeout_s, clock.started)


async def _after(
    result: TaskResult,
    task: BatchTask,
    workspace: Workspace,
    env: Mapping[str, str],
    timeout_s: float,
    started: float,
) -> TaskResult:
    """`result` with the agent's diff (taken first, so what the check writes is not in it) and
    the check's outcome; a failure to take either is the result's `error` (what the session
    did is kept)."""
    error = result.error
    diff = ""
    try:
        diff = await workspace_diff(workspace)
    except WorkspaceError as failed:
        error = error or TaskError("workspace", one_line(str(failed)))
    check = None
    try:
        check = await _check(task, workspace, env, timeout_s)
    except WorkspaceError as failed:
        error = error or TaskError("check", one_line(str(failed)))
    duration_s = round(time.monotonic() - started, 3)
    return replace(result, diff=diff, check=check, duration_s=duration_s, error=error)


def task_options(
    task: BatchTask, config: BatchConfig, client: Client, cwd: Path, env: Mapping[str, str]
) -> QueryOptions:
    """The session's options for `task`: in its workspace, on the shared client with the
    task's model, its limits and policy; no decider, so what would ask is denied. Only the
    settings `config.setting_sources` names are read (the user's by default); unless the
    repository's own are among them, no MCP server starts (see `REPOSITORY_SOURCES`)."""
    return QueryOptions(
        model=client.choice.model,
        provider=client.provider,
        betas=client.choice.betas,
        cwd=cwd,
        env=env,
        max_turns=task.max_turns,
        permission_mode=task.permission_mode or config.permission_mode or DEFAULT_PERMISSION_MODE,
        allowed_tools=task.allowed_tools,
        setting_sources=config.setting_sources,
        sandbox=config.sandbox,
        # with the repository's settings unread, its .mcp.json must not start servers either
        # (a user's `enableAllProjectMcpServers` would approve any repository's)
        strict_mcp_config=not REPOSITORY_SOURCES & set(config.setting_sources),
    )


async def _workspace(
    task: BatchTask, workspaces: Path, deadline: float, timeout_s: float
) -> Workspace:
    try:
        async with asyncio.timeout_at(deadline):
            return await make_workspace(task, workspaces)
    except WorkspaceError as error:
        raise _Failed("workspace", str(error)) from None
    except TimeoutError:
        took = f"making the workspace took the task's whole {timeout_s:g} s"
        raise _Failed("workspace", took) from None


async def _setup(
    task: BatchTask, workspace: Workspace, env: Mapping[str, str], deadline: float, timeout_s: float
) -> None:
    if task.setup is None:
        return
    left = deadline - asyncio.get_running_loop().time()
    ran = await run_command(task.setup, workspace.path, env, max(left, 0.001))
    if ran.timed_out:
        raise _Failed("setup", f"the setup command ran past the task's {timeout_s:g} s")
    if ran.exit_code != 0:
        said = last_line(ran.output)
        raise _Failed("setup", f"the setup command exited with status {ran.exit_code}" + said)


async def _check(
    task: BatchTask, workspace: Workspace, env: Mapping[str, str], timeout_s: float
) -> CheckOutcome | None:
    if task.check is None:
        return None
    ran = await run_command(task.check, workspace.path, env, timeout_s)
    if ran.timed_out:
        output = f"{ran.output}\n[the check ran past its {timeout_s:g} s and was stopped]"
        return CheckOutcome(exit_code=-1, passed=False, output=output.strip())
    return CheckOutcome(exit_code=ran.exit_code, passed=ran.exit_code == 0, output=ran.output)


async def run_session(
    options: QueryOptions, prompt: str, deadline: float, timeout_s: float
) -> Ended:
    """Open a session from `options`, run `prompt` and end it, by `deadline` (the event loop's
    clock): past it the run is interrupted and ends as interrupted runs do. A cancellation
    stops the run the same way, then propagates."""
    hold = Hold()
    reset = HOLD.set(hold)  # before the session opens: its tasks copy the context
    try:
        return await _run_session(options, prompt, deadline, timeout_s, hold)
    finally:
        HOLD.reset(reset)


async def _run_session(
    options: QueryOptions, prompt: str, deadline: float, timeout_s: float, hold: Hold
) -> Ended:
    finished: list[Finished] = []
    failing: list[Retrying | None] = [None]

    async def sink(event: Event) -> None:
        if isinstance(event, Finished):
            finished.append(event)
        elif isinstance(event, Retrying):
            failing[0] = event
        elif isinstance(event, MessageStarted):  # the model answers again
            failing[0] = None

    try:
        async with asyncio.timeout_at(deadline):
            driver = await Driver.open(options, sink)
    except TimeoutError:
        return Ended(None, timed_out=True)
    except StayerError as error:  # the task's rules or the repository's settings
        raise _Failed("setup", f"the session could not start: {error}") from None
    driver.submit(prompt)
    driver.send(Close())
    running = asyncio.ensure_future(driver.run())
    timed_out = held = False
    try:
        async with asyncio.timeout_at(deadline):
            await asyncio.shield(running)
    except TimeoutError:
        timed_out, held = True, hold.held  # read before the interrupt lets the call go
        await _stop(driver, running, f"the task ran out of its {timeout_s:g} s")
    except asyncio.CancelledError:
        await _stop(driver, running, "the batch was stopped")
        raise
    if not running.cancelled():  # one that had to be cancelled ended as `_stop` says
        running.result()  # the driver's own failure is stayer's: `internal`
    last = finished[-1] if finished else None
    errors = tuple(driver.errors)
    return Ended(last, timed_out, driver.session.transcript_path, errors, failing[0], held)


async def _stop(driver: Driver, running: asyncio.Future[None], reason: str) -> None:
    """Interrupt the run and let it end (its `Finished`, the session closed); cancel it when it
    has not within `STOP_GRACE_S`."""
    driver.interrupt(reason)
    try:
        await asyncio.wait({running}, timeout=STOP_GRACE_S)
    finally:  # past the grace, or cancelled again (a second Ctrl-C): stop it now
        if not running.done():
            running.cancel()
            await asyncio.wait({running})


def _written(transcript: Path | None) -> str | None:
    """The session's transcript (kept under the output folder: `sessions_dir`), if it wrote
    one."""
    return str(transcript) if transcript is not None and transcript.is_file() else None


def outcome(
    task: BatchTask,
    ended: Ended,
    *,
    transcript: str | None,
    model: str | None,
    duration_s: float,
) -> TaskResult:
    """The result line of a task whose session ran (or was to run): its reason, and an `error`
    when the model service failed it or stayer did."""
    finished = ended.finished
    error = _timeout_error(ended) if ended.timed_out else run_error(finished, ended.errors)
    if ended.timed_out:
        reason = "timeout"
    elif finished is None:
        reason, error = "error", TaskError("internal", "the session ended without a result")
    else:
        reason = finished.terminal.value
    return TaskResult(
        id=task.id,
        terminal_reason=reason,
        is_error=ended.timed_out or finished is None or finished.is_error,
        turns=0 if finished is None else finished.num_turns,
        usage=Usage() if finished is None else finished.usage,
        cost_usd=0.0 if finished is None else finished.cost_usd,
        duration_s=round(duration_s, 3),
        check=None,
        diff="",
        transcript=transcript,
        result="" if finished is None else finished.result_text,
        error=error,
        model=model,
    )


def run_error(finished: Finished | None, errors: tuple[str, ...]) -> TaskError | None:
    """The infrastructure failure a run's end shows, if any: `model` when the model service
    failed it after the loop's retries (unreachable, refusing, answering garbage), `internal`
    when stayer did."""
    if finished is None or finished.terminal is not Terminal.MODEL_ERROR:
        return None
    message = one_line(finished.message)
    if any(line.startswith(INTERNAL_MARKS) for line in errors) or message.startswith(
        INTERNAL_MARKS
    ):
        return TaskError("internal", message)
    if finished.error_status is not None and f"{finished.error_status}" not in message:
        message = f"{message} (HTTP {finished.error_status})"
    return TaskError("model", message)


def _timeout_error(ended: Ended) -> TaskError | None:
    """The `model` error of a run whose time ran out on the model service's side (a call
    being retried, or held by the batch's rate limit); None when the agent's own work ran
    it out."""
    if ended.failing is not None:
        return _failing_error(ended.failing)
    if ended.held:
        return TaskError(
            "model",
            "the task's time ran out while its model call was held by the batch's rate limit "
            "(its requests or tokens per minute, or a pause after the provider's 429)",
        )
    return None


def _failing_error(failing: Retrying) -> TaskError:
    """The `model` error of a task whose time ran out while its model call was failing: the
    service's fault, not the agent's, so `--retry-errors` runs it again."""
    said = one_line(failing.error)
    status = (
        "" if failing.status is None or f"{failing.status}" in said else f" (HTTP {failing.status})"
    )
    return TaskError(
        "model",
        f"the task's time ran out while the model service was failing (retry "
        f"{failing.attempt} of {failing.max_retries}): {said}{status}",
    )


def failure(
    task: BatchTask, stage: Stage, message: str, started: float, *, model: str | None
) -> TaskResult:
    """The result line of a task that failed before its session could run."""
    return TaskResult(
        id=task.id,
        terminal_reason="error",
        is_error=True,
        turns=0,
        usage=Usage(),
        cost_usd=0.0,
        duration_s=round(time.monotonic() - started, 3),
        check=None,
        diff="",
        transcript=None,
        result="",
        error=TaskError(stage, one_line(message)),
        model=model,
    )


def one_line(text: str) -> str:
    """`text` on one line, capped: an error a person reads in a summary."""
    joined = " ".join(text.split())
    return joined if len(joined) <= _MESSAGE_CAP else joined[: _MESSAGE_CAP - 1] + "…"


def last_line(output: str) -> str:
    """`: ` and the last line the command printed, or nothing when it printed none."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return f": {one_line(lines[-1])}" if lines else ""
