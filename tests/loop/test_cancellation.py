"""Cancelling the task that consumes a run stops its work: no tool process outlives it.

A clean end with `Finished` comes from `AbortSignal.abort()`; cancellation is the hard stop
(asyncio.timeout, a caller going away) and must still leave nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from msgspec.structs import replace

from stayer.loop.run import query
from stayer.messages import UserMessage
from stayer.providers.scripted import ScriptedProvider, tool_call
from stayer.tools.registry import builtin_toolbox
from tests.fakes.loop_harness import make_params
from tests.process_table import family_command, gone_within, read_pids


async def test_cancelling_the_consumer_kills_the_running_command(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    model = ScriptedProvider([tool_call("Bash", {"command": family_command(pids_file)}, id="t1")])
    params = replace(make_params(model, [], tmp_path), tools=builtin_toolbox({"Bash"}))

    async def consume() -> None:
        async for _ in query(params, (UserMessage.of_text("go"),)):
            pass

    task = asyncio.create_task(consume())
    async with asyncio.timeout(20):
        while not pids_file.exists():  # the command says it runs, with its child
            assert not task.done(), "the run ended before its command started"
            await asyncio.sleep(0.01)
    pids = read_pids(pids_file)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await gone_within(pids, 10)  # gone once the task is; the deadline only bounds the poll
