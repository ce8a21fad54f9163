"""`stayer.driver.Driver`: operations in, events out to a sink, one run at a time, input
queued into the running run, one interrupt, permission questions answered by operations."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from stayer.driver import Answer, Clear, Close, Driver, Interrupt, SetMode, Submit
from stayer.events import (
    Continue,
    Continuing,
    Event,
    Finished,
    PermissionRequested,
    SessionStarted,
    Terminal,
)
from stayer.messages import TextBlock, UserMessage
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.tools.base import Tool, ToolContext, ToolOutput


class Empty(BaseModel):
    pass


class Hold(Tool[Empty]):
    """A tool that says it started and waits for the test's word."""

    name = "Hold"
    description = "Wait until released."
    input_model = Empty
    read_only = True

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def call(self, tool_input: Empty, ctx: ToolContext) -> ToolOutput:
        self.started.set()
        await self.release.wait()
        return ToolOutput("released")


class Collect:
    """A sink keeping every event, with a signal for the first of a kind."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._arrived: dict[type[Any], asyncio.Event] = {}

    async def __call__(self, event: Event) -> None:
        self.events.append(event)
        self.signal(type(event)).set()

    def signal(self, kind: type[Any]) -> asyncio.Event:
        return self._arrived.setdefault(kind, asyncio.Event())

    def finished(self) -> list[Finished]:
        return [event for event in self.events if isinstance(event, Finished)]


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    return QueryOptions(cwd=tmp_path, provider=model, env=env, persist_session=False, **more)


def said(message: Any) -> str:
    assert isinstance(message, UserMessage)
    return " ".join(block.text for block in message.content if isinstance(block, TextBlock))


async def test_a_prompt_runs_and_close_ends_the_session_after_it(tmp_path: Path) -> None:
    model = ScriptedProvider([text("done")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink)
    driver.send(Submit("go"))
    driver.send(Close())  # end of input: the run finishes first, it is not aborted
    await driver.run()

    assert isinstance(sink.events[0], SessionStarted)
    (last,) = sink.finished()
    assert last.terminal is Terminal.COMPLETED and last.result_text == "done"
    model.assert_done()


async def test_a_prompt_sent_while_a_run_goes_joins_it_at_its_next_model_call(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("both done")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Submit("and also this"))
    for _ in range(1000):  # the driver takes it within a few turns of the event loop
        if driver.session.queued:
            break
        await asyncio.sleep(0)
    assert driver.session.queued == ("and also this",)
    hold.release.set()
    driver.send(Close())
    await running

    (last,) = sink.finished()  # one run: the second prompt did not wait for a run of its own
    assert last.terminal is Terminal.COMPLETED
    second_call = model.requests[1].messages
    assert "and also this" in said(second_call[-1])  # with the tool's result, in one message
    model.assert_done()


async def test_an_interrupt_stops_the_run_and_keeps_what_was_queued_for_it_unsent(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {})])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Submit("later"))
    driver.send(Interrupt())
    await sink.signal(Finished).wait()
    driver.send(Close())
    await running

    (last,) = sink.finished()
    assert last.terminal is Terminal.ABORTED_TOOLS
    assert driver.unsent == ["later"]  # never sent, and offered back
    model.assert_done()


async def test_a_permission_question_is_answered_by_an_operation(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    model = ScriptedProvider(
        [tool_call("Write", {"file_path": str(target), "content": "hi\n"}), text("written")]
    )
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink, answers=True)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("write it"))
    await sink.signal(PermissionRequested).wait()
    asked = next(e for e in sink.events if isinstance(e, PermissionRequested))
    driver.send(Answer(asked.tool_use_id, Decision("allow")))
    await sink.signal(Finished).wait()
    driver.send(Close())
    await running

    assert target.read_text() == "hi\n"
    (last,) = sink.finished()
    assert last.terminal is Terminal.COMPLETED


async def test_close_denies_a_question_still_waiting_instead_of_hanging(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    model = ScriptedProvider(
        [tool_call("Write", {"file_path": str(target), "content": "x"}), text("could not")]
    )
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink, answers=True)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("write it"))
    await sink.signal(PermissionRequested).wait()
    driver.send(Close())  # end of input: nobody is left to answer
    await asyncio.wait_for(running, timeout=30)

    assert not target.exists()
    (last,) = sink.finished()
    assert last.terminal is Terminal.COMPLETED  # the model was told, and finished


async def test_an_interrupt_denies_a_question_still_waiting(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    model = ScriptedProvider([tool_call("Write", {"file_path": str(target), "content": "x"})])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink, answers=True)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("write it"))
    await sink.signal(PermissionRequested).wait()
    driver.send(Interrupt())
    driver.send(Close())
    await running

    assert not target.exists()
    (last,) = sink.finished()
    assert last.terminal in (Terminal.ABORTED_TOOLS, Terminal.ABORTED_STREAMING)


async def test_mode_and_clear_apply_between_prompts(tmp_path: Path) -> None:
    model = ScriptedProvider([text("one"), text("two")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await sink.signal(Finished).wait()
    driver.send(SetMode("plan"))
    driver.send(Clear())
    driver.send(Submit("second"))
    driver.send(Close())
    await running

    assert driver.session.permission_mode == "plan"
    (only,) = model.requests[1].messages  # a fresh conversation
    assert said(only).startswith("second")
    starts = [e.session_id for e in sink.events if isinstance(e, SessionStarted)]
    assert len(starts) == 2 and starts[0] != starts[1]
    assert not any(
        isinstance(e, Continuing) and e.reason is Continue.QUEUED_INPUT for e in sink.events
    )


async def test_a_prompt_sent_after_an_interrupt_runs_once_the_stopped_run_ends(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("the next one")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Interrupt())
    driver.send(Submit("then this"))
    driver.send(Close())
    await running

    first, second = sink.finished()
    assert first.terminal is Terminal.ABORTED_TOOLS
    assert (second.terminal, second.result_text) == (Terminal.COMPLETED, "the next one")
    assert driver.unsent == []
    model.assert_done()


async def test_an_operation_that_cannot_be_done_is_one_line_and_the_driver_goes_on(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("fine")])
    sink = Collect()
    told: list[str] = []
    driver = await Driver.open(options(tmp_path, model), sink, on_error=told.append)
    driver.send(SetMode("turbo"))
    driver.send(Submit("   "))
    driver.send(Submit("go"))
    driver.send(Close())
    await driver.run()

    assert len(driver.errors) == 2 and driver.errors == told
    assert "turbo" in driver.errors[0] and "empty" in driver.errors[1]
    (last,) = sink.finished()
    assert last.result_text == "fine"


async def test_a_prompt_sent_after_a_clear_is_not_added_to_the_run_before_it(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("old done"), text("new done")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("old"))
    await hold.started.wait()
    driver.send(Clear())
    driver.send(Submit("new"))
    driver.send(Close())
    for _ in range(1000):  # both operations taken
        if driver._inbox.empty():
            break
        await asyncio.sleep(0)
    hold.release.set()
    await running

    first, second = sink.finished()
    assert (first.result_text, second.result_text) == ("old done", "new done")
    (only,) = model.requests[2].messages  # the new conversation holds only the new prompt
    assert said(only).startswith("new")


async def test_a_prompt_sent_during_a_run_still_goes_past_the_prompt_hooks(
    tmp_path: Path,
) -> None:
    """UserPromptSubmit hooks judge every prompt: one sent while a run goes is not slipped into
    that run's next call, but waits for a run of its own, where they see it first."""
    hook = {"type": "command", "command": "grep -q forbidden && { echo no >&2; exit 2; }; exit 0"}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("first done")])
    sink = Collect()
    opts = options(tmp_path, model, extra_tools=[hold], settings=settings)
    driver = await Driver.open(opts, sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Submit("a forbidden thing"))
    driver.send(Close())
    for _ in range(1000):  # both operations taken
        if driver._inbox.empty():
            break
        await asyncio.sleep(0)
    assert driver.session.queued == ()
    hold.release.set()
    await running

    first, second = sink.finished()
    assert first.result_text == "first done"
    assert second.terminal is Terminal.HOOK_STOPPED
    assert "forbidden" not in str([request.messages for request in model.requests])
    model.assert_done()


async def test_settled_waits_for_the_run_going_and_returns_at_once_when_none_is(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("done")])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    await driver.settled()  # nothing going yet
    driver.submit("go")
    settling = asyncio.create_task(driver.settled())
    await hold.started.wait()
    busy_before = driver.busy
    assert busy_before and not settling.done()
    hold.release.set()
    await settling
    assert not driver.busy and len(sink.finished()) == 1
    driver.send(Close())
    await running
