"""The provider-neutral conversation: content blocks, messages and usage.

These frozen structs (`msgspec.Struct`, as every record in stayer: built in C, they cost next to
nothing at import) are the only shape of a conversation the loop knows. Providers translate them
to and from their wire formats; the transcript and stream-json printers serialise them with
`to_wire` / `from_wire`, whose shape is the Anthropic Messages API's (what Claude Code writes too).

Thinking blocks are kept byte for byte, signature included: the API rejects a tool-use turn whose
thinking came back altered. Messages can be weakly referenced, so a provider can keep the JSON it
sent for one exactly as long as the message lives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypeVar, get_args

from msgspec import Struct, field
from msgspec.structs import replace

JSON: TypeAlias = Any
"""A value decoded from JSON (dict, list, str, int, float, bool or None)."""

StopReason: TypeAlias = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))


class TextBlock(Struct, frozen=True):
    """Plain text from the person or the model."""

    text: str
    type: Literal["text"] = "text"


class ThinkingBlock(Struct, frozen=True):
    """The model's visible reasoning; goes back to the API exactly as received."""

    thinking: str
    signature: str
    type: Literal["thinking"] = "thinking"


class RedactedThinkingBlock(Struct, frozen=True):
    """Encrypted reasoning; opaque, returned to the API unchanged."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


class ImageBlock(Struct, frozen=True):
    """A base64-encoded image (`media_type` such as ``image/png``)."""

    media_type: str
    data: str
    type: Literal["image"] = "image"


class ToolUseBlock(Struct, frozen=True):
    """The model asking for one tool call.

    `unparsed` holds the arguments text as the model wrote it when it was not a JSON object
    (then `input` is empty); the executor answers such a call with the parser's reason. It is
    ours alone: no wire form (API request, transcript, stream-json) carries it.
    """

    id: str
    name: str
    input: Mapping[str, JSON]
    type: Literal["tool_use"] = "tool_use"
    unparsed: str | None = None


ToolResultContent: TypeAlias = TextBlock | ImageBlock


class ToolResultBlock(Struct, frozen=True):
    """The answer to one `ToolUseBlock`, matched by `tool_use_id`."""

    tool_use_id: str
    content: tuple[ToolResultContent, ...]
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        """The text parts of the result joined together."""
        return "".join(part.text for part in self.content if isinstance(part, TextBlock))


ContentBlock: TypeAlias = (
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock | ToolUseBlock | ToolResultBlock
)


class Usage(Struct, frozen=True):
    """Token counts of one model call, or a sum of several."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
        )

    def __sub__(self, other: Usage) -> Usage:
        """What was spent since `other`, an earlier sum of the same calls."""
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens - other.cache_read_input_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens - other.cache_creation_input_tokens
            ),
        )

    @property
    def total_input_tokens(self) -> int:
        """Every input token, cached or not: what the context window holds."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


class ModelSpend(Struct, frozen=True):
    """The tokens of a model call made outside the conversation (a tool asking a small model
    about a web page), and which model answered: billed to the run like the loop's own."""

    model: str
    usage: Usage
    cost_usd: float | None = None
    """What the calls cost when whoever made them priced them already, call by call (a
    subagent's run); None: the run prices `usage` as one call. A sum of calls priced as one
    could cross a long-prompt rate that none of them did."""


class UserMessage(Struct, frozen=True, weakref=True):
    """A message in the user role: a prompt, or the tool results of one turn."""

    content: tuple[ContentBlock, ...]
    role: Literal["user"] = "user"

    @classmethod
    def of_text(cls, text: str) -> UserMessage:
        """A user message holding one text block."""
        return cls(content=(TextBlock(text),))


class AssistantMessage(Struct, frozen=True, weakref=True):
    """One complete model response."""

    content: tuple[ContentBlock, ...]
    id: str = ""
    model: str = ""
    stop_reason: StopReason | None = None
    usage: Usage = field(default_factory=Usage)
    role: Literal["assistant"] = "assistant"

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls this response asked for, in order."""
        return tuple(block for block in self.content if isinstance(block, ToolUseBlock))

    @property
    def text(self) -> str:
        """The visible text of the response."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))


