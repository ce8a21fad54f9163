"""Keeping a long conversation inside the model's window (SPEC §3.1, §7.3): pure functions.

Two ways to shrink a history, cheapest first:

* `clear_old_tool_results`: the output of old tool calls is what fills a window; all but the
  most recent few results are replaced by a short marker (every tool_use keeps its result, so
  the history stays valid), those already shorter than the marker excepted;
* a summary by the model: `summary_request` turns the history into one transcript (oldest parts
  left out, and said so, when even that would not fit the summariser's window) with our
  instructions, and `compacted` builds the new history from the summary, keeping the latest
  round of work verbatim when it is small.

Token counts here are estimates (about four characters a token); the loop calibrates them with
the usage the API reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from msgspec import Struct

from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.tools.names import READ

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
KEEP_RECENT_RESULTS = 3
"""Tool results `clear_old_tool_results` leaves as they are, the newest."""
CLEARED_PREFIX = "[Old tool output cleared to save context"
CLEARED_TEXT = CLEARED_PREFIX + " ({chars:,} characters). Run the call again if you need it.]"
TRANSCRIPT_RESULT_CHARS = 2_000
"""How much of each tool result the summariser sees (its start and end)."""

SUMMARY_SYSTEM = (
    "You write the working notes that let an agent carry on a software task after its "
    "conversation history is replaced by them. Write plain text, no tool calls."
)
SUMMARY_INSTRUCTIONS = """\
The transcript above is the work so far. Write notes from which the work can continue as if \
nothing had been lost. Include, under these headings:

1. Requests: every request and correction the user made, quoted word for word.
2. Decisions: what was decided and why, and any constraints the user set.
3. Files and code: each file read, created or changed, with what matters about it (exact \
names, functions, key lines of code where they are needed to go on).
4. Errors and fixes: what failed, how it was fixed, and what is still failing.
5. Pending: what is left to do, in order.
6. Where the work stopped: exactly what was being done at the end, and the next step.

Be complete about facts and brief in wording. Do not invent anything that is not in the \
transcript."""
PINS_INTRO = "[Pinned notes, kept word for word through every compaction:]\n"
SUMMARY_INTRO = (
    "[This conversation ran out of room, so its earlier part was replaced by the notes below. "
    "Continue the task from where it stopped, without asking the user to repeat anything.]\n\n"
)


def estimate_tokens(messages: Sequence[Message]) -> int:
    """About how many tokens `messages` take in a request."""
    return sum(_block_tokens(block) for message in messages for block in message.content)


def _block_tokens(block: ContentBlock) -> int:
    if isinstance(block, ImageBlock):
        return IMAGE_TOKENS
    if isinstance(block, ToolResultBlock):
        return sum(_block_tokens(part) for part in block.content) + 10
    return len(_block_text(block)) // CHARS_PER_TOKEN + 4


def _block_text(block: ContentBlock) -> str:
    match block:
        case TextBlock(text=text):
            return text
        case ThinkingBlock(thinking=thinking):
            return thinking
        case RedactedThinkingBlock(data=data):
            return data
        case ToolUseBlock(name=name, input=tool_input):
            return f"{name} {json.dumps(dict(tool_input), ensure_ascii=False)}"
        case ToolResultBlock():
            return block.text
        case ImageBlock():
            return "[image]"


def clear_old_tool_results(
    messages: Sequence[Message], *, keep: int = KEEP_RECENT_RESULTS
) -> tuple[tuple[Message, ...], int]:
    """`messages` with every tool result but the newest `keep` replaced by a marker; returns
    them and how many were cleared.

    A result no larger than its marker stays: clearing it would grow the history, and a call
    made to retry a prompt that is no smaller would be wasted."""
    positions = [
        (index, k, block)
        for index, message in enumerate(messages)
        if isinstance(message, UserMessage)
        for k, block in enumerate(message.content)
        if isinstance(block, ToolResultBlock) and not _is_cleared(block)
    ]
    old = {
        (index, k)
        for index, k, block in positions[: max(0, len(positions) - keep)]
        if _block_tokens(_cleared(block)) < _block_tokens(block)
    }
    if not old:
        return tuple(messages), 0
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not any(i == index for i, _ in old):
            out.append(message)
            continue
        blocks = [
            _cleared(block) if (index, k) in old and isinstance(block, ToolResultBlock) else block
            for k, block in enumerate(message.content)
        ]
        out.append(UserMessage(tuple(blocks)))
    return tuple(out), len(old)


def _cleared(block: ToolResultBlock) -> ToolResultBlock:
    text = CLEARED_TEXT.format(chars=len(block.text))
    return ToolResultBlock(block.tool_use_id, (TextBlock(text),), is_error=block.is_error)


def _is_cleared(block: ToolResultBlock) -> bool:
    return block.text.startswith(CLEARED_PREFIX)


class SummaryRequest(Struct, frozen=True):
    """What the summariser is asked: one user message, and what had to be left out."""

    system: str
    messages: tuple[Message, ...]
    left_out: int
    """Messages of the history too old to fit the summariser's window."""


