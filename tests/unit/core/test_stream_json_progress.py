"""A running tool call's live output is a `tool_progress` line in stream-json, in the shape of
Claude Code's TS SDK message, only when partial messages are asked for."""

from __future__ import annotations

import json
from typing import Any

from stayer.events import ToolCallFinished, ToolCallProgress, ToolCallStarted
from stayer.messages import TextBlock, ToolResultBlock
from stayer.ui.stream_json import MAX_LINE_BYTES, StreamJsonWriter, dumps

SESSION = "5f0c3a1e-2b4d-4e6f-8a9b-0c1d2e3f4a5b"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _printed(writer: StreamJsonWriter, event: Any) -> list[dict[str, Any]]:
    return [json.loads(dumps(line)) for line in writer.lines(event)]


def _without_uuid(line: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(line.pop("uuid"), str)
    return line


def test_progress_lines_name_the_call_and_the_time_since_it_started() -> None:
    clock = Clock()
    writer = StreamJsonWriter(include_partial=True, session_id=SESSION, clock=clock)
    started = ToolCallStarted("toolu_1", "Bash", {"command": "make"})
    result = ToolResultBlock("toolu_1", (TextBlock("ok"),))
    finished = ToolCallFinished("toolu_1", "Bash", "completed", result, duration_ms=2500)

    assert _printed(writer, started) == []
    clock.now = 101.25
    first = _printed(writer, ToolCallProgress("toolu_1", "cc -c a.c\n"))
    clock.now = 102.5
    second = _printed(writer, ToolCallProgress("toolu_1", "cc -c z.c\nld\n", omitted_lines=24))
    assert _printed(writer, finished) == []

    assert [_without_uuid(line) for line in first + second] == [
        {
            "type": "tool_progress",
            "tool_use_id": "toolu_1",
            "tool_name": "Bash",
            "parent_tool_use_id": None,
            "elapsed_time_seconds": 1.25,
            "output": "cc -c a.c\n",
            "omitted_lines": 0,
            "session_id": SESSION,
        },
        {
            "type": "tool_progress",
            "tool_use_id": "toolu_1",
            "tool_name": "Bash",
            "parent_tool_use_id": None,
            "elapsed_time_seconds": 2.5,
            "output": "cc -c z.c\nld\n",
            "omitted_lines": 24,
            "session_id": SESSION,
        },
    ]


def test_without_partial_messages_progress_prints_nothing() -> None:
    writer = StreamJsonWriter(session_id=SESSION)
    writer.lines(ToolCallStarted("toolu_1", "Bash", {"command": "make"}))
    assert writer.lines(ToolCallProgress("toolu_1", "cc -c a.c\n")) == []


def test_huge_progress_still_fits_one_line() -> None:
    writer = StreamJsonWriter(include_partial=True, session_id=SESSION)
    writer.lines(ToolCallStarted("toolu_1", "Fetch", {"url": "http://127.0.0.1/"}))
    [line] = writer.lines(ToolCallProgress("toolu_1", "é" * 2_000_000))
    printed = dumps(line)
    assert len(printed.encode()) <= MAX_LINE_BYTES
    shown = json.loads(printed)
    assert shown["output"].startswith("é" * 1000)
    assert shown["output"].endswith("characters cut to fit the output line limit]")
    assert shown["tool_name"] == "Fetch"
