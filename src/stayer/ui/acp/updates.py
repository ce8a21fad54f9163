"""A session's events as ACP `session/update`s, and how a run's end reads as a stop reason.

Text and reasoning stream as `agent_message_chunk` / `agent_thought_chunk`, each with the id of
the model message it belongs to. A tool call is announced (`tool_call`, pending, with its
title, kind, locations and, for an edit, its diff) as soon as the model has finished writing
it, so a permission question can name it; it goes `in_progress` when it starts, back to
`pending` while a permission question about it waits (and `in_progress` again once allowed),
shows its live output (Bash's lines) as it prints, and ends `completed` or `failed` (a denied
call too) with its result; an edit keeps its diff. A TodoWrite list is the session's `plan`.
After each model message and each run, a `usage_update` says how full the context window is
(and, after a run, what the session has cost). A partial answer a retry withdrew cannot be
taken back in ACP: its chunks stay shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, assert_never

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    Cost,
    CurrentModeUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Compacted,
    Continuing,
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    ModelSwitched,
    PartialKept,
    PermissionRequested,
    PermissionResolved,
    RequestStarted,
    Retrying,
    SessionStarted,
    SubagentEvent,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.events import ToolCallProgress as ToolOutputLines
from stayer.messages import JSON, ToolUseBlock
from stayer.ui.wording import unwrapped

from .tool_calls import MAX_RESULT_CHARS, Content, describe, is_edit, plan_entries, result_content

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | UsageUpdate
    | UserMessageChunk
    | CurrentModeUpdate
    | AvailableCommandsUpdate
)
CallStatus = Literal["pending", "in_progress", "completed", "failed"]
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


def stop_reason(terminal: Terminal) -> StopReason | None:
    """The ACP stop reason a run's end reads as; None for an end that is a failure (the prompt
    is then answered with an error saying why)."""
    match terminal:
        case Terminal.COMPLETED | Terminal.HOOK_STOPPED | Terminal.STOP_HOOK_PREVENTED:
            return "end_turn"
        case Terminal.MAX_OUTPUT_TOKENS:
            return "max_tokens"
        case Terminal.MAX_TURNS | Terminal.BUDGET_EXHAUSTED:
            return "max_turn_requests"
        case Terminal.REFUSAL:
            return "refusal"
        case Terminal.ABORTED_STREAMING | Terminal.ABORTED_TOOLS:
            return "cancelled"
        case (
            Terminal.MODEL_ERROR
            | Terminal.PROMPT_TOO_LONG
            | Terminal.IMAGE_ERROR
            | Terminal.BLOCKING_LIMIT
            | Terminal.MALFORMED_TOOL_USE_EXHAUSTED
            | Terminal.EMPTY_RESPONSE
            | Terminal.DONE_CHECK_FAILED
            | Terminal.REPEATED_FAILURE
            | Terminal.RAPID_REFILL
        ):
            return None
        case _:
            assert_never(terminal)


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


class Translator:
    """Turns one session's events into updates, remembering what it has announced."""

    def __init__(self, cwd: Path, context_window: int = 0) -> None:
        self._cwd = cwd
        self._window = context_window
        self._message_id: str | None = None
        self._calls: dict[str, tuple[str, dict[str, JSON]]] = {}
        self._cost = 0.0
        self._used = 0
        self._printed: dict[str, str] = {}

    def take(self, event: Event) -> list[Update]:
        """The updates `event` makes (often none)."""
        match event:
            case SessionStarted(context_window=window):
                self._window = window or self._window
            case MessageStarted() | TextDelta() | ThinkingDelta():
                return self._streamed(event)
            case (
                BlockCompleted() | ToolCallStarted() | PermissionRequested()
                | PermissionResolved() | ToolCallFinished()
            ):  # fmt: skip
                return self._tool(event)
            case MessageCompleted(message=message):
                self._used = message.usage.total_input_tokens + message.usage.output_tokens
                return self._usage()
            case Finished(cost_usd=cost):
                self._cost += cost
                return [*self._stopped(event), *self._usage()]
            case SubagentEvent():
                return self._nested(unwrapped(event)[0].event)
            case ToolOutputLines():
                return self._output(event)
            case (
                BlockStarted() | ToolInputDelta() | MessageDelta() | RequestStarted()
                | Retrying() | Withdrawn() | PartialKept() | ModelSwitched()
                | ToolResultsAppended() | Continuing() | Compacted()
                | HookRan() | McpServerStatus()
            ):  # fmt: skip
                pass
            case _ as unreachable:
                assert_never(unreachable)
        return []

    def _stopped(self, event: Finished) -> list[Update]:
        """Why a hook stopped the run (a UserPromptSubmit hook that kept the prompt out, say),
        as the agent's words: the editor would otherwise show a turn that ended with none."""
        if event.terminal != Terminal.HOOK_STOPPED or not event.message.strip():
            return []
        said = event.message.strip()
        if not event.num_turns:  # kept out before the model saw it
            said = f"A UserPromptSubmit hook kept this prompt from the model: {said}"
        return [AgentMessageChunk(session_update="agent_message_chunk", content=text(said))]

    def _output(self, event: ToolOutputLines) -> list[Update]:
        """A running call's live output (Bash's lines), shown as its content so far: the last
        `MAX_RESULT_CHARS` of it; its result replaces it when it ends."""
        if event.tool_use_id not in self._calls:
            return []
        shown = self._printed.get(event.tool_use_id, "")
        if event.omitted_lines:
            shown += f"… ({event.omitted_lines} lines left out)\n"
        shown = (shown + event.text)[-MAX_RESULT_CHARS:]
        self._printed[event.tool_use_id] = shown
        block = ContentToolCallContent(type="content", content=text(shown))
        return [_progress(event.tool_use_id, content=[block])]

    def _nested(self, event: Event) -> list[Update]:
        """A subagent's call shows only once a question about it was put to the editor: then
        how the question was answered and how the call ended show too."""
        if isinstance(event, PermissionResolved | ToolCallFinished) and (
            event.tool_use_id in self._calls
        ):
            return self._tool(event)
        return []

    def _streamed(self, event: MessageStarted | TextDelta | ThinkingDelta) -> list[Update]:
        """Text and reasoning, each chunk with its message's id."""
        if isinstance(event, MessageStarted):
            self._message_id = event.message_id or None
            return []
        if isinstance(event, TextDelta):
            return [
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=text(event.text),
                    message_id=self._message_id,
                )
            ]
        return [
            AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=text(event.thinking),
                message_id=self._message_id,
            )
        ]

    def _tool(
        self,
        event: BlockCompleted
        | ToolCallStarted
        | PermissionRequested
        | PermissionResolved
        | ToolCallFinished,
    ) -> list[Update]:
        """A tool call's announcement and the changes of its status."""
        match event:
            case BlockCompleted(block=ToolUseBlock() as block):
                return [self.announce(block.id, block.name, dict(block.input), "pending")]
            case ToolCallStarted(tool_use_id=call_id, name=name, input=tool_input):
                if call_id not in self._calls:
                    return [self.announce(call_id, name, tool_input, "in_progress")]
                self._calls[call_id] = (name, tool_input)
                return [_progress(call_id, status="in_progress")]
            case PermissionRequested(tool_use_id=call_id) if call_id in self._calls:
                return [_progress(call_id, status="pending")]  # waits for an answer
            case PermissionResolved(tool_use_id=call_id, behavior="allow") if (
                call_id in self._calls
            ):
                return [_progress(call_id, status="in_progress")]
            case ToolCallFinished():
                return self._finished(event)
            case _:  # another block, or a question about a call not shown (a subagent's)
                return []

    def announce(
        self,
        call_id: str,
        name: str,
        tool_input: dict[str, JSON],
        status: CallStatus,
        agent: str | None = None,
    ) -> ToolCallStart:
        """The `tool_call` that introduces a call to the editor (also used to replay one); a
        subagent's (`agent`) is titled with its name."""
        self._calls[call_id] = (name, tool_input)
        described = describe(name, tool_input, self._cwd, agent)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=described.title,
            kind=described.kind,
            status=status,
            locations=described.locations or None,
            content=described.content,
            raw_input=tool_input,
        )

    def call(self, call_id: str) -> tuple[str, dict[str, JSON]] | None:
        """The name and input of a call announced, if it was."""
        return self._calls.get(call_id)

    def _finished(self, event: ToolCallFinished) -> list[Update]:
        self._printed.pop(event.tool_use_id, None)
        name, tool_input = self._calls.get(event.tool_use_id, (event.name, {}))
        ok = event.status == "completed"
        content = None if ok and is_edit(name) else result_content(event.result)
        updates: list[Update] = [
            _progress(event.tool_use_id, status="completed" if ok else "failed", content=content)
        ]
        entries = plan_entries(name, tool_input) if ok else None
        if entries is not None:
            updates.append(AgentPlanUpdate(session_update="plan", entries=entries))
        return updates

    def _usage(self) -> list[Update]:
        if not self._window:
            return []
        cost = Cost(amount=round(self._cost, 6), currency="USD") if self._cost else None
        return [
            UsageUpdate(
                session_update="usage_update", used=self._used, size=self._window, cost=cost
            )
        ]


def _progress(
    call_id: str, *, status: CallStatus | None = None, content: list[Content] | None = None
) -> ToolCallProgress:
    return ToolCallProgress(
        session_update="tool_call_update", tool_call_id=call_id, status=status, content=content
    )
