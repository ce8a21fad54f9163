"""`Driver` when a run breaks on a bug of stayer's (an exception that is no `StayerError`): the
run still ends with a `Finished`, the fault is one line in `errors`, and the session goes on;
and a run `submit()` starts while `run()` waits on its inbox is watched like any other."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from stayer.driver import Close, Driver
from stayer.events import Event, Finished, Terminal
from stayer.loop.run import query as loop_query
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session import session as session_module
from tests.session.test_driver import Collect, options


async def _broken(*args: Any, **kwargs: Any) -> AsyncIterator[Event]:
    nothing: tuple[Event, ...] = ()
    for event in nothing:  # an async generator, as the loop's query is, that fails at once
        yield event
    raise RuntimeError("a planted fault")


async def _started(driver: Driver) -> asyncio.Task[None]:
    running = asyncio.create_task(driver.run())
    await asyncio.sleep(0)  # run() now waits on its inbox
    return running


async def test_a_run_a_bug_breaks_ends_with_finished_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedProvider([text("all well")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink)
    running = await _started(driver)
    real = loop_query
    monkeypatch.setattr(session_module, "loop_query", _broken)
    driver.submit("first")
    async with asyncio.timeout(10):
        await sink.signal(Finished).wait()
        await driver.settled()
    (broken,) = sink.finished()
    assert broken.terminal is Terminal.MODEL_ERROR and "a planted fault" in broken.message
    assert driver.errors == [broken.message]
    monkeypatch.setattr(session_module, "loop_query", real)
    driver.submit("second")
    driver.send(Close())
    async with asyncio.timeout(10):
        await running
    assert sink.finished()[-1].terminal is Terminal.COMPLETED
    model.assert_done()


async def test_a_sink_failing_in_a_run_submit_started_ends_run(tmp_path: Path) -> None:
    model = ScriptedProvider([text("done")])

    async def sink(event: Event) -> None:
        if isinstance(event, Finished):
            raise OSError("the front end's output is gone")

    driver = await Driver.open(options(tmp_path, model), sink)
    running = await _started(driver)
    driver.submit("go")
    with pytest.raises(OSError, match="output is gone"):
        async with asyncio.timeout(10):  # before: run() never noticed the run, and waited on
            await running
