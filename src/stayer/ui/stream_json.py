"""Events as Claude Code's stream-json messages, so programs written for it read stayer.

Shapes follow what claude-agent-sdk parses (`system`/`init`, `assistant`, `user`, `stream_event`,
`system`/`api_retry`, `result`); see shared/reference/protocols.md §1.6. Every line stays under
1 MiB, the SDK's default line limit: oversized tool output is cut, with a note saying so.
The `system`/`init` line also says which memory files the system prompt holds (`memory_files`,
in the order read) and what of them was cut or left out (`memory_notes`), and the settings files
applied (`settings_files`) and what of them could not be used (`settings_warnings`): stayer's
own fields, since Claude Code's line has none, and the SDK passes on fields it does not know.
Its `agents`, `skills` and `slash_commands` are names and its `plugins` `{name, path}`, as in
Claude Code's.

Assistant messages are printed as Claude Code prints them: one `assistant` line per content
block, each holding the API message with `content` narrowed to that one block (a message with no
blocks still gets one line, with empty `content`). Claude Code prints each line at the block's
`content_block_stop`; stayer prints them all when the message completes, because a retry can
still withdraw a partial message after some of its blocks were complete (`Withdrawn`), and a
consumer must never be shown blocks the conversation does not hold. An answer the user
interrupts never completes, yet the loop keeps its complete blocks in the conversation: they are
printed (with no stop reason) just before the tool results that close its calls. When a stream
breaks after some text and the loop keeps that text to continue from it (`PartialKept`), the
kept text is printed as that message's lines (with no stop reason), once, before the
`continuing` line; the continuation is a message of its own, printed when it completes. The
blocks of an answer that failed otherwise are not kept, and not printed.

What each line of one message carries, and why:

* `id` and `model` on every line: all lines of a message share its id, as in Claude Code;
* `usage` on every line, the message's final usage: each line is the message, and consumers of
  Claude Code already count usage once per message id, since its lines repeat it too;
* `stop_reason` only on the last line, null before it: Claude Code creates its lines with a null
  stop reason and fills it in later, when `message_delta` arrives, so whether a consumer sees it
  depends on timing; stayer prints the lines once the stop reason is known and puts it on the
  last one, so a non-null stop reason reliably marks the line that ends the message.

With `--include-partial-messages`, every server event the SDK documents is relayed as a
`stream_event` in Anthropic's shape, whichever provider answered: `message_start`,
`content_block_start`, `content_block_delta` (text, input JSON, thinking, and the signature of a
thinking block once the block is complete), `content_block_stop`, `message_delta` and
`message_stop`. `MessageCompleted` is where the server's `message_stop` sits in our events; the
message's `assistant` lines come just before it, so, as with Claude Code, a message's lines are
all out by its `message_stop`. A redacted thinking block is complete at its start (Anthropic
sends its `data` there), so its `content_block_start` waits for the block and carries the data.

A running tool call's live output (`ToolCallProgress`: Bash's lines as they are printed) is a
`tool_progress` line, in the shape of Claude Code's TS SDK message (`tool_use_id`, `tool_name`,
`parent_tool_use_id`, `elapsed_time_seconds` since the call started), plus stayer's own `output`
(the lines, each ending in a newline) and `omitted_lines` (lines left out just before them to
keep the output bounded). Only with `--include-partial-messages`: like `stream_event`, it is
live detail a consumer asks for, and the `user` tool-result line that follows holds the output
that counts. The Python SDK skips a message type it does not know, so its callers see nothing.

A nested run's events (`SubagentEvent`: a subagent a tool call runs) print as that run's own
lines would, made by a writer of its own, each with the call as `parent_tool_use_id` (Claude
Code's field for a subagent's messages) under the parent's session id; its `init` and `result`
are left out, since the call's own result says how it ended; a subagent that runs in the
background has Claude Code's `task_started` and `task_notification` lines instead
(`stream_json_tasks`).

A shrunk history is a `system` line `{"subtype": "compact_boundary", "compact_metadata": ...}`
(Claude Code's shape, with `trigger`, `method`, `pre_tokens` and `post_tokens`). Every way the
loop recovers is a `system` line `{"subtype": "continuing", "reason": ...}` (the
plain `next_turn` after tools is not: the `user` tool-result line already says it), a cut
stream continued from its text (`truncated_response_recovery`) included. An answer recovery
may drop (a cut reply, which may be asked again with a larger limit; an empty one) is withheld
by the loop until it has decided, so its `assistant` lines are printed only if it stays. With
partial messages its stream events are out already, so when it is dropped, a `system` line
`{"subtype": "withdrawn", "message_id": ...}` says they no longer stand; the same line follows
any partial answer a retry replaced (never a kept one: its raw events stand, and its
`assistant` lines say what of it the conversation holds). A switch to a fallback model
(`--fallback-model`) is a `system` line
`{"subtype": "model_fallback", "from_model": ..., "to_model": ..., "reason": ...}`.

With `--include-hook-events` (only then, as in Claude Code), each hook run is a `system`
`hook_started` line and a `hook_response` line (`hook_id`, `hook_name`, `hook_event`, and in
the response `exit_code`, `outcome` (success, error, cancelled for a timeout), `output`,
`stdout`, `stderr`); both come when the run has ended, since the loop reports it then.
With or without that flag, a hook that failed (timed out, exited with a status other than 0
and 2, could not start, or answered JSON that is not usable) is a `system` line
`{"subtype": "hook_failed", "hook_id", "hook_name", "hook_event", "command", "reason",
"exit_code", "error"}`, `reason` being `timeout`, `exit_status`, `not_started` or
`bad_output`: the action the hook guards went on without it, and a program driving stayer
must be able to tell (stayer's own line; Claude Code says so only on its terminal).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal, assert_never

from msgspec import Struct, field

from stayer._version import CLAUDE_CODE_COMPAT_VERSION, __version__
from stayer.events import (
    BlockCompleted,
    BlockStarted,
    Compacted,
    Continue,
    Continuing,
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    MessageStarted,
    ModelSwitched,
    ModelUsage,
    PartialKept,
    PermissionRequested,
    PermissionResolved,
    RequestStarted,
    Retrying,
    SessionStarted,
    StreamEvent,
    SubagentEvent,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolInputDelta,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_to_wire,
    message_to_wire,
    usage_to_wire,
)
from stayer.providers.base import MessageAssembler
from stayer.tools.names import STRUCTURED_OUTPUT

MAX_LINE_BYTES = 1_000_000
"""A little under claude-agent-sdk's 1 MiB default buffer."""

