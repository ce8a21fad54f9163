"""The live view shows a subagent's tool calls indented under the call that runs it, and
nothing else of its run (the call's result says what came of it)."""

from __future__ import annotations

import io
from pathlib import Path

from stayer.events import SubagentEvent, ToolCallStarted
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.ui.live import LiveView
from tests.fakes.loop_harness import make_params, run
from tests.fakes.tools import Delegate, with_subagents


async def test_a_subagent_shows_only_as_the_result_of_its_call(tmp_path: Path) -> None:
    helper = ScriptedProvider([text("found it")])
    model = ScriptedProvider([tool_call("Delegate", {"task": "look"}, id="t1"), text("ok")])
    events = await run(with_subagents(make_params(model, [Delegate()], tmp_path), helper))
    out = io.StringIO()
    view = LiveView(out)
    for event in events:
        view.show(event)

    shown = out.getvalue().splitlines()
    assert shown[:3] == ['● Delegate({"task": "look"})', "  ⎿  found it", "ok"]


def test_a_subagent_s_calls_are_indented_under_the_call_deeper_for_deeper_runs() -> None:
    out = io.StringIO()
    view = LiveView(out)
    view.show(ToolCallStarted("t1", "Delegate", {"file_path": "look"}))
    view.show(SubagentEvent("t1", ToolCallStarted("t2", "Grep", {"pattern": "TODO"})))
    view.show(SubagentEvent("t1", SubagentEvent("t2", ToolCallStarted("t3", "Read", {}))))

    assert out.getvalue().splitlines() == [
        "● Delegate(look)",
        "    ↳ Grep(TODO)",
        "        ↳ Read({})",
    ]


def test_what_a_subagent_shows_nothing_of_leaves_the_running_output_drawn() -> None:
    from stayer.events import TextDelta, ToolCallProgress

    out = io.StringIO()
    view = LiveView(out, live=True)
    view.show(ToolCallStarted("t1", "Delegate", {"file_path": "look"}))
    view.show(ToolCallProgress("t1", "working\n"))
    drawn = out.getvalue()
    view.show(SubagentEvent("t1", TextDelta(0, "thinking aloud")))
    assert out.getvalue() == drawn  # not erased and drawn again for nothing
    view.show(SubagentEvent("t1", ToolCallStarted("t2", "Grep", {"pattern": "x"})))
    assert out.getvalue().endswith("    ↳ Grep(x)\n  ⎿  working\n")
