"""Cancelling the task that consumes a run stops its work: no tool process outlives it.

A clean end with `Finished` comes from `AbortSignal.abort()`; cancellation is the hard stop
(asyncio.timeout, a caller going away) and must still leave nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from msgspec.structs import replace

from stayer.events import ToolCallStarted
from stayer.loop.run import query
from stayer.messages import UserMessage
from stayer.providers.scripted import ScriptedProvider, tool_call
from stayer.tools.registry import builtin_toolbox
from tests.fakes.loop_harness import make_params


async def test_cancelling_the_consumer_kills_the_running_command(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    model = ScriptedProvider(
        [tool_call("Bash", {"command": f"sleep 2 && touch {marker}"}, id="t1")]
    )
    params = replace(make_params(model, [], tmp_path), tools=builtin_toolbox({"Bash"}))
    started = asyncio.Event()

    async def consume() -> None:
        async for event in query(params, (UserMessage.of_text("go"),)):
            if isinstance(event, ToolCallStarted):
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.sleep(0.3)  # the command is running now
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.sleep(2.5)
    assert not marker.exists(), "the command went on after its run was cancelled"
