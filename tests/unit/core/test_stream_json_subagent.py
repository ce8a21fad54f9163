"""A nested run's events print in stream-json as Claude Code prints a subagent's messages: the
lines of its own, each with the call that runs it as `parent_tool_use_id`, under the parent's
session; its start and end are no lines of their own (the call's result says how it ended)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stayer.events import Event, MessageCompleted, SubagentEvent
from stayer.messages import AssistantMessage, TextBlock
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.ui.stream_json import StreamJsonWriter, dumps
from tests.fakes.loop_harness import make_params, run
from tests.fakes.tools import Delegate, with_subagents
from tests.unit.core.test_stream_json import check_sdk_shape

SESSION = "5f0c3a1e-2b4d-4e6f-8a9b-0c1d2e3f4a5b"


def _printed(writer: StreamJsonWriter, events: list[Event]) -> list[dict[str, Any]]:
    return [json.loads(dumps(line)) for event in events for line in writer.lines(event)]


def _said(line: dict[str, Any]) -> tuple[str, str | None, str]:
    """A line's type, its parent call, and the gist of what it says."""
    content = line.get("message", {}).get("content", [{}])
    first = content[0] if isinstance(content, list) and content else {}
    gist = first.get("text") or first.get("name") or str(first.get("content", ""))
    return line["type"], line.get("parent_tool_use_id"), gist


async def test_a_subagent_s_messages_carry_the_call_that_runs_it(tmp_path: Path) -> None:
    helper = ScriptedProvider([text("found it")])
    model = ScriptedProvider([tool_call("Delegate", {"task": "look"}, id="t1"), text("ok")])
    events = await run(with_subagents(make_params(model, [Delegate()], tmp_path), helper))

    writer = StreamJsonWriter(session_id=SESSION)
    lines = _printed(writer, events)

    assert [_said(line) for line in lines] == [
        ("assistant", None, "Delegate"),
        ("assistant", "t1", "found it"),
        ("user", None, "[{'type': 'text', 'text': 'found it'}]"),
        ("assistant", None, "ok"),
        ("result", None, ""),
    ]
    for line in lines:
        check_sdk_shape(line)
        assert line["session_id"] == SESSION
    assert lines[-1]["result"] == "ok"  # the nested run's own end is not the run's


def test_a_run_nested_deeper_keeps_its_own_parent() -> None:
    deep = MessageCompleted(AssistantMessage((TextBlock("deep"),), id="m9", model="helper"))
    writer = StreamJsonWriter(session_id=SESSION)

    lines = _printed(writer, [SubagentEvent("t1", SubagentEvent("t9", deep))])

    assert [_said(line) for line in lines] == [("assistant", "t9", "deep")]
    assert lines[0]["session_id"] == SESSION


def test_a_subagent_s_live_output_names_its_parent_call() -> None:
    from stayer.events import ToolCallProgress, ToolCallStarted

    writer = StreamJsonWriter(include_partial=True, session_id=SESSION)
    started = SubagentEvent("t1", ToolCallStarted("t2", "Bash", {"command": "make"}))
    progress = SubagentEvent("t1", ToolCallProgress("t2", "cc a.c\n"))

    (line,) = _printed(writer, [started, progress])

    assert (line["type"], line["tool_use_id"], line["tool_name"], line["parent_tool_use_id"]) == (
        "tool_progress",
        "t2",
        "Bash",
        "t1",
    )