Line = dict[str, Any]


def result_subtype(terminal: Terminal) -> str:
    """The `result` subtype for a terminal reason."""
    match terminal:
        case Terminal.COMPLETED:
            return "success"
        case Terminal.MAX_TURNS:
            return "error_max_turns"
        case Terminal.BUDGET_EXHAUSTED:
            return "error_max_budget_usd"
        case (
            Terminal.MODEL_ERROR
            | Terminal.PROMPT_TOO_LONG
            | Terminal.ABORTED_STREAMING
            | Terminal.ABORTED_TOOLS
            | Terminal.IMAGE_ERROR
            | Terminal.HOOK_STOPPED
            | Terminal.STOP_HOOK_PREVENTED
            | Terminal.BLOCKING_LIMIT
            | Terminal.MAX_OUTPUT_TOKENS
            | Terminal.MALFORMED_TOOL_USE_EXHAUSTED
            | Terminal.EMPTY_RESPONSE
            | Terminal.DONE_CHECK_FAILED
            | Terminal.REPEATED_FAILURE
            | Terminal.RAPID_REFILL
            | Terminal.REFUSAL
        ):
            return "error_during_execution"
        case _:
            assert_never(terminal)


def _compact_metadata(event: Compacted) -> dict[str, Any]:
    """Claude Code's `compact_metadata`, with what the summariser could not see and the files
    (or the saved prompt) shown again."""
    metadata: dict[str, Any] = {
        "trigger": event.trigger,
        "method": event.method,
        "pre_tokens": event.tokens_before,
        "post_tokens": event.tokens_after,
    }
    if event.left_out:
        metadata["left_out_messages"] = event.left_out
    if event.reattached:
        metadata["reattached"] = list(event.reattached)
    return metadata


