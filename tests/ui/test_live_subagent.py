"""The live view shows a subagent compactly, indented under the call that runs it: a line as it
starts, its tool calls, and a line as it ends (how, its tool calls, its time); nothing else of
its run (the call's result says what came of it)."""

from __future__ import annotations

import io
from pathlib import Path

from stayer.events import Event, Finished, SessionStarted, SubagentEvent, Terminal, ToolCallStarted
from stayer.messages import Usage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.ui.live import LiveView
from tests.fakes.loop_harness import make_params, run
from tests.fakes.tools import Delegate, with_subagents


async def test_a_subagent_s_end_shows_above_the_result_of_its_call(tmp_path: Path) -> None:
    helper = ScriptedProvider([text("found it")])
    model = ScriptedProvider([tool_call("Delegate", {"task": "look"}, id="t1"), text("ok")])
    events = await run(with_subagents(make_params(model, [Delegate()], tmp_path), helper))
    out = io.StringIO()
    view = LiveView(out)
    for event in events:
        view.show(event)

    shown = out.getvalue().splitlines()
    assert shown[0] == '● Delegate({"task": "look"})'
    assert shown[1].startswith("    ✓ subagent · done · 0 tool calls · ")
    assert shown[2:4] == ["  ⎿  found it", "ok"]


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


def _end(terminal: Terminal = Terminal.COMPLETED) -> Finished:
    return Finished(terminal, "", 2, Usage(10, 5), 0.001, "", None, 3100.0, 1.0)


def test_a_subagent_s_start_calls_and_end_name_it_and_say_how_it_went() -> None:
    out = io.StringIO()
    view = LiveView(out)
    started = SessionStarted("a1", "haiku", "scripted", (), "/w", "default")

    def explore(event: Event, background: bool = False) -> SubagentEvent:
        return SubagentEvent("t1", event, "a1", "Explore", "find the loader", background)

    view.show(ToolCallStarted("t1", "Agent", {"description": "find the loader"}))
    view.show(explore(started))
    view.show(explore(ToolCallStarted("g", "Grep", {"pattern": "load"})))
    deeper = SubagentEvent("g2", started, "a2", "Plan", "plan it", background=True)
    view.show(explore(deeper))
    view.show(explore(SubagentEvent("g2", _end(Terminal.MAX_TURNS), "a2", "Plan", "plan it")))
    view.show(explore(_end()))

    assert out.getvalue().splitlines() == [
        '● Agent({"description": "find the loader"})',
        "    ⧉ Explore: find the loader",
        "    ↳ Grep(load)",
        "        ⧉ Plan: plan it (in the background)",
        "        ✗ Plan: plan it · failed (max_turns) · 0 tool calls · 3.1s",
        "    ✓ Explore: find the loader · done · 1 tool call · 3.1s",
    ]


def test_a_subagent_whose_end_never_came_is_said_when_the_run_ends() -> None:
    out = io.StringIO()
    view = LiveView(out)
    started = SessionStarted("a1", "haiku", "scripted", (), "/w", "default")
    view.show(SubagentEvent("t1", started, "a1", "Explore", "find the loader", background=True))
    view.show(_end(Terminal.ABORTED_TOOLS))
    assert out.getvalue().splitlines()[:2] == [
        "    ⧉ Explore: find the loader (in the background)",
        "    ✗ Explore: find the loader · stopped: the run ended before it did",
    ]
