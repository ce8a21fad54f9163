"""A saved conversation as the `session/update`s that show it again (`session/load`): the
person's prompts as `user_message_chunk`s, the model's text and reasoning as agent chunks with
their message's id, each tool call announced and then ended with its result, and the last
TodoWrite list as the plan.

Notes stayer added to a prompt for the model (`<system-reminder>` blocks) are not the person's
words and are left out; so are tool results, which show as their call's end.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ToolCallProgress,
    UserMessageChunk,
)

from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from .tool_calls import is_edit, plan_entries, result_content
from .updates import Translator, Update, text


def replay(history: Sequence[Message], calls: Translator) -> list[Update]:
    """The updates that show `history` again, in order."""
    updates: list[Update] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            updates.extend(_assistant(message, calls))
        else:
            updates.extend(_user(message.content, calls))
    return updates


def _assistant(message: AssistantMessage, calls: Translator) -> list[Update]:
    updates: list[Update] = []
    message_id = message.id or None
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            updates.append(
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=text(block.text),
                    message_id=message_id,
                )
            )
        elif isinstance(block, ThinkingBlock) and block.thinking:
            updates.append(
                AgentThoughtChunk(
                    session_update="agent_thought_chunk",
                    content=text(block.thinking),
                    message_id=message_id,
                )
            )
        elif isinstance(block, ToolUseBlock):
            updates.append(calls.announce(block.id, block.name, dict(block.input), "in_progress"))
    return updates


def _user(content: Sequence[ContentBlock], calls: Translator) -> list[Update]:
    updates: list[Update] = []
    for block in content:
        if isinstance(block, ToolResultBlock):
            updates.extend(_result(block, calls))
        elif isinstance(block, TextBlock) and not block.text.lstrip().startswith(
            "<system-reminder>"
        ):
            updates.append(
                UserMessageChunk(session_update="user_message_chunk", content=text(block.text))
            )
    return updates


def _result(block: ToolResultBlock, calls: Translator) -> list[Update]:
    known = calls.call(block.tool_use_id)
    name, tool_input = known if known is not None else ("", {})
    ok = not block.is_error
    updates: list[Update] = [
        ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=block.tool_use_id,
            status="completed" if ok else "failed",
            content=None if ok and is_edit(name) else result_content(block),
        )
    ]
    entries = plan_entries(name, tool_input) if ok else None
    if entries is not None:
        updates.append(AgentPlanUpdate(session_update="plan", entries=entries))
    return updates
