"""Bash's run_in_background with BashOutput and KillShell, on real processes. Tests wait on
marker files and output, never on sleeps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin.bash import BashTool
from stayer.tools.builtin.shells import BashOutputTool, KillShellTool
from tests.unit.tools.helpers import is_running, run_tool, text_of


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[ToolContext]:
    made = ToolContext(cwd=tmp_path)
    yield made
    await made.shells.aclose()


async def _background(ctx: ToolContext, command: str, bash: BashTool | None = None) -> str:
    output = await run_tool(bash or BashTool(), ctx, command=command, run_in_background=True)
    shell_id = output.data["backgroundTaskId"]
    assert isinstance(shell_id, str)
    assert text_of(output) == (
        f"Command running in background with ID: {shell_id}. Read its output with "
        "BashOutput and stop it with KillShell."
    )
    return shell_id


async def _until_file(path: Path) -> None:
    deadline = time.monotonic() + 5
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.01)


async def _output_until(ctx: ToolContext, shell_id: str, wanted: str) -> str:
    """BashOutput, called until what it showed contains `wanted`; all it showed."""
    deadline = time.monotonic() + 5
    text = ""
    while True:
        text += text_of(await run_tool(BashOutputTool(), ctx, bash_id=shell_id))
        if wanted in text:
            return text
        assert time.monotonic() < deadline, f"{wanted!r} never came"
        await asyncio.sleep(0.01)


async def _read_to_the_end(
    ctx: ToolContext, shell_id: str, **options: str
) -> tuple[str, str, ToolOutput]:
    """BashOutput until the shell is no longer running: all stdout and stderr it showed, and
    the last output."""
    stdout = stderr = ""
    deadline = time.monotonic() + 5
    while True:
        output = await run_tool(BashOutputTool(), ctx, bash_id=shell_id, **options)
        stdout += str(output.data["stdout"])
        stderr += str(output.data["stderr"])
        if output.data["status"] != "running":
            return stdout, stderr, output
        assert time.monotonic() < deadline, "the shell never ended"
        await asyncio.sleep(0.01)


async def test_the_call_returns_at_once_and_the_command_runs_on(ctx: ToolContext) -> None:
    shell_id = await _background(ctx, "until [ -e go ]; do sleep 0.01; done; echo finished")
    assert shell_id == "bash_1"
    running = await run_tool(BashOutputTool(), ctx, bash_id=shell_id)
    assert text_of(running) == "<status>running</status>\n\n(no new output)"
    (ctx.cwd / "go").touch()
    shell = ctx.shells.get(shell_id)
    assert shell is not None
    await shell.wait()
    text = text_of(await run_tool(BashOutputTool(), ctx, bash_id=shell_id))
    assert text == (
        "<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<stdout>\nfinished\n</stdout>"
    )


async def test_bash_output_shows_only_new_output_of_both_streams(ctx: ToolContext) -> None:
    shell_id = await _background(
        ctx, "echo one; echo oops >&2; until [ -e go ]; do sleep 0.01; done; echo two; exit 5"
    )
    first = await _output_until(ctx, shell_id, "oops")
    if "one" not in first:  # stderr came first; stdout is in a later read
        first += await _output_until(ctx, shell_id, "one")
    assert "<stdout>\none\n</stdout>" in first and "<stderr>\noops\n</stderr>" in first
    (ctx.cwd / "go").touch()
    stdout, stderr, last = await _read_to_the_end(ctx, shell_id)
    assert (stdout, stderr) == ("two\n", "")
    assert (last.data["status"], last.data["exitCode"]) == ("failed", 5)
    assert text_of(last).startswith("<status>failed</status>\n\n<exit_code>5</exit_code>")


async def test_a_filter_keeps_matching_lines_and_drops_the_rest(ctx: ToolContext) -> None:
    shell_id = await _background(ctx, "printf 'ok 1\\nERROR a\\nok 2\\nERROR b\\n'")
    stdout, _, _ = await _read_to_the_end(ctx, shell_id, filter="^ERROR")
    assert stdout == "ERROR a\nERROR b\n"
    after = await run_tool(BashOutputTool(), ctx, bash_id=shell_id)
    assert text_of(after) == (
        "<status>completed</status>\n\n<exit_code>0</exit_code>\n\n(no new output)"
    )


async def test_a_bad_filter_is_refused_and_consumes_nothing(ctx: ToolContext) -> None:
    shell_id = await _background(ctx, "echo kept; touch done")
    await _until_file(ctx.cwd / "done")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(BashOutputTool(), ctx, bash_id=shell_id, filter="(")
    assert str(failure.value).startswith("The filter '(' is not a valid regular expression (")
    assert "kept" in await _output_until(ctx, shell_id, "kept")


async def test_unknown_ids_are_refused_naming_the_known_ones(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure) as none_yet:
        await run_tool(BashOutputTool(), ctx, bash_id="bash_9")
    assert str(none_yet.value) == (
        "No background shell has the id 'bash_9'; none has been started. Start one with Bash "
        "and run_in_background."
    )
    await _background(ctx, "true")
    with pytest.raises(ToolFailure) as one_known:
        await run_tool(KillShellTool(), ctx, shell_id="bash_9")
    assert "the shells of this session are: bash_1." in str(one_known.value)


async def test_kill_shell_stops_the_command_and_all_it_started(ctx: ToolContext) -> None:
    command = "sleep 60 & echo $! > pid; mv pid child; wait"  # mv: the file appears whole
    shell_id = await _background(ctx, command)
    await _until_file(ctx.cwd / "child")
    child = int((ctx.cwd / "child").read_text())
    output = await run_tool(KillShellTool(), ctx, shell_id=shell_id)
    assert text_of(output) == (f"Successfully killed shell: {shell_id} ({command})")
    assert not is_running(child)
    status = await run_tool(BashOutputTool(), ctx, bash_id=shell_id)
    assert text_of(status).startswith("<status>killed</status>\n\n<exit_code>143</exit_code>")
    with pytest.raises(ToolFailure) as again:
        await run_tool(KillShellTool(), ctx, shell_id=shell_id)
    assert str(again.value) == f"Shell {shell_id} is not running (status: killed); nothing to kill."


async def test_new_output_is_cut_to_the_output_limit(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, env={"BASH_MAX_OUTPUT_LENGTH": "2000"})
    try:
        shell_id = await _background(ctx, "seq -f '%099g' 1 5000; seq 1 3 >&2")
        await ctx.shells.list()[0].wait()
        text = text_of(await run_tool(BashOutputTool(), ctx, bash_id=shell_id))
        assert len(text) <= 2000
        assert "characters of stdout omitted" in text
        assert text.endswith("<stderr>\n1\n2\n3\n</stderr>")
    finally:
        await ctx.shells.aclose()


async def test_a_background_command_starts_in_the_working_directory_but_never_moves_it(
    ctx: ToolContext,
) -> None:
    (ctx.cwd / "sub").mkdir()
    bash = BashTool()
    await run_tool(bash, ctx, command="cd sub")
    await _background(ctx, "pwd -P > where; touch done; cd /", bash)
    await _until_file(ctx.cwd / "sub" / "done")
    assert (ctx.cwd / "sub" / "where").read_text() == f"{(ctx.cwd / 'sub').resolve()}\n"
    assert text_of(await run_tool(bash, ctx, command="pwd -P")) == str((ctx.cwd / "sub").resolve())


def test_bash_output_is_read_only_and_concurrency_safe_and_kill_shell_needs_no_prompt() -> None:
    reader, killer = BashOutputTool(), KillShellTool()
    read_input = reader.input_model.model_validate({"bash_id": "bash_1"})
    kill_input = killer.input_model.model_validate({"shell_id": "bash_1"})
    assert reader.is_read_only(read_input) and reader.is_concurrency_safe(read_input)
    assert killer.is_read_only(kill_input) and not killer.is_concurrency_safe(kill_input)
