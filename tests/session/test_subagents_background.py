"""Background subagents: the call returns at once, the child's events reach the parent's
stream as they come, and its report reaches the parent's model before the run may complete;
a run that ends otherwise stops them."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from pathlib import Path

import stayer
from stayer.events import (
    Continuing,
    Event,
    Finished,
    SessionStarted,
    StreamEvent,
    SubagentEvent,
    Terminal,
    ToolCallFinished,
)
from stayer.messages import TextBlock, ToolUseBlock, UserMessage
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.base import ToolContext, ToolOutput
from tests.fakes.tools import Echo, Rendezvous, TextInput, Touch

from .subagent_kit import HELPER, Router, Spawn, nested, options
from .test_subagents import result_text, run

LAUNCH = {"prompt": "find it", "description": "look", "run_in_background": True}


def outline(events: list[Event]) -> list[str]:
    """The run's events but the model's streaming, nested ones indented, with what says how
    it went on or ended."""
    lines = []
    for event in events:
        inner, indent = event, ""
        if isinstance(event, SubagentEvent):
            inner, indent = event.event, "  "
        if isinstance(inner, StreamEvent):
            continue
        detail = ""
        if isinstance(inner, Continuing):
            detail = f" {inner.reason.value}"
        if isinstance(inner, Finished):
            detail = f" {inner.terminal.value}"
        lines.append(f"{indent}{inner.type}{detail}")
    return lines


def last_user_text(messages: tuple[object, ...]) -> str:
    last = messages[-1]
    assert isinstance(last, UserMessage)
    return "".join(b.text for b in last.content if isinstance(b, TextBlock))


async def test_the_parent_reads_its_background_childs_report_before_it_completes(
    tmp_path: Path,
) -> None:
    lead = ScriptedProvider(
        [
            tool_call("Spawn", LAUNCH, id="t1"),
            text("I will wait for the helper."),
            text("The helper found it."),
        ]
    )
    helper = ScriptedProvider([text("It is under src/.")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(tmp_path, router)) as session:
        events = await run(session, "go")
        assert session.background.running == 0

    assert outline(events) == [
        "session_started",
        "request_started",
        "tool_call_started",
        "  session_started",  # all the call waits for
        "tool_call_finished",
        "tool_results_appended",
        "continuing next_turn",
        "request_started",  # the lead would stop here: the run waits for its child
        "  request_started",
        "  finished completed",
        "continuing queued_input",  # the child's report goes to the lead
        "request_started",
        "finished completed",
    ]
    (launched,) = [e for e in events if isinstance(e, ToolCallFinished)]
    agent_id = nested(events)[0].agent_id
    assert result_text(launched.result) == f"Started agent {agent_id} in the background."
    kinds = [(type(e.event).__name__, e.background) for e in nested(events)]
    assert kinds[0] == ("SessionStarted", True)
    assert kinds[-1] == ("Finished", True)
    # the child's whole run comes out before the parent's Finished, after its call returned
    order = [type(e).__name__ for e in events if isinstance(e, ToolCallFinished | Finished)]
    assert order == ["ToolCallFinished", "Finished"]
    assert events.index(launched) < events.index(nested(events)[-1])
    told = last_user_text(lead.requests[2].messages)
    assert told.startswith(f"<task-notification>\n<task-id>{agent_id}</task-id>\n")
    assert "<status>completed</status>" in told and "It is under src/." in told
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.terminal is Terminal.COMPLETED
    assert finished.result_text == "The helper found it."
    assert finished.usage.input_tokens == 400  # three calls of the lead's, one of the child's
    router.assert_done()


async def test_a_run_that_ends_otherwise_stops_its_background_children_and_bills_them(
    tmp_path: Path,
) -> None:
    async def never(_index: int) -> None:
        await asyncio.Event().wait()

    meet = Pair()  # the lead's round ends only once the child has made a call and run a tool
    lead = ScriptedProvider(
        [
            Reply(
                (
                    ToolUseBlock(id="t1", name="Spawn", input=LAUNCH),
                    ToolUseBlock(id="r1", name="Rendezvous", input={"text": "lead"}),
                )
            )
        ]
    )
    helper = ScriptedProvider(
        [
            tool_call("Rendezvous", {"text": "child"}, id="r2"),
            Reply((TextBlock("thinking"),), after_block=never),
        ]
    )
    router = Router(lead, **{HELPER: helper})
    opts = options(tmp_path, router, max_turns=1, extra_tools=[Spawn(), meet])
    async with stayer.Session(opts) as session:
        events = await run(session, "go")
        assert session.background.running == 0
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.terminal is Terminal.MAX_TURNS
    assert finished.usage.input_tokens == 200  # the lead's call and the stopped child's
    ends = [e.event for e in nested(events) if isinstance(e.event, Finished)]
    stopped = (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS)
    assert [f.terminal in stopped for f in ends] == [True]
    assert isinstance(nested(events)[0].event, SessionStarted)
    lead.assert_done()


async def test_a_run_its_consumer_leaves_stops_its_background_children(tmp_path: Path) -> None:
    async def never(_index: int) -> None:
        await asyncio.Event().wait()

    lead = ScriptedProvider([tool_call("Spawn", LAUNCH, id="t1"), text("waiting")])
    helper = ScriptedProvider([Reply((TextBlock("thinking"),), after_block=never)])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(tmp_path, router)) as session:
        async with aclosing(session.submit("go")) as events:
            async for event in events:
                if isinstance(event, ToolCallFinished):
                    break  # the consumer goes away while the child works
        assert session.background.running == 0


class Pair(Rendezvous):
    expected = 2


class Gate(Echo):
    """A read-only call that waits until the test opens the gate (it says when it is there)."""

    name = "Gate"

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.open = asyncio.Event()

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        self.reached.set()
        await self.open.wait()
        return ToolOutput("through")


async def test_a_parent_entering_plan_mode_stops_its_running_background_child_writing(
    tmp_path: Path,
) -> None:
    gate = Gate()
    lead = ScriptedProvider(
        [tool_call("Spawn", LAUNCH, id="t1"), text("I will wait."), text("Done.")]
    )
    helper = ScriptedProvider(
        [
            tool_call("Gate", {"text": "a"}, id="g1"),
            tool_call("Touch", {"text": "written.txt"}, id="w1"),
            text("I could not write it."),
        ]
    )
    router = Router(lead, **{HELPER: helper})
    opts = options(tmp_path, router, extra_tools=[Spawn(), gate, Touch()])
    async with stayer.Session(opts) as session:
        running = asyncio.ensure_future(run(session, "go"))
        await gate.reached.wait()
        session.set_permission_mode("plan")
        gate.open.set()
        events = await running

    assert not (tmp_path / "written.txt").exists()
    touched = [
        e.event
        for e in nested(events)
        if isinstance(e.event, ToolCallFinished) and e.event.tool_use_id == "w1"
    ]
    assert [call.status for call in touched] == ["denied"]
    router.assert_done()