Message: TypeAlias = UserMessage | AssistantMessage
MessageT = TypeVar("MessageT", bound=Message)


class ToolSpec(Struct, frozen=True):
    """A tool as the model sees it: name, description and JSON schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, JSON]


# --- wire form (Anthropic Messages API shape) -------------------------------------------------


def block_to_wire(block: ContentBlock) -> dict[str, JSON]:
    """One content block as the Anthropic API spells it.

    A call's `unparsed` text is left out: the API (and so the transcript, which is read back
    into requests) wants `input` to be an object, and the call's error result already quotes
    what the model wrote, so a resumed session shows the model the same as the live one did.
    """
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ThinkingBlock(thinking=thinking, signature=signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RedactedThinkingBlock(data=data):
            return {"type": "redacted_thinking", "data": data}
        case ImageBlock(media_type=media_type, data=data):
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            }
        case ToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": dict(input_)}
        case ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error):
            wire: dict[str, JSON] = {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": [block_to_wire(part) for part in content],
            }
            if is_error:
                wire["is_error"] = True
            return wire


def block_from_wire(data: Mapping[str, JSON]) -> ContentBlock:
    """Parse one content block; raises `ValueError` naming what was wrong."""
    kind = data.get("type")
    try:
        match kind:
            case "text":
                return TextBlock(str(data["text"]))
            case "thinking":
                return ThinkingBlock(str(data["thinking"]), str(data.get("signature", "")))
            case "redacted_thinking":
                return RedactedThinkingBlock(str(data["data"]))
            case "image":
                source = data["source"]
                return ImageBlock(str(source["media_type"]), str(source["data"]))
            case "tool_use":
                return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data["input"]))
            case "tool_result":
                return ToolResultBlock(
                    tool_use_id=str(data["tool_use_id"]),
                    content=_result_content_from_wire(data.get("content", "")),
                    is_error=bool(data.get("is_error", False)),
                )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed {kind} block: missing or wrong field {exc}") from None
    raise ValueError(f"unknown content block type {kind!r}")


def _result_content_from_wire(content: JSON) -> tuple[ToolResultContent, ...]:
    if isinstance(content, str):
        return (TextBlock(content),)
    parts: list[ToolResultContent] = []
    for item in content:
        block = block_from_wire(item)
        if not isinstance(block, TextBlock | ImageBlock):
            raise ValueError(f"a tool_result cannot hold a {block.type} block")
        parts.append(block)
    return tuple(parts)


def usage_to_wire(usage: Usage) -> dict[str, int]:
    """Usage in the API's field names."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
    }


def usage_from_wire(data: Mapping[str, JSON] | None) -> Usage:
    """Usage from the API's field names; absent or null counts are zero."""
    if not data:
        return Usage()
    return Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cache_read_input_tokens=int(data.get("cache_read_input_tokens") or 0),
        cache_creation_input_tokens=int(data.get("cache_creation_input_tokens") or 0),
    )


def message_to_wire(message: Message) -> dict[str, JSON]:
    """A message as the Anthropic API spells it (assistant messages carry id, model, usage)."""
    wire: dict[str, JSON] = {
        "role": message.role,
        "content": [block_to_wire(block) for block in message.content],
    }
    if isinstance(message, AssistantMessage):
        wire.update(
            id=message.id,
            type="message",
            model=message.model,
            stop_reason=message.stop_reason,
            stop_sequence=None,
            usage=usage_to_wire(message.usage),
        )
    return wire