def summary_request(
    messages: Sequence[Message], *, budget_tokens: int, focus: str | None = None
) -> SummaryRequest:
    """The history as a transcript, newest kept, within `budget_tokens` with the instructions;
    `focus` is what the user asked the summary to keep in view (`/compact <instructions>`)."""
    parts = [_transcript_entry(message) for message in messages]
    asked = SUMMARY_INSTRUCTIONS
    if focus and focus.strip():
        asked += f"\n\nThe user asks the summary to focus on this: {focus.strip()}"
    room = budget_tokens * CHARS_PER_TOKEN - len(asked) - 200
    kept: list[str] = []
    used = 0
    for part in reversed(parts):
        if used + len(part) > room and kept:
            break
        kept.append(part[-room:] if len(part) > room else part)
        used += len(part)
    kept.reverse()
    left_out = len(parts) - len(kept)
    head = f"[The {left_out} oldest messages were left out to fit.]\n\n" if left_out else ""
    text = "<transcript>\n" + head + "\n\n".join(kept) + "\n</transcript>\n\n"
    prompt = UserMessage((TextBlock(text + asked),))
    return SummaryRequest(SUMMARY_SYSTEM, (prompt,), left_out)


def _transcript_entry(message: Message) -> str:
    speaker = "Assistant" if isinstance(message, AssistantMessage) else "User"
    lines = []
    for block in message.content:
        match block:
            case ToolUseBlock(name=name, input=tool_input):
                lines.append(f"{speaker} called {name}: {json.dumps(dict(tool_input))[:4_000]}")
            case ToolResultBlock():
                lines.append(
                    f"Tool result{' (error)' if block.is_error else ''}: {_ends(block.text)}"
                )
            case ThinkingBlock() | RedactedThinkingBlock():
                continue  # the reasoning led to the calls and words, which are kept
            case _:
                lines.append(f"{speaker}: {_block_text(block)}")
    return "\n".join(lines)


def _ends(text: str) -> str:
    if len(text) <= TRANSCRIPT_RESULT_CHARS:
        return text
    half = TRANSCRIPT_RESULT_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters ...]\n{text[-half:]}"


def compacted(
    messages: Sequence[Message],
    summary: str,
    *,
    keep_recent_tokens: int,
    pins: Sequence[str] = (),
    files: Sequence[str] = (),
) -> tuple[Message, ...]:
    """The new history: the summary as the first user message, with the pinned notes word for
    word and the `files` shown again; then the latest round of work (an assistant turn and the
    user message answering it) when it fits `keep_recent_tokens`."""
    blocks = [TextBlock(SUMMARY_INTRO + summary.strip())]
    if pins:
        blocks.append(TextBlock(PINS_INTRO + "\n".join(f"- {pin}" for pin in pins)))
    blocks.extend(TextBlock(file) for file in files)
    intro = UserMessage(tuple(blocks))
    tail = kept_round(messages, keep_recent_tokens=keep_recent_tokens)
    return (intro, *tail)


def kept_round(messages: Sequence[Message], *, keep_recent_tokens: int) -> tuple[Message, ...]:
    """The latest round of work, which a summary keeps verbatim when it fits."""
    tail = _latest_round(messages)
    return tail if tail and estimate_tokens(tail) <= keep_recent_tokens else ()


def recently_read(messages: Sequence[Message], *, limit: int | None = None) -> list[str]:
    """The files the model read, newest first, at most `limit` of them (the Read tool's
    `file_path` as it was given); a Read that failed, was denied or never ran does not count."""
    succeeded = {
        block.tool_use_id
        for message in messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock) and not block.is_error
    }
    found: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, AssistantMessage):
            continue
        for block in reversed(message.tool_uses):
            if block.name != READ or block.id not in succeeded:
                continue
            path = block.input.get("file_path")
            if isinstance(path, str) and path not in found:
                found.append(path)
    return found if limit is None else found[:limit]


def largest_tool_output(messages: Sequence[Message]) -> tuple[ToolUseBlock, int] | None:
    """The call whose result takes the most room in `messages`, and about how many tokens."""
    calls = {
        block.id: block
        for message in messages
        if isinstance(message, AssistantMessage)
        for block in message.tool_uses
    }
    sizes = [
        (_block_tokens(block), block.tool_use_id)
        for message in messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock) and block.tool_use_id in calls
    ]
    if not sizes:
        return None
    tokens, tool_use_id = max(sizes)
    return calls[tool_use_id], tokens


def _latest_round(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The last assistant message with its answering user message, if the history ends so."""
    if len(messages) >= 2:
        last, before = messages[-1], messages[-2]
        if isinstance(last, UserMessage) and isinstance(before, AssistantMessage):
            return (before, last)
    return ()
