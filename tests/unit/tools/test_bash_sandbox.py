"""The Bash tool with a sandbox in its context: commands, in the background too, run inside
it, and what Bash does around them (the working directory that persists, timeouts, KillShell)
still works. Skipped, with the reason, where bubblewrap cannot run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext
from stayer.tools.builtin.bash import BashTool
from stayer.tools.builtin.shells import KillShellTool
from tests.sandboxes import outside_tmp, running_with, working_sandbox
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[ToolContext]:
    with working_sandbox([tmp_path]) as sandbox:
        made = ToolContext(cwd=tmp_path, sandbox=sandbox)
        yield made
        await made.shells.aclose()


async def _until_gone(marker: str) -> None:
    deadline = time.monotonic() + 10
    while running_with(marker):
        assert time.monotonic() < deadline, f"{marker} still runs"
        await asyncio.sleep(0.01)


async def test_a_directory_change_persists_across_sandboxed_calls(ctx: ToolContext) -> None:
    (ctx.cwd / "sub").mkdir()
    bash = BashTool()
    assert text_of(await run_tool(bash, ctx, command="cd sub && touch here")) == ""
    output = await run_tool(bash, ctx, command="pwd; ls")
    assert text_of(output) == f"{(ctx.cwd / 'sub').resolve()}\nhere"


async def test_a_write_outside_the_working_directory_is_an_error_the_model_reads(
    ctx: ToolContext,
) -> None:
    with outside_tmp() as outside:
        output = await run_tool(BashTool(), ctx, command=f"touch made {outside}/escaped")
        assert not (outside / "escaped").exists()
    assert (output.is_error, text_of(output)) == (
        True,
        f"touch: cannot touch '{outside}/escaped': Read-only file system\nExit code 1",
    )
    assert (ctx.cwd / "made").exists()


async def test_a_sandboxed_timeout_stops_the_command(ctx: ToolContext) -> None:
    marker = "sleep 3600.4242421"
    output = await run_tool(BashTool(), ctx, command=f"echo begun; {marker}", timeout=500)
    assert (output.is_error, text_of(output)) == (
        True,
        "begun\nCommand timed out after 0.5 s and was stopped.",
    )
    await _until_gone(marker)


async def test_a_background_command_runs_sandboxed_until_kill_shell(ctx: ToolContext) -> None:
    marker = "sleep 3600.4242422"
    with outside_tmp() as outside:
        started = await run_tool(
            BashTool(),
            ctx,
            command=f"touch {outside}/escaped || touch refused; {marker}",
            run_in_background=True,
        )
        shell_id = str(started.data["backgroundTaskId"])
        deadline = time.monotonic() + 10
        while not (ctx.cwd / "refused").exists():
            assert time.monotonic() < deadline, "the background command never got that far"
            await asyncio.sleep(0.01)
        assert not (outside / "escaped").exists()
    assert running_with(marker)
    killed = await run_tool(KillShellTool(), ctx, shell_id=shell_id)
    assert not killed.is_error, text_of(killed)
    await _until_gone(marker)
