"""Files the model had read, shown again after a summary (SPEC §3.1; Claude Code does the same).

A summary names the files the work touched but cannot hold them, and the model would otherwise
spend its first calls after a compaction reading them again. The most recently read ones are
read again through the run's own Read tool and its permission check, as they are now (which
also tells Edit the model has seen them), each cut to a share of the budget; files whose Read
the kept round still shows, whose Read failed or was denied, or that can no longer be read, are
left out.

The skills invoked in the conversation are shown again too (`reattach_skills`): the latest
rendering of each, newest first, each cut to a share and all within a total (Claude Code's
5,000 and 25,000 tokens, and never more than what the files left of their quarter of the
threshold: a small window must not fill again with them), unless the kept round still shows
it. The listing of agent types and skills the conversation began with goes into the summary's
message too (`listing_of`): without it the model would no longer know what it may delegate to
or load. A custom command's body is not among them: what its `!` commands printed then is stale.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from stayer.context.compact import CHARS_PER_TOKEN, recently_read
from stayer.messages import Message, TextBlock, UserMessage
from stayer.tools.base import Tool, ToolFailure, ToolInputError
from stayer.tools.names import READ

from .state import LoopParams, ToolCall

REATTACHED_INTRO = "[{path}, which you read before the summary, as it is now:]\n"
SKILL_INTRO = "[Skill {name}, loaded before the summary; its instructions still apply:]\n"
SKILL_CUT_NOTE = "\n[... cut to save room; load the skill again for the rest.]"
LISTING_MARK = "<system-reminder>\n"
AGENTS_HEAD = "The Agent tool can start these agent types (subagent_type):"
SKILLS_HEAD = (
    "The Skill tool can load these skills; load one when the task matches its description, "
    "before doing the work yourself:"
)
"""How the listing of agent types and skills a session puts in a conversation's first message
begins (`session.listings` writes it; a summary carries it over, `listing_of`)."""
SKILL_TOKENS = 5_000
SKILLS_TOTAL_TOKENS = 25_000
CUT_NOTE = "\n[... cut to save room; Read it again from line {line} for the rest.]"
_NUMBERED = re.compile(r"^\s*(\d+)\t", re.MULTILINE)
"""A line of a Read page: its number, a tab, its text."""


class Reattached(Struct, frozen=True):
    """One file shown again: its path as the model gave it, and the text it is shown as."""

    path: str
    text: str


async def reread(
    params: LoopParams,
    history: Sequence[Message],
    kept: Sequence[Message],
    *,
    budget_tokens: int,
) -> list[Reattached]:
    """The most recently read files of `history` as they are now, within the policy's budget
    and `budget_tokens`; none already visible in the `kept` messages, and each read again only
    if the permission check still allows it."""
    policy = params.compaction
    read = params.tools.tools().get(READ) if READ in params.tools.names else None
    if read is None or policy.reattach_files < 1:
        return []
    visible = set(recently_read(kept))
    wanted = [p for p in recently_read(history, limit=policy.reattach_files) if p not in visible]
    room = min(policy.reattach_total_tokens, budget_tokens) * CHARS_PER_TOKEN
    found: list[Reattached] = []
    for path in wanted:
        share = min(policy.reattach_file_tokens * CHARS_PER_TOKEN, room)
        page = await _page(params, read, path)
        if page is None or share <= 0:
            continue
        text = REATTACHED_INTRO.format(path=path) + _fit(page, share)
        room -= len(text)
        found.append(Reattached(path, text))
    return found


async def _page(params: LoopParams, read: Tool[Any], path: str) -> str | None:
    """The Read tool's text for `path`, or None when it cannot be read as text now."""
    try:
        tool_input = read.parse_input({"file_path": path})
        decision = await params.can_use_tool(ToolCall(read, "reattach", tool_input))
        if decision.behavior != "allow":
            return None  # whatever was allowed once, the rules of now decide
        output = await read.call(tool_input, params.tool_context)
    except (ToolFailure, ToolInputError, OSError, ValueError):
        return None
    if output.is_error or not isinstance(output.content, str):
        return None  # an image or an error is not worth the room
    return output.content


def _fit(page: str, room: int) -> str:
    """`page` within `room` characters, cut at a line's end and saying where to go on."""
    if len(page) <= room:
        return page
    head = page[: max(room - len(CUT_NOTE) - 10, 0)]
    head = head[: head.rfind("\n")] if "\n" in head else head
    numbers = _NUMBERED.findall(head)
    line = int(numbers[-1]) + 1 if numbers else 1
    return head + CUT_NOTE.format(line=line)


def reattach_skills(
    params: LoopParams, kept: Sequence[Message], *, budget_tokens: int
) -> list[Reattached]:
    """The skills to show again after a summary: each one's latest rendering, newest first,
    cut to its share, until the total (at most `budget_tokens`) is spent (the rest are left
    out); none the `kept` messages still show."""
    if params.skills_loaded is None:
        return []
    visible = {
        block.text
        for message in kept
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, TextBlock)
    }
    room = min(SKILLS_TOTAL_TOKENS, budget_tokens) * CHARS_PER_TOKEN
    found: list[Reattached] = []
    for name, text in params.skills_loaded():
        if text in visible:
            continue
        intro = SKILL_INTRO.format(name=name)
        share = min(SKILL_TOKENS * CHARS_PER_TOKEN, room) - len(intro)
        if share <= len(SKILL_CUT_NOTE):
            break
        shown = text if len(text) <= share else text[: share - len(SKILL_CUT_NOTE)] + SKILL_CUT_NOTE
        room -= len(intro) + len(shown)
        found.append(Reattached(f"skill:{name}", intro + shown))
    return found


def is_listing(text: str) -> bool:
    """Whether `text` is a listing of agent types and skills (`session.listings`)."""
    return text.startswith((LISTING_MARK + AGENTS_HEAD, LISTING_MARK + SKILLS_HEAD))


def listing_of(messages: Sequence[Message]) -> list[str]:
    """The listing the conversation in `messages` began with (in its first message, or the
    last summary's), as a list of none or one text."""
    for message in messages:
        if isinstance(message, UserMessage):
            for block in message.content:
                if isinstance(block, TextBlock) and is_listing(block.text):
                    return [block.text]
    return []
