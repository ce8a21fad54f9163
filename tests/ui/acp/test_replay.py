"""A saved conversation replayed as ACP updates (`session/load`): the person's words and
images, the model's text and reasoning under their message's id, each call and how it ended,
the plan a TodoWrite set; stayer's own notes to the model left out."""

from __future__ import annotations

from pathlib import Path

from stayer.messages import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.ui.acp.replay import replay
from stayer.ui.acp.updates import Translator

TODOS = {"todos": [{"content": "Fix it", "status": "pending", "activeForm": "Fixing it"}]}


def test_a_saved_conversation_replays_in_order() -> None:
    history = (
        UserMessage(
            (
                TextBlock("<system-reminder>\nplan mode\n</system-reminder>"),
                TextBlock("fix the bug"),
                ImageBlock("image/png", "AAAA"),
            )
        ),
        AssistantMessage(
            (
                ThinkingBlock("Plan first.", "sig"),
                TextBlock("On it."),
                ToolUseBlock("toolu_1", "TodoWrite", TODOS),
                ToolUseBlock("toolu_2", "Bash", {"command": "false"}),
            ),
            id="msg_1",
        ),
        UserMessage(
            (
                ToolResultBlock("toolu_1", (TextBlock("saved"),)),
                ToolResultBlock("toolu_2", (TextBlock("exit 1"),), is_error=True),
            )
        ),
    )
    updates = replay(history, Translator(Path("/p")))
    shown = [update.model_dump(exclude_none=True, exclude={"raw_input"}) for update in updates]
    assert shown == [
        {
            "session_update": "user_message_chunk",
            "content": {"type": "text", "text": "fix the bug"},
        },
        {
            "session_update": "user_message_chunk",
            "content": {"type": "image", "data": "AAAA", "mime_type": "image/png"},
        },
        {
            "session_update": "agent_thought_chunk",
            "content": {"type": "text", "text": "Plan first."},
            "message_id": "msg_1",
        },
        {
            "session_update": "agent_message_chunk",
            "content": {"type": "text", "text": "On it."},
            "message_id": "msg_1",
        },
        {
            "session_update": "tool_call",
            "tool_call_id": "toolu_1",
            "title": "TodoWrite",
            "kind": "think",
            "status": "in_progress",
        },
        {
            "session_update": "tool_call",
            "tool_call_id": "toolu_2",
            "title": "Bash false",
            "kind": "execute",
            "status": "in_progress",
        },
        {
            "session_update": "tool_call_update",
            "tool_call_id": "toolu_1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "saved"}}],
        },
        {
            "session_update": "plan",
            "entries": [{"content": "Fix it", "priority": "medium", "status": "pending"}],
        },
        {
            "session_update": "tool_call_update",
            "tool_call_id": "toolu_2",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "exit 1"}}],
        },
    ]
