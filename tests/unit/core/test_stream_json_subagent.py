"""A nested run's events print in stream-json as Claude Code prints a subagent's messages: the
lines of its own, each with the call that runs it as `parent_tool_use_id`, under the parent's
session; its start and end are no lines of their own (the call's result says how it ended)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stayer.events import Event, Finished, MessageCompleted, SubagentEvent, Terminal
from stayer.messages import AssistantMessage, TextBlock, Usage
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


# --- a background subagent's task lines ------------------------------------------------------

TASK_STARTED_FIELDS = {"task_id", "description", "uuid", "session_id"}
TASK_NOTIFICATION_FIELDS = {"task_id", "status", "output_file", "summary", "uuid", "session_id"}
"""What claude-agent-sdk's parser requires of each (a KeyError otherwise; protocols.md §1.6)."""


def _background(event: Event) -> SubagentEvent:
    return SubagentEvent("call1", event, "a7", "Explore", "find the loader", background=True)


def _background_run(terminal: Terminal = Terminal.COMPLETED) -> list[Event]:
    from stayer.events import SessionStarted, ToolCallStarted

    usage = Usage(input_tokens=100, output_tokens=20, cache_read_input_tokens=30)
    done = Finished(terminal, "", 2, usage, 0.002, "It is in loader.py.", None, 4200.4, 3000.0)
    reply = AssistantMessage((TextBlock("It is in loader.py."),), id="m2", model="haiku")
    return [
        _background(SessionStarted("a7", "haiku", "scripted", ("Grep",), "/w", "default")),
        _background(ToolCallStarted("g1", "Grep", {"pattern": "load"})),
        _background(ToolCallStarted("g2", "Grep", {"pattern": "loader"})),
        _background(MessageCompleted(reply)),
        _background(done),
    ]


def test_a_background_subagent_has_task_started_and_task_notification_lines() -> None:
    writer = StreamJsonWriter(session_id=SESSION, session_dir="/sessions/s1")
    lines = _printed(writer, _background_run())

    started, said, notified = lines
    assert {k: v for k, v in started.items() if k != "uuid"} == {
        "type": "system",
        "subtype": "task_started",
        "task_id": "a7",
        "description": "find the loader",
        "tool_use_id": "call1",
        "task_type": "local_agent",
        "subagent_type": "Explore",
        "is_backgrounded": True,
        "session_id": SESSION,
    }
    assert _said(said) == ("assistant", "call1", "It is in loader.py.")
    assert {k: v for k, v in notified.items() if k != "uuid"} == {
        "type": "system",
        "subtype": "task_notification",
        "task_id": "a7",
        "status": "completed",
        "output_file": "/sessions/s1/subagents/agent-a7.jsonl",
        "summary": "Explore: find the loader · done · 2 tool calls · 4.2s",
        "usage": {"total_tokens": 150, "tool_uses": 2, "duration_ms": 4200},
        "tool_use_id": "call1",
        "session_id": SESSION,
    }
    assert set(started) >= TASK_STARTED_FIELDS and set(notified) >= TASK_NOTIFICATION_FIELDS
    for line in lines:
        check_sdk_shape(line)


def test_a_background_subagent_that_failed_or_was_stopped_says_so() -> None:
    for terminal, status in (
        (Terminal.MAX_TURNS, "failed"),
        (Terminal.ABORTED_TOOLS, "stopped"),
        (Terminal.MODEL_ERROR, "failed"),
    ):
        writer = StreamJsonWriter(session_id=SESSION)
        notified = _printed(writer, _background_run(terminal))[-1]
        assert (notified["status"], notified["output_file"]) == (status, "")
        assert notified["summary"].startswith(f"Explore: find the loader · {status}")


def test_a_subagent_running_in_its_call_s_time_has_no_task_lines() -> None:
    writer = StreamJsonWriter(session_id=SESSION)
    foreground = [
        SubagentEvent(e.parent_tool_use_id, e.event, e.agent_id, e.agent_type, e.description)
        for e in _background_run()
        if isinstance(e, SubagentEvent)
    ]
    lines = _printed(writer, list(foreground))
    assert [line["type"] for line in lines] == ["assistant"]


def test_a_background_subagent_of_a_subagent_keeps_its_own_call() -> None:
    writer = StreamJsonWriter(session_id=SESSION)
    lines = _printed(writer, [SubagentEvent("outer", e) for e in _background_run()])
    assert [(line.get("subtype"), line.get("tool_use_id")) for line in lines] == [
        ("task_started", "call1"),
        (None, None),
        ("task_notification", "call1"),
    ]
    assert "parent_tool_use_id" not in lines[0]
    assert lines[1]["parent_tool_use_id"] == "call1"


def test_a_subagent_s_permission_question_prints_no_line_as_the_session_s_own_does_not() -> None:
    from stayer.events import PermissionRequested, PermissionResolved

    writer = StreamJsonWriter(session_id=SESSION)
    asked = PermissionRequested("b1", "Bash", {"command": "make"}, "asks", agent="Explore: x")
    answered = PermissionResolved("b1", "Bash", "deny", "policy", "not allowed headless")
    for event in (asked, answered):
        assert _printed(writer, [event, SubagentEvent("call1", event, "a7", "Explore")]) == []


def test_a_background_task_whose_end_never_came_is_closed_before_the_result() -> None:
    from stayer.events import SessionStarted, ToolCallStarted

    writer = StreamJsonWriter(session_id=SESSION, session_dir="/sessions/s1")
    run_end = Finished(Terminal.ABORTED_TOOLS, "stopped", 1, Usage(1, 1), 0.0, "", None, 9.0, 1.0)
    lines = _printed(
        writer,
        [
            _background(SessionStarted("a7", "haiku", "scripted", (), "/w", "default")),
            _background(ToolCallStarted("g1", "Grep", {"pattern": "load"})),
            run_end,
        ],
    )
    assert [line["subtype"] if line["type"] == "system" else line["type"] for line in lines] == [
        "task_started",
        "task_notification",
        "result",
    ]
    closed = lines[1]
    assert (closed["task_id"], closed["status"], closed["tool_use_id"]) == (
        "a7",
        "stopped",
        "call1",
    )
    assert closed["output_file"] == "/sessions/s1/subagents/agent-a7.jsonl"
    assert closed["summary"] == (
        "Explore: find the loader · stopped: the run ended before it did (1 tool calls)"
    )
    assert set(closed) >= TASK_NOTIFICATION_FIELDS
    assert _printed(writer, [run_end])[0]["type"] == "result"  # closed once only


def test_the_sdk_s_own_parser_reads_the_task_lines_as_its_task_messages() -> None:
    """Only where claude-agent-sdk is installed (it is not a dependency): checked by hand with
    0.2.189, which reads them as TaskStartedMessage and TaskNotificationMessage."""
    import pytest

    parser = pytest.importorskip("claude_agent_sdk._internal.message_parser")
    writer = StreamJsonWriter(session_id=SESSION, session_dir="/sessions/s1")
    lines = _printed(writer, _background_run())
    started, _, notified = (parser.parse_message(line) for line in lines)
    assert (type(started).__name__, started.task_id, started.task_type) == (
        "TaskStartedMessage",
        "a7",
        "local_agent",
    )
    assert (type(notified).__name__, notified.status, notified.usage["tool_uses"]) == (
        "TaskNotificationMessage",
        "completed",
        2,
    )
