"""How a session's events read as ACP updates, and how a run's end reads as a stop reason: the
translation `stayer acp` streams, checked on events made here (the e2e tests drive the whole)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.events import (
    BlockCompleted,
    Finished,
    MessageStarted,
    PermissionRequested,
    PermissionResolved,
    SubagentEvent,
    Terminal,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from stayer.events import ToolCallProgress as ToolOutputLines
from stayer.messages import TextBlock, ToolResultBlock, ToolUseBlock, Usage
from stayer.ui.acp.updates import Translator, stop_reason

CWD = Path("/project")


@pytest.mark.parametrize(
    ("terminal", "reason"),
    [
        (Terminal.COMPLETED, "end_turn"),
        (Terminal.MAX_OUTPUT_TOKENS, "max_tokens"),
        (Terminal.MAX_TURNS, "max_turn_requests"),
        (Terminal.BUDGET_EXHAUSTED, "max_turn_requests"),
        (Terminal.REFUSAL, "refusal"),
        (Terminal.ABORTED_STREAMING, "cancelled"),
        (Terminal.ABORTED_TOOLS, "cancelled"),
        (Terminal.MODEL_ERROR, None),
        (Terminal.PROMPT_TOO_LONG, None),
    ],
)
def test_terminal_reasons_map_to_stop_reasons(terminal: Terminal, reason: str | None) -> None:
    assert stop_reason(terminal) == reason


def test_every_terminal_reason_has_an_answer() -> None:
    for terminal in Terminal:
        stop_reason(terminal)  # assert_never would raise for one left out


def _finished(name: str, status: str, text: str) -> ToolCallFinished:
    result = ToolResultBlock("toolu_1", (TextBlock(text),), is_error=status != "completed")
    return ToolCallFinished("toolu_1", name, status, result, 1.0)  # type: ignore[arg-type]


def test_an_edit_is_announced_with_its_diff_and_keeps_it_when_done() -> None:
    calls = Translator(CWD, context_window=1000)
    tool_input = {"file_path": "/project/src/a.py", "old_string": "x = 1", "new_string": "x = 2"}
    [start] = calls.take(BlockCompleted(0, ToolUseBlock("toolu_1", "Edit", tool_input)))
    assert start.model_dump(exclude_none=True) == {
        "session_update": "tool_call",
        "tool_call_id": "toolu_1",
        "title": "Edit src/a.py",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": "/project/src/a.py"}],
        "content": [
            {"type": "diff", "path": "/project/src/a.py", "old_text": "x = 1", "new_text": "x = 2"}
        ],
        "raw_input": tool_input,
    }
    [done] = calls.take(_finished("Edit", "completed", "edited"))
    assert done.model_dump(exclude_none=True) == {
        "session_update": "tool_call_update",
        "tool_call_id": "toolu_1",
        "status": "completed",
    }


def test_a_call_waits_pending_while_asked_and_a_denied_one_fails_with_why() -> None:
    calls = Translator(CWD)
    tool_input = {"command": "rm -rf build\necho done"}
    calls.take(BlockCompleted(0, ToolUseBlock("toolu_1", "Bash", tool_input)))
    statuses = [
        update.status
        for event in (
            ToolCallStarted("toolu_1", "Bash", tool_input),
            PermissionRequested("toolu_1", "Bash", tool_input, "asks"),
            PermissionResolved("toolu_1", "Bash", "deny", "user"),
            _finished("Bash", "denied", "the user said no"),
        )
        for update in calls.take(event)
    ]
    assert statuses == ["in_progress", "pending", "failed"]
    assert calls.announce("toolu_1", "Bash", tool_input, "pending").title == "Bash rm -rf build"


def test_text_chunks_carry_their_message_id_and_a_subagents_own_events_do_not_show() -> None:
    calls = Translator(CWD)
    calls.take(MessageStarted("msg_1", "m", Usage()))
    [chunk] = calls.take(TextDelta(0, "hi"))
    assert chunk.model_dump(exclude_none=True) == {
        "session_update": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
        "message_id": "msg_1",
    }
    nested = SubagentEvent("toolu_9", TextDelta(0, "inside"))
    assert calls.take(nested) == []


def test_usage_says_how_full_the_window_is_and_what_the_session_cost() -> None:
    calls = Translator(CWD, context_window=200_000)
    finished = Finished(Terminal.COMPLETED, "", 1, Usage(), 0.25, "", None, 1.0, 1.0)
    [usage] = calls.take(finished)
    assert usage.size == 200_000 and usage.cost is not None and usage.cost.amount == 0.25


def test_live_output_shows_as_the_calls_content_so_far() -> None:
    calls = Translator(CWD)
    calls.take(BlockCompleted(0, ToolUseBlock("toolu_1", "Bash", {"command": "make"})))
    calls.take(ToolCallStarted("toolu_1", "Bash", {"command": "make"}))
    calls.take(ToolOutputLines("toolu_1", "one\n"))
    [update] = calls.take(ToolOutputLines("toolu_1", "two\n", omitted_lines=3))
    assert update.model_dump(exclude_none=True) == {
        "session_update": "tool_call_update",
        "tool_call_id": "toolu_1",
        "content": [
            {
                "type": "content",
                "content": {"type": "text", "text": "one\n… (3 lines left out)\ntwo\n"},
            }
        ],
    }
    assert calls.take(ToolOutputLines("toolu_9", "not announced\n")) == []