class StreamJsonWriter(Struct):
    """Turns events into stream-json lines (dicts); keeps the session id and model."""

    include_partial: bool = False
    api_key_source: str = "none"
    include_hooks: bool = False
    session_id: str = ""
    model: str = ""
    _streaming: MessageAssembler | None = None
    """The response streaming now, until it completes or is withdrawn."""
    _printed: set[str] = field(default_factory=set[str])
    """Messages whose assistant lines are out: withdrawing one later must be said."""
    clock: Callable[[], float] = time.monotonic
    _running: dict[str, tuple[str, float]] = field(default_factory=dict[str, tuple[str, float]])
    """The tool calls running now: their names and when they started (by `clock`)."""
    _nested: dict[str, StreamJsonWriter] = field(default_factory=dict[str, "StreamJsonWriter"])
    """A writer for each nested run going on, by the tool call that runs it."""
    session_dir: str = ""
    """The session's folder, where a subagent's transcript (a task's `output_file`) goes."""
    tool_uses: int = 0
    """Tool calls this writer's run has made (a background task's `usage` counts them)."""
    _tasks: dict[str, SubagentEvent] = field(default_factory=dict[str, SubagentEvent])
    """Background tasks announced and not yet closed, by the call that started each."""
    _answer_calls: dict[str, Any] = field(default_factory=dict[str, Any])
    """The run's StructuredOutput calls (`--json-schema`) by id, until their results come."""
    _answer: Any = None
    """The run's last accepted StructuredOutput answer: the result's `structured_output`."""
    _settled: tuple[Finished, Any] | None = None
    """The last run's end and its answer (its result line may be asked for again)."""

    def lines(self, event: Event) -> list[Line]:
        """The lines one event produces (often none)."""
        if isinstance(event, StreamEvent):
            return self._stream_lines(event)
        match event:
            case SessionStarted():
                self.session_id, self.model = event.session_id, event.model
                return [self._init(event)]
            case ToolResultsAppended():
                self._running.clear()  # every call of the round has its result now
                return [*self._interrupted_answer(), *self._tool_results(event)]
            case PartialKept():
                self._streaming = None  # the lines below are all of it the conversation holds
                return self._assistant(event.message)
            case Retrying() | Withdrawn() | Compacted() | ModelSwitched() | Continuing():
                return self._system_lines(event)
            case Finished():
                self._streaming = None  # a failed answer is not in the conversation
                self._settled, self._answer = (event, self._answer), None
                self._answer_calls.clear()
                return [*self._unfinished_tasks(), self.result(event)]
            case ToolCallStarted() | ToolCallProgress() | ToolCallFinished():
                return self._tool_call_lines(event)
            case SubagentEvent():
                return self._nested_lines(event)
            case RequestStarted() | PermissionRequested() | PermissionResolved():
                # Claude Code's stream-json has no line for these: its prompts are control
                # requests (`can_use_tool`) under --permission-prompt-tool stdio.
                return []
            case HookRan():
                lines = self._hook_lines(event) if self.include_hooks else []
                return [*lines, *hook_failed_lines(event, self._frame)]
            case McpServerStatus():
                return [self._frame("system", subtype="mcp_server_status", **mcp_entry(event))]
            case _:
                assert_never(event)

    def _nested_lines(self, wrapped: SubagentEvent) -> list[Line]:
        """A nested run's lines, as its own writer makes them, each carrying the call that
        runs it as `parent_tool_use_id` (Claude Code's field for a subagent's messages; a line
        of a run nested deeper keeps its own). Its start and its end are no lines of their
        own: the call's result, in the run around it, says how it ended."""
        # loaded when a run first nests another: a plain run starts without it
        from .stream_json_tasks import TASK_SUBTYPES, task_notification, task_started

        parent = wrapped.parent_tool_use_id
        inner = wrapped.event
        if isinstance(inner, SessionStarted):
            if not wrapped.background:
                return []
            self._tasks[parent] = wrapped
            return [task_started(wrapped, self._frame)]
        if isinstance(inner, Finished):
            ended = self._nested.pop(parent, None)
            left = ended._unfinished_tasks() if ended is not None else []
            if self._tasks.pop(parent, None) is None:
                return left
            tool_uses = ended.tool_uses if ended is not None else 0
            closed = task_notification(
                wrapped, inner, tool_uses=tool_uses, session_dir=self.session_dir, frame=self._frame
            )
            return [*left, closed]
        writer = self._nested.get(parent)
        if writer is None:
            writer = StreamJsonWriter(
                include_partial=self.include_partial,
                api_key_source=self.api_key_source,
                include_hooks=self.include_hooks,
                session_id=self.session_id,
                model=self.model,
                clock=self.clock,
                session_dir=self.session_dir,
            )
            self._nested[parent] = writer
        return [
            line
            if line.get("parent_tool_use_id") or line.get("subtype") in TASK_SUBTYPES
            else {**line, "parent_tool_use_id": parent}
            for line in writer.lines(inner)
        ]

    def _unfinished_tasks(self) -> list[Line]:
        """The run ends: a `task_notification` (stopped) for each background task whose end
        never came, so no caller waits for it."""
        from .stream_json_tasks import task_unfinished

        tasks, self._tasks = self._tasks, {}
        lines: list[Line] = []
        for parent, started in tasks.items():
            writer = self._nested.pop(parent, None)
            tool_uses = writer.tool_uses if writer is not None else 0
            lines.append(task_unfinished(started, tool_uses, self.session_dir, self._frame))
        return lines

    def _hook_lines(self, event: HookRan) -> list[Line]:
        """Claude Code's two lines for one hook run."""
        names = {
            "hook_id": event.hook_id,
            "hook_name": event.hook_name,
            "hook_event": event.hook_event,
        }
        outcome = {"success": "success", "timeout": "cancelled"}.get(event.outcome, "error")
        return [
            self._frame("system", subtype="hook_started", **names),
            self._frame(
                "system",
                subtype="hook_response",
                **names,
                output=event.message or event.stdout,
                stdout=event.stdout,
                stderr=event.stderr,
                exit_code=event.exit_code,
                outcome=outcome,
            ),
        ]

    def _system_lines(
        self, event: Retrying | Withdrawn | Compacted | ModelSwitched | Continuing
    ) -> list[Line]:
        """The `system` lines of what happened around the answers."""
        match event:
            case Retrying():
                return [self._retry(event)]
            case Withdrawn():
                self._streaming = None
                if not (self.include_partial or event.message_id in self._printed):
                    return []  # nothing of the withdrawn message was printed
                line = self._frame("system", subtype="withdrawn", message_id=event.message_id)
                return [{**line, "reason": event.reason}]
            case Compacted():
                metadata = _compact_metadata(event)
                return [
                    self._frame("system", subtype="compact_boundary", compact_metadata=metadata)
                ]
            case ModelSwitched():
                return [self._model_fallback(event)]
            case Continuing(reason=Continue.NEXT_TURN):
                return []  # the user tool-result line already says it
            case Continuing(reason=reason):
                return [self._frame("system", subtype="continuing", reason=reason.value)]
            case _:
                assert_never(event)

    def _tool_call_lines(
        self, event: ToolCallStarted | ToolCallProgress | ToolCallFinished
    ) -> list[Line]:
        """Calls show as assistant and user lines; with partial messages, what a running call
        prints is a `tool_progress` line too (see the module docstring)."""
        match event:
            case ToolCallStarted(tool_use_id=tool_use_id, name=name):
                self._running[tool_use_id] = (name, self.clock())
                self.tool_uses += 1
                return []
            case ToolCallFinished(tool_use_id=tool_use_id):
                self._running.pop(tool_use_id, None)
                return []
            case ToolCallProgress():
                return [self._tool_progress(event)] if self.include_partial else []
            case _:
                assert_never(event)

    def _tool_progress(self, event: ToolCallProgress) -> Line:
        name, started = self._running.get(event.tool_use_id, ("", self.clock()))
        return self._frame(
            "tool_progress",
            tool_use_id=event.tool_use_id,
            tool_name=name,
            parent_tool_use_id=None,
            elapsed_time_seconds=round(self.clock() - started, 3),
            output=event.text,
            omitted_lines=event.omitted_lines,
        )

    def _stream_lines(self, event: StreamEvent) -> list[Line]:
        lines: list[Line] = []
        if isinstance(event, MessageCompleted):
            self._streaming = None
            lines = self._assistant(event.message)
        else:
            if isinstance(event, MessageStarted):
                self._streaming = MessageAssembler()
            if self._streaming is not None:
                self._streaming.feed(event)
        if self.include_partial:
            lines.extend(self._frame("stream_event", event=raw) for raw in anthropic_events(event))
        return lines

    def _assistant(self, message: AssistantMessage) -> list[Line]:
        self._printed.add(message.id)
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name == STRUCTURED_OUTPUT:
                self._answer_calls[block.id] = block.input
        return [self._frame("assistant", message=wire) for wire in per_block(message)]

    def _interrupted_answer(self) -> list[Line]:
        """The complete blocks of an answer the user interrupted: the loop keeps them in the
        conversation, and the tool results about to be printed answer its tool calls.
        """
        streaming, self._streaming = self._streaming, None
        if streaming is None or not streaming.blocks:
            return []
        return self._assistant(streaming.message())

    def result(self, event: Finished) -> Line:
        """The closing `result` line of this run; a run that gave the answer `--json-schema`
        asks for carries it as `structured_output`."""
        line = result_line(event, self.session_id)
        settled = self._settled
        answer = settled[1] if settled is not None and settled[0] is event else self._answer
        if answer is not None and line["subtype"] == "success":
            line["structured_output"] = answer
        return line

    def _frame(self, kind: str, **fields: Any) -> Line:
        frame: Line = {"type": kind, **fields}
        if kind in ("assistant", "user", "stream_event"):
            frame["parent_tool_use_id"] = None
        frame["session_id"] = self.session_id
        frame["uuid"] = str(uuid.uuid4())
        return frame

    def _init(self, event: SessionStarted) -> Line:
        return self._frame(
            "system",
            subtype="init",
            cwd=event.cwd,
            tools=list(event.tools),
            mcp_servers=[mcp_entry(server) for server in event.mcp_servers],
            tool_tokens=event.tool_tokens,
            model=event.model,
            permissionMode=event.permission_mode,
            slash_commands=list(event.slash_commands),
            apiKeySource=self.api_key_source,
            claude_code_version=CLAUDE_CODE_COMPAT_VERSION,
            stayer_version=__version__,
            output_style="default",
            agents=list(event.agents),
            skills=list(event.skills),
            plugins=[
                {"name": name, "path": path}
                for name, path in zip(event.plugins, event.plugin_roots, strict=False)
            ],
            memory_files=list(event.memory_files),
            memory_notes=list(event.memory_notes),
            settings_files=list(event.settings_files),
            settings_warnings=list(event.settings_warnings),
        )

    def _tool_results(self, event: ToolResultsAppended) -> list[Line]:
        frames: list[Line] = []
        results = [b for b in event.message.content if isinstance(b, ToolResultBlock)]
        for index, block in enumerate(results):
            given = self._answer_calls.pop(block.tool_use_id, None)
            if given is not None and not block.is_error:
                self._answer = given
            message = {"role": "user", "content": [block_to_wire(block)]}
            data = event.data[index] if index < len(event.data) else {}
            frames.append(self._frame("user", message=message, tool_use_result=data))
        others = [b for b in event.message.content if not isinstance(b, ToolResultBlock)]
        if others:
            message = {"role": "user", "content": [block_to_wire(b) for b in others]}
            frames.append(self._frame("user", message=message))
        return frames

    def _model_fallback(self, event: ModelSwitched) -> Line:
        return self._frame(
            "system",
            subtype="model_fallback",
            from_model=event.from_model,
            to_model=event.to_model,
            reason=event.reason,
        )

    def _retry(self, event: Retrying) -> Line:
        return self._frame(
            "system",
            subtype="api_retry",
            attempt=event.attempt,
            max_retries=event.max_retries,
            retry_delay_ms=round(event.delay_s * 1000),
            error_status=event.status,
            error=event.error,
        )


