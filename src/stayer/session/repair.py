"""Repair of a conversation loaded from disk, so that a resumed session is always valid.

A session killed mid-turn, a transcript written by another program, or one torn by a crash can
hold a history the API refuses (`messages.history_problems` names how). Nothing is dropped that
can be kept: a tool call without a result gets one saying its outcome is unknown, consecutive
messages of one role are merged, results of calls that were never made and empty answers (which
hold nothing) go, and a conversation that ended mid-turn is marked interrupted, so the next
prompt tells the model to check where it stands.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct
from msgspec.structs import replace

from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
    without_blank_text,
)

UNKNOWN_OUTCOME = (
    "[No result was recorded for this call: the session ended while it ran. Whether it took "
    "effect is unknown; check before relying on it.]"
)
INTERRUPTED_NOTE = (
    "[The previous session ended before its last turn was finished. Check what was done before "
    "you carry on.]"
)
RESUMED_OPENING = "[The conversation resumes here.]"


class Repaired(Struct, frozen=True):
    """A valid conversation, what had to be fixed to get it, and whether it ended mid-turn."""

    messages: tuple[Message, ...]
    fixes: tuple[str, ...]
    interrupted: bool


def repair(messages: Sequence[Message]) -> Repaired:
    """`messages` made valid for the API, losing nothing that can be kept."""
    fixes = [str(problem) for problem in history_problems(messages)] if messages else []
    out: list[Message] = []
    made: set[str] = set()
    for message in map(without_blank_text, messages):
        if isinstance(message, AssistantMessage):
            _add_answer(out, _without_repeated_calls(message, made))
        else:
            _add_user(out, message)
    interrupted = bool(out) and (isinstance(out[-1], UserMessage) or bool(_last_calls(out)))
    if _last_calls(out):
        out.append(_results_for(_last_calls(out), ()))
    if out and isinstance(out[0], AssistantMessage):
        out.insert(0, UserMessage.of_text(RESUMED_OPENING))
    if out and isinstance(out[-1], AssistantMessage) and not out[-1].content:
        out.pop()
    repaired = tuple(out)
    left = history_problems(repaired) if repaired else []
    assert not left, f"repair left the history invalid: {left}"
    return Repaired(repaired, tuple(fixes), interrupted)


def _without_repeated_calls(message: AssistantMessage, made: set[str]) -> AssistantMessage:
    """`message` without tool calls whose id an earlier call already has (the API refuses a
    history with two; a torn file can join an answer's records twice): the first one stays,
    with its result."""
    kept: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            if block.id in made:
                continue
            made.add(block.id)
        kept.append(block)
    return message if len(kept) == len(message.content) else replace(message, content=tuple(kept))


def _add_answer(out: list[Message], message: AssistantMessage) -> None:
    if not message.content:
        return  # an empty answer holds nothing, and the API refuses it anywhere but last
    calls = _last_calls(out)
    if calls:  # the answer before this one never got its results
        out.append(_results_for(calls, ()))
    elif out and isinstance(out[-1], AssistantMessage):
        previous = out[-1]
        out[-1] = replace(previous, content=(*previous.content, *message.content))
        return
    out.append(message)


def _add_user(out: list[Message], message: UserMessage) -> None:
    calls = _last_calls(out)
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    others = [b for b in message.content if not isinstance(b, ToolResultBlock)]
    if calls:
        message = _results_for(calls, results, others)
    elif results:  # results of calls this history never made: nothing to answer
        if not others:
            return
        message = UserMessage(tuple(others))
    if not message.content:
        return
    if out and isinstance(out[-1], UserMessage):
        out[-1] = UserMessage((*out[-1].content, *message.content))
    else:
        out.append(message)


def _last_calls(out: Sequence[Message]) -> tuple[str, ...]:
    """The ids of the calls of the last message, if it is an answer that asked for tools."""
    if out and isinstance(out[-1], AssistantMessage):
        return tuple(block.id for block in out[-1].tool_uses)
    return ()


def _results_for(
    calls: tuple[str, ...],
    results: Sequence[ToolResultBlock],
    others: Sequence[ContentBlock] = (),
) -> UserMessage:
    """One result per call: the recorded ones in the order they were sent (a valid message is
    kept as it was), then an unknown outcome for each call that has none, in call order."""
    recorded = {result.tool_use_id: result for result in results if result.tool_use_id in calls}
    unknown = [
        ToolResultBlock(call, (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
        for call in calls
        if call not in recorded
    ]
    return UserMessage((*recorded.values(), *unknown, *others))
