"""A stream cut after partial text: keep what arrived and ask the model to go on from the cut.

When a model call fails in a way worth retrying (a 5xx, an `overloaded_error` event, a cut
connection, a stalled stream) after the answer has started, `turn.stream_turn` either withdraws
the partial answer and sends the request again whole, or keeps the partial answer in the
conversation, adds a note asking the model to continue exactly where it stopped, and sends that
(`Continue.TRUNCATED_RESPONSE_RECOVERY`), still after the retry policy's wait. This module
decides which, and what is kept:

* only visible text is kept, exactly as it streamed: complete text blocks, and the text that
  arrived of a text block still open at the cut (a person watching has already read it).
  Thinking is dropped: a block cut before its signature is refused by the API, and a signed one
  is worth nothing to a reply that goes on in a new message. A tool call cut inside its input is
  dropped; the note asks for it again, whole;
* the answer is kept only when it holds a complete text block with visible text, or at least
  `MIN_OPEN_TEXT_CHARS` characters of it in the open block: less is quicker to write again
  than to stitch, and a model continues more reliably after a sentence than inside a first word;
* an answer in which a complete tool call streamed that has not started (its input was invalid,
  or it waited behind another call) is withdrawn and asked again whole: a tool_use must be
  answered by the very next message, so the note could not follow it, and nothing ran, so
  nothing can run twice. Once a call has started, the answer is never withdrawn: the loop keeps
  it up to that call and goes on from what ran (see `executor`); this module is not asked;
* at most `MAX_STREAM_RESUMES` resumes per model call (each call starts afresh, after a tool
  round too); past that, and whenever the call moves to a fallback model, the partial answer is
  withdrawn and the request (with what was kept before) sent again whole. Every resume counts as
  a retry against the policy's limit, so the back-off grows across them.

Only the loop's own calls resume (`stream_turn(..., resume=True)`): a caller that reads only the
final message, as the compaction summary does, gets the whole answer again instead.

Claude Code 2.1.332 does the like (`truncated_response_recovery`). The kept answer and its note
stay in the conversation even if the call then fails for good: they are what the last request
carried, and a person has seen the text. `answer_text` joins a resumed answer back together
for the run's result.
"""

from __future__ import annotations

from msgspec import Struct, field

from stayer.events import BlockCompleted, BlockStarted, MessageCompleted, StreamEvent, TextDelta
from stayer.messages import AssistantMessage, Message, TextBlock, ToolUseBlock, UserMessage
from stayer.providers.base import MessageAssembler

MAX_STREAM_RESUMES = 3
MIN_OPEN_TEXT_CHARS = 80

STREAM_CUT_TEXT = (
    "[Your reply above was cut off mid-stream when the connection to the server failed; it "
    "ends exactly where the cut fell. Continue from that point, mid-sentence or mid-code if "
    "that is where it stops: do not repeat what is already there, no apology and no recap. If "
    "you were in the middle of a tool call, it did not come through: make it again in full.]"
)


def resume_note() -> UserMessage:
    """The user message that follows a kept partial answer."""
    return UserMessage((TextBlock(STREAM_CUT_TEXT),))


class Streamed(Struct):
    """What one attempt of a model call streamed before it ended: its complete blocks, and the
    text so far of any text block still open."""

    started: bool = False
    assembler: MessageAssembler = field(default_factory=MessageAssembler)
    open_text: dict[int, list[str]] = field(default_factory=dict[int, list[str]])

    @property
    def message_id(self) -> str:
        return self.assembler.message_id

    def feed(self, event: StreamEvent) -> None:
        """Take one event of the attempt into account."""
        if isinstance(event, MessageCompleted):
            return  # the attempt succeeded: nothing left to keep or withdraw
        if isinstance(event, BlockStarted) and event.block_type == "text":
            self.open_text[event.index] = []
        elif isinstance(event, TextDelta) and event.index in self.open_text:
            self.open_text[event.index].append(event.text)
        elif isinstance(event, BlockCompleted):
            self.open_text.pop(event.index, None)
        self.started = True
        self.assembler.feed(event)

    def kept(self) -> AssistantMessage | None:
        """The partial answer to keep at a cut (its visible text as it streamed), or None when
        it must be withdrawn and asked again whole (see the module docstring)."""
        complete = self.assembler.blocks
        if any(isinstance(block, ToolUseBlock) for block in complete.values()):
            return None
        whole = {i: b for i, b in complete.items() if isinstance(b, TextBlock) and b.text.strip()}
        cut = {i: TextBlock("".join(parts)) for i, parts in self.open_text.items()}
        cut = {i: block for i, block in cut.items() if block.text.strip()}
        visible = sum(len(block.text.strip()) for block in cut.values())
        if not whole and visible < MIN_OPEN_TEXT_CHARS:
            return None
        text = {**whole, **cut}
        return AssistantMessage(
            tuple(text[index] for index in sorted(text)),
            id=self.assembler.message_id,
            model=self.assembler.model,
            usage=self.assembler.usage,
        )


def answer_text(messages: tuple[Message, ...]) -> str:
    """The visible text of the last answer in `messages`, with the partial answers a cut stream
    left before it (each followed by the resume note) joined back in front of it."""
    answers = [(i, m) for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    if not answers:
        return ""
    at, answer = answers.pop()
    parts = [answer.text]
    while answers and answers[-1][0] == at - 2 and is_resume_note(messages[at - 1]):
        at, answer = answers.pop()
        parts.append(answer.text)
    return "".join(reversed(parts))


def is_resume_note(message: Message) -> bool:
    """Whether `message` is a resume note (another note may have been merged in after it)."""
    first = message.content[0] if message.content else None
    return isinstance(message, UserMessage) and first == TextBlock(STREAM_CUT_TEXT)