def result_line(event: Finished, session_id: str) -> Line:
    """The closing `result` message."""
    subtype = result_subtype(event.terminal)
    line: Line = {
        "type": "result",
        "subtype": subtype,
        "is_error": event.is_error,
        "duration_ms": round(event.duration_ms),
        "duration_api_ms": round(event.duration_api_ms),
        "num_turns": event.num_turns,
        "result": event.result_text if subtype == "success" else event.message,
        "stop_reason": event.stop_reason,
        "terminal_reason": event.terminal.value,
        "session_id": session_id,
        "total_cost_usd": event.cost_usd,
        "usage": usage_to_wire(event.usage),
        "modelUsage": model_usage(event.model_usage),
        "permission_denials": [
            {"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}
            for d in event.permission_denials
        ],
        "uuid": str(uuid.uuid4()),
    }
    if event.is_error:
        line["errors"] = [event.message]
    if event.error_status is not None:
        line["api_error_status"] = event.error_status
    return line


def model_usage(entries: Sequence[ModelUsage]) -> dict[str, Any]:
    """`modelUsage`: one entry per model that served the run, in Claude Code's field names."""
    return {
        entry.model: {
            "inputTokens": entry.usage.input_tokens,
            "outputTokens": entry.usage.output_tokens,
            "cacheReadInputTokens": entry.usage.cache_read_input_tokens,
            "cacheCreationInputTokens": entry.usage.cache_creation_input_tokens,
            "webSearchRequests": 0,
            "costUSD": entry.cost_usd,
            "contextWindow": entry.context_window,
            "maxOutputTokens": entry.max_output_tokens,
        }
        for entry in entries
    }


HookFailure = Literal["timeout", "exit_status", "not_started", "bad_output"]


def hook_failure(event: HookRan) -> HookFailure | None:
    """How a hook run failed (a guard that did not run as written), or None if it did not."""
    if event.outcome == "timeout":
        return "timeout"
    if event.outcome != "error":
        return None  # success, or a block: the hook ran and said its word
    if event.exit_code is None:
        return "not_started"
    return "bad_output" if event.exit_code == 0 else "exit_status"


def hook_failed_lines(event: HookRan, frame: Callable[..., Line]) -> list[Line]:
    """A `system`/`hook_failed` line for a hook that timed out, crashed, exited with a status
    other than 0 and 2, could not start or answered JSON that is not usable; none otherwise.
    Printed with or without `--include-hook-events`: a program driving stayer must learn that
    a guard it relies on did not run."""
    reason = hook_failure(event)
    if reason is None:
        return []
    return [
        frame(
            "system",
            subtype="hook_failed",
            hook_id=event.hook_id,
            hook_name=event.hook_name,
            hook_event=event.hook_event,
            command=event.command,
            reason=reason,
            exit_code=event.exit_code,
            error=event.message,
        )
    ]


def per_block(message: AssistantMessage) -> list[dict[str, Any]]:
    """The message once per content block, as Claude Code prints it (see the module docstring)."""
    wire = message_to_wire(message)
    blocks: list[Any] = wire["content"]
    if not blocks:
        return [wire]  # the model said nothing: still one valid message
    last = len(blocks) - 1
    return [
        {**wire, "content": [block], "stop_reason": wire["stop_reason"] if i == last else None}
        for i, block in enumerate(blocks)
    ]


def anthropic_events(event: StreamEvent) -> list[dict[str, Any]]:
    """The raw Anthropic server events one stream event stands for (what `stream_event` lines
    carry), in the order the server sends them.
    """
    match event:
        case MessageStarted(message_id=message_id, model=model, usage=usage):
            message: dict[str, Any] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage_to_wire(usage),
            }
            return [{"type": "message_start", "message": message}]
        case BlockStarted(block_type="redacted_thinking"):
            return []  # its start carries its data, known when the block completes
        case BlockStarted(index=index, block_type=kind, tool_use_id=tool_id, name=name):
            return [_block_start(index, _empty(kind, tool_id, name))]
        case TextDelta(index=index, text=text):
            return [_delta(index, {"type": "text_delta", "text": text})]
        case ThinkingDelta(index=index, thinking=thinking):
            return [_delta(index, {"type": "thinking_delta", "thinking": thinking})]
        case ToolInputDelta(index=index, partial_json=partial):
            return [_delta(index, {"type": "input_json_delta", "partial_json": partial})]
        case BlockCompleted():
            return _block_end(event)
        case MessageDelta(stop_reason=stop_reason, usage=usage):
            delta = {"stop_reason": stop_reason, "stop_sequence": None}
            return [{"type": "message_delta", "delta": delta, "usage": usage_to_wire(usage)}]
        case MessageCompleted():
            return [{"type": "message_stop"}]
        case _:
            assert_never(event)


