"""What a damaged transcript still holds: lines that are not JSON named by number, and the tool
calls of an answer whose record was torn, recovered (or stood in for) so the results that
follow it are kept rather than dropped as answers to calls never made.

A line that is not JSON at the end of the file is a write a kill cut short; one in the middle
is something else (a write cut short and then written after, or text that never was a record),
and the warning says which. A torn answer's record is read for the calls it names (stayer and
Claude Code write `"type": "tool_use", "id", "name", "input"` in that order): a call whose
input is cut off keeps its id and name with an empty input. A result whose call is nowhere to
be read is kept with a stand-in call of that id, named `unknown`, after a note saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from msgspec.structs import replace

from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

_STRING = r'"(?:[^"\\]|\\.)*"'
_CALL = re.compile(
    rf'\{{\s*"type":\s*"tool_use",\s*"id":\s*({_STRING}),\s*"name":\s*({_STRING}),\s*"input":\s*'
)
LOST_CALL_NAME = "unknown"
LOST_CALLS_NOTE = (
    "[Part of this answer's record was lost; the calls after this note are kept for their "
    "results, with what of them could be read.]"
)


def bad_lines_warnings(path: Path, bad: Sequence[int], last: int) -> list[str]:
    """The warnings for the lines (by number) that are not JSON; `last` is the number of the
    file's last line that is not blank."""
    warnings: list[str] = []
    middle = [number for number in bad if number != last]
    if middle:
        which = "line" if len(middle) == 1 else "lines"
        numbers = ", ".join(str(number) for number in middle)
        verb = "is" if len(middle) == 1 else "are"
        warnings.append(f"{path}: {which} {numbers} {verb} not JSON; skipped")
    if last in bad:
        warnings.append(f"{path}: the last write was cut short (line {last}); skipped")
    return warnings


def calls_in(line: str) -> list[ToolUseBlock]:
    """The tool calls a line that is not whole JSON still names."""
    found: list[ToolUseBlock] = []
    for match in _CALL.finditer(line):
        try:
            call_id, name = json.loads(match[1]), json.loads(match[2])
        except json.JSONDecodeError:
            continue
        try:
            value, _ = json.JSONDecoder().raw_decode(line, match.end())
        except (json.JSONDecodeError, RecursionError):
            value = None  # cut off (or nested past reading) mid-input: it keeps its id and name
        found.append(ToolUseBlock(call_id, name, value if isinstance(value, dict) else {}))
    return found


def with_lost_calls(
    messages: list[Message], chain: list[str], recovered: Sequence[ToolUseBlock]
) -> int:
    """Give every result whose call the messages lack that call, from `recovered` or a stand-in,
    in the answer before it (a new one if the message before is not an answer); changes
    `messages` and `chain` in place, and returns how many calls were given."""
    known = {call.id: call for call in recovered}
    given = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        before = messages[index - 1] if index else None
        made = {c.id for c in before.tool_uses} if isinstance(before, AssistantMessage) else set()
        lost = [
            known.get(block.tool_use_id, ToolUseBlock(block.tool_use_id, LOST_CALL_NAME, {}))
            for block in message.content
            if isinstance(message, UserMessage)
            and isinstance(block, ToolResultBlock)
            and block.tool_use_id not in made
        ]
        if lost:
            given += len(lost)
            added: tuple[ContentBlock, ...] = (TextBlock(LOST_CALLS_NOTE), *lost)
            if isinstance(before, AssistantMessage):
                messages[index - 1] = replace(before, content=(*before.content, *added))
            else:  # the answer is lost whole: one stands in for it, on the record before
                messages.insert(index, AssistantMessage(added))
                chain.insert(index, chain[index - 1] if index else chain[index])
                index += 1
        index += 1
    return given
