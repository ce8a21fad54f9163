"""A child that did not finish: a foreground one stopped before its call returned (the run
interrupted, the call timed out) is stopped and waited for, and what it spent is billed to its
parent's run all the same; one whose stream broke off while it wrote reports that text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import stayer
from stayer.errors import ModelError
from stayer.events import Event, Finished, Terminal
from stayer.messages import Message, TextBlock, ToolResultBlock, Usage, history_problems
from stayer.providers.profiles import cost_usd
from stayer.providers.scripted import Cut, ScriptedProvider, text, tool_call
from tests.fakes.tools import Sleep

from .subagent_kit import HELPER, Router, Spawn, options
from .test_subagents import run

MODEL = "claude-sonnet-4-5"
CALL = Usage(input_tokens=100, output_tokens=20)


class QuickSpawn(Spawn):
    """The subagent tool with a short time limit (the Agent tool's is an hour)."""

    timeout_s = 0.2


async def test_an_interrupted_foreground_childs_spend_is_in_the_parents_result(
    tmp_path: Path,
) -> None:
    sleep = Sleep()
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "go"}, id="t1"), text("unused")])
    helper = ScriptedProvider([tool_call("Sleep", {"text": "60"}, id="s1"), text("unused")])
    router = Router(lead, **{HELPER: helper})
    opts = options(tmp_path, router, extra_tools=[Spawn(), sleep])
    async with stayer.Session(opts) as session:
        events: list[Event] = []

        async def consume() -> None:
            events.extend([event async for event in session.submit("go")])

        task = asyncio.ensure_future(consume())
        await sleep.started.wait()
        session.interrupt()
        await task

    finished = events[-1]
    assert isinstance(finished, Finished)
    assert [e for e in events if isinstance(e, Finished)] == [finished]
    assert history_problems(finished.messages) == []
    assert finished.terminal is Terminal.ABORTED_TOOLS
    assert sleep.cancelled.is_set()
    assert finished.usage == Usage(input_tokens=200, output_tokens=40)  # the lead's, the child's
    assert finished.cost_usd == pytest.approx(2 * cost_usd(MODEL, CALL))


async def test_a_timed_out_foreground_childs_spend_is_billed_before_the_next_call(
    tmp_path: Path,
) -> None:
    sleep = Sleep()
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "go"}, id="t1"), text("gave up")])
    helper = ScriptedProvider([tool_call("Sleep", {"text": "60"}, id="s1"), text("unused")])
    router = Router(lead, **{HELPER: helper})
    opts = options(tmp_path, router, extra_tools=[QuickSpawn(), sleep])
    async with stayer.Session(opts) as session:
        events = await run(session, "go")

    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.terminal is Terminal.COMPLETED
    assert finished.result_text == "gave up"
    assert sleep.cancelled.is_set()
    assert finished.usage == Usage(input_tokens=300, output_tokens=60)  # two of the lead's
    assert finished.cost_usd == pytest.approx(3 * cost_usd(MODEL, CALL))
    assert len(helper.requests) == 1


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
async def test_a_child_whose_stream_broke_off_reports_what_it_had_written(
    tmp_path: Path, background: bool
) -> None:
    asked = {"prompt": "go", "run_in_background": background}
    lead = ScriptedProvider(
        [tool_call("Spawn", asked, id="t1"), *([text("waiting")] if background else []), text("ok")]
    )
    broken = Cut(ModelError("connection reset", status=400), blocks=(TextBlock("Half found."),))
    helper = ScriptedProvider([broken])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(tmp_path, router)) as session:
        await run(session, "go")

    told = said(lead.requests[-1].messages[-1])
    assert "stopped before finishing (model_error: connection reset)" in told
    assert "The last it wrote:\nHalf found.\n" in told
    router.assert_done()


def said(message: Message) -> str:
    """The text of a user message: its text blocks and its tool results' text."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolResultBlock):
            parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(parts)
