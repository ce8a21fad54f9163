"""What subagents spend: the tree shares the top session's budget, and the parent's result
counts its children's usage and cost; their transcripts sit beside the parent's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import stayer
from stayer.events import Finished, ModelUsage, SessionStarted, Terminal
from stayer.messages import Usage
from stayer.providers.profiles import cost_usd
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.tools.base import subagent_transcript
from tests.fakes.tools import Echo

from .subagent_kit import HELPER, Router, Spawn, nested, options
from .test_subagents import run

MODEL = "claude-sonnet-4-5"
CALL = Usage(input_tokens=100, output_tokens=20)
"""What each scripted call uses."""


async def test_the_parents_result_counts_what_its_child_spent(tmp_path: Path) -> None:
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "look"}, id="t1"), text("done")])
    helper = ScriptedProvider([tool_call("Echo", {"text": "a"}, id="e1"), text("seen")])
    router = Router(lead, **{HELPER: helper})
    opts = options(tmp_path, router, extra_tools=[Spawn(), Echo()])
    async with stayer.Session(opts) as session:
        events = await run(session, "go")
    finished = events[-1]
    assert isinstance(finished, Finished)
    one = cost_usd(MODEL, CALL)
    assert finished.terminal is Terminal.COMPLETED
    assert finished.usage == Usage(input_tokens=400, output_tokens=80)  # two calls each
    assert finished.cost_usd == pytest.approx(4 * one)
    assert [(m.model, m.usage) for m in finished.model_usage] == [
        (MODEL, Usage(input_tokens=400, output_tokens=80))
    ]
    assert isinstance(finished.model_usage[0], ModelUsage)
    router.assert_done()


async def test_a_child_stops_when_the_trees_spend_passes_the_budget_and_so_does_its_parent(
    tmp_path: Path,
) -> None:
    one = cost_usd(MODEL, CALL)
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "work hard"}, id="t1")])
    helper = ScriptedProvider(
        [tool_call("Echo", {"text": "a"}, id="e1"), tool_call("Echo", {"text": "b"}, id="e2")]
    )
    router = Router(lead, **{HELPER: helper})
    # the lead's call and the child's first leave room; the child's second passes it
    opts = options(tmp_path, router, extra_tools=[Spawn(), Echo()], max_budget_usd=2.5 * one)
    async with stayer.Session(opts) as session:
        events = await run(session, "go")
    inner = [e.event for e in nested(events) if isinstance(e.event, Finished)]
    assert [f.terminal for f in inner] == [Terminal.BUDGET_EXHAUSTED]
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.terminal is Terminal.BUDGET_EXHAUSTED
    assert finished.cost_usd == pytest.approx(3 * one)
    router.assert_done()


async def test_a_childs_transcript_is_kept_beside_its_parents(tmp_path: Path) -> None:
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "look"}, id="t1"), text("done")])
    helper = ScriptedProvider([text("seen it")])
    router = Router(lead, **{HELPER: helper})
    async with stayer.Session(options(tmp_path, router, persist_session=True)) as session:
        events = await run(session, "go")
        folder = session.setup.params.tool_context.session_dir
    assert folder is not None
    (started,) = [e for e in nested(events) if isinstance(e.event, SessionStarted)]
    path = subagent_transcript(folder, started.agent_id)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    said = [r["message"]["content"] for r in records if r.get("type") in ("user", "assistant")]
    assert "look" in json.dumps(said[0]) and "seen it" in json.dumps(said[-1])
    assert {r["sessionId"] for r in records if "sessionId" in r} == {started.agent_id}


async def test_a_session_that_keeps_no_transcript_keeps_none_for_its_children(
    tmp_path: Path,
) -> None:
    lead = ScriptedProvider([tool_call("Spawn", {"prompt": "look"}, id="t1"), text("done")])
    router = Router(lead, **{HELPER: ScriptedProvider([text("seen it")])})
    async with stayer.Session(options(tmp_path, router)) as session:
        await run(session, "go")
    assert not list(tmp_path.rglob("subagents"))
