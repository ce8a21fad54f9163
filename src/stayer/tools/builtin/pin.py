"""The Pin tool: a note the model marks to survive every compaction word for word.

A summary keeps what a long session learned, but in its own words, and a detail that matters
(an exact constraint, a command that must not run, a figure to reach) can come out blurred.
Pinned notes are copied unchanged into every compacted history (`context.compact`). This goes
beyond Claude Code, which has no such note; the user's own pins come from `--pin`.
"""

from __future__ import annotations

from pydantic import Field

from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput
from stayer.tools.names import PIN

MAX_NOTE_CHARS = 1_000
MAX_PINS = 20


class PinInput(ToolInput):
    """Input of the Pin tool."""

    note: str = Field(
        min_length=1,
        max_length=MAX_NOTE_CHARS,
        description="The fact to keep, in one or two sentences that make sense on their own.",
    )


class PinTool(Tool[PinInput]):
    """Keeps a note word for word through every compaction of the conversation."""

    name = PIN
    input_model = PinInput
    read_only = True
    description = (
        "Pins a short note that must survive, word for word, when a long conversation is "
        "summarised to fit the context window.\n\n"
        "- Use it for facts that must not blur: an exact requirement or limit the user set, a "
        "command that must (or must never) be run, a decision and its reason, a value to "
        "reach.\n"
        "- Do not pin what the code or files already hold; they can be read again.\n"
        f"- At most {MAX_PINS} notes of up to {MAX_NOTE_CHARS} characters each."
    )

    def is_concurrency_safe(self, tool_input: PinInput) -> bool:
        return True

    async def call(self, tool_input: PinInput, ctx: ToolContext) -> ToolOutput:
        note = tool_input.note.strip()
        if not note:
            raise ToolFailure("The note is empty; pin a fact in words.")
        if note in ctx.pins:
            return ToolOutput("Already pinned; nothing changed.")
        if len(ctx.pins) >= MAX_PINS:
            raise ToolFailure(
                f"There are already {MAX_PINS} pinned notes, the most there may be; keep the "
                "fact in your answer instead."
            )
        ctx.pins.append(note)
        return ToolOutput(
            f"Pinned ({len(ctx.pins)} of {MAX_PINS}): it will be kept word for word through "
            "every compaction.",
            data={"pins": list(ctx.pins)},
        )