def _block_end(event: BlockCompleted) -> list[dict[str, Any]]:
    stop = {"type": "content_block_stop", "index": event.index}
    match event.block:
        case ThinkingBlock(signature=signature):
            signed = _delta(event.index, {"type": "signature_delta", "signature": signature})
            return [signed, stop]
        case RedactedThinkingBlock():
            return [_block_start(event.index, block_to_wire(event.block)), stop]
        case _:
            return [stop]


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _empty(kind: str, tool_id: str, name: str) -> dict[str, Any]:
    if kind == "tool_use":
        return block_to_wire(ToolUseBlock(tool_id, name, {}))
    if kind == "thinking":
        return block_to_wire(ThinkingBlock("", ""))
    if kind == "text":
        return block_to_wire(TextBlock(""))
    return {"type": kind}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def dumps(line: Line) -> str:
    """One line of JSON, cut to fit the SDK's line limit when a tool's output is huge."""
    text = _compact(line)
    if len(text) * 4 <= MAX_LINE_BYTES:  # no UTF-8 character takes more than 4 bytes
        return text
    limit = 20_000
    while len(text.encode()) > MAX_LINE_BYTES and limit >= 100:
        text = _compact(_shrink(line, limit))
        limit //= 4
    return text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shrink(value: Any, limit: int) -> Any:
    """Every string cut to about `limit` characters and every list to `limit // 20` items."""
    if isinstance(value, dict):
        return {key: _shrink(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        keep = max(1, limit // 20)
        items = [_shrink(item, limit) for item in value[:keep]]
        if len(value) > keep:
            items.append(f"[... {len(value) - keep} more items cut to fit the output line limit]")
        return items
    if isinstance(value, str) and len(value) > limit:
        cut = len(value) - limit
        return value[:limit] + f"\n[... {cut} characters cut to fit the output line limit]"
    return value


def mcp_entry(server: McpServerStatus) -> Line:
    """An MCP server in the init line's `mcp_servers` (Claude Code's `name` and `status`), with
    why it failed and how many tools it offers."""
    entry: Line = {"name": server.name, "status": server.status}
    if server.error is not None:
        entry["error"] = server.error
    if server.status == "connected":
        entry["tools"] = server.tools
    if server.scope:
        entry["scope"] = server.scope
    return entry