def message_from_wire(data: Mapping[str, JSON]) -> Message:
    """Parse a message; raises `ValueError` naming what was wrong."""
    role = data.get("role")
    raw_content = data.get("content")
    if isinstance(raw_content, str):
        content: tuple[ContentBlock, ...] = (TextBlock(raw_content),)
    elif isinstance(raw_content, Sequence):
        content = tuple(block_from_wire(item) for item in raw_content)
    else:
        raise ValueError("a message needs content: a string or a list of blocks")
    if role == "user":
        return UserMessage(content)
    if role == "assistant":
        stop = data.get("stop_reason")
        return AssistantMessage(
            content=content,
            id=str(data.get("id", "")),
            model=str(data.get("model", "")),
            stop_reason=stop if stop in STOP_REASONS else None,
            usage=usage_from_wire(data.get("usage")),
        )
    raise ValueError(f"unknown message role {role!r}; expected 'user' or 'assistant'")


HistoryFault: TypeAlias = Literal[
    "empty",
    "first_not_user",
    "roles_repeat",
    "empty_assistant",
    "unanswered_tool_use",
    "unexpected_tool_result",
    "blank_text",
    "duplicate_tool_use",
]


class HistoryProblem(Struct, frozen=True):
    """One way a conversation breaks the API's rules: what, at which message, and the tool
    call ids concerned."""

    fault: HistoryFault
    index: int
    ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        ids = ", ".join(self.ids)
        return {
            "empty": "the conversation has no messages",
            "first_not_user": "the first message is not the user's",
            "roles_repeat": f"message {self.index} has the same role as the one before it",
            "empty_assistant": f"assistant message {self.index} is empty and not the last",
            "unanswered_tool_use": f"tool calls in message {self.index} get no result: {ids}",
            "unexpected_tool_result": f"message {self.index} answers calls not made: {ids}",
            "blank_text": f"message {self.index} has a text block with nothing but whitespace",
            "duplicate_tool_use": f"message {self.index} repeats tool call ids: {ids}",
        }[self.fault]


def is_blank_text(block: ContentBlock) -> bool:
    """A text block of nothing but whitespace (models stream them), which the API refuses."""
    return isinstance(block, TextBlock) and not block.text.strip()


def without_blank_text(message: MessageT) -> MessageT:
    """`message` without its blank text blocks (the same object when it has none)."""
    kept = tuple(block for block in message.content if not is_blank_text(block))
    return message if len(kept) == len(message.content) else replace(message, content=kept)


def history_problems(messages: Sequence[Message]) -> list[HistoryProblem]:
    """Everything that makes `messages` invalid for the API (empty when it is valid): roles
    alternate from the user's, only the last assistant message may be empty, no text block is
    blank, every tool call has an id of its own, and is answered in the very next message,
    which answers nothing else."""
    if not messages:
        return [HistoryProblem("empty", 0)]
    problems = [] if isinstance(messages[0], UserMessage) else [HistoryProblem("first_not_user", 0)]
    calls: tuple[str, ...] = ()
    made: set[str] = set()
    for index, message in enumerate(messages):
        if index and message.role == messages[index - 1].role:
            problems.append(HistoryProblem("roles_repeat", index))
        if any(is_blank_text(b) for b in message.content):
            problems.append(HistoryProblem("blank_text", index))  # the API refuses those
        results = tuple(
            block.tool_use_id for block in message.content if isinstance(block, ToolResultBlock)
        )
        if isinstance(message, AssistantMessage):
            if calls:  # two answers in a row: the first one's calls got no results
                problems.append(HistoryProblem("unanswered_tool_use", index - 1, calls))
            if not message.content and index < len(messages) - 1:
                problems.append(HistoryProblem("empty_assistant", index))
            calls = tuple(block.id for block in message.tool_uses)
            repeated = tuple(c for n, c in enumerate(calls) if c in made or c in calls[:n])
            if repeated:
                problems.append(HistoryProblem("duplicate_tool_use", index, repeated))
            made.update(calls)
            if calls and index == len(messages) - 1:
                problems.append(HistoryProblem("unanswered_tool_use", index, calls))
            continue
        unanswered = tuple(call for call in calls if call not in results)
        if unanswered:
            problems.append(HistoryProblem("unanswered_tool_use", index - 1, unanswered))
        unexpected = tuple(result for result in results if result not in calls)
        if unexpected:
            problems.append(HistoryProblem("unexpected_tool_result", index, unexpected))
        calls = ()
    return problems
