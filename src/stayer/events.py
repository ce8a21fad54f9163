"""What flows out: the events a model stream produces and the events the loop yields.

Two families share this module because the loop re-yields stream events as they arrive:

* stream events (`MessageStarted` … `MessageCompleted`) are what every provider's `stream()`
  produces, already normalised; the last one, `MessageCompleted`, carries the whole assembled
  `AssistantMessage`;
* loop events (`RequestStarted` … `Finished`) are what `query()` adds around them.

`Terminal` names every way a run can end (SPEC §2) and `Continue` every way the loop may go
round again (SPEC §3). `Finished` is always the last event of a run, exactly once.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, TypeAlias

from msgspec import Struct, field

from stayer.messages import (
    JSON,
    AssistantMessage,
    ContentBlock,
    Message,
    ModelSpend,
    StopReason,
    ToolResultBlock,
    Usage,
    UserMessage,
)


class Terminal(StrEnum):
    """Why a run ended (SPEC §2)."""

    COMPLETED = "completed"
    MODEL_ERROR = "model_error"
    PROMPT_TOO_LONG = "prompt_too_long"
    ABORTED_STREAMING = "aborted_streaming"
    ABORTED_TOOLS = "aborted_tools"
    MAX_TURNS = "max_turns"
    IMAGE_ERROR = "image_error"
    HOOK_STOPPED = "hook_stopped"
    STOP_HOOK_PREVENTED = "stop_hook_prevented"
    BLOCKING_LIMIT = "blocking_limit"
    MAX_OUTPUT_TOKENS = "max_output_tokens"
    MALFORMED_TOOL_USE_EXHAUSTED = "malformed_tool_use_exhausted"
    EMPTY_RESPONSE = "empty_response"
    DONE_CHECK_FAILED = "done_check_failed"
    BUDGET_EXHAUSTED = "budget_exhausted"
    REPEATED_FAILURE = "repeated_failure"
    RAPID_REFILL = "rapid_refill_breaker"
    REFUSAL = "refusal"


class Continue(StrEnum):
    """Why the loop went round again (SPEC §3), or a model call went on from a cut stream."""

    NEXT_TURN = "next_turn"
    COLLAPSE_DRAIN_RETRY = "collapse_drain_retry"
    REACTIVE_COMPACT_RETRY = "reactive_compact_retry"
    MAX_OUTPUT_TOKENS_ESCALATE = "max_output_tokens_escalate"
    MAX_OUTPUT_TOKENS_RECOVERY = "max_output_tokens_recovery"
    STOP_HOOK_BLOCKING = "stop_hook_blocking"
    TOKEN_BUDGET_CONTINUATION = "token_budget_continuation"
    MALFORMED_TOOL_USE_RETRY = "malformed_tool_use_retry"
    EMPTY_RESPONSE_NUDGE = "empty_response_nudge"
    EMPTY_RESPONSE_RESEND = "empty_response_resend"
    REPEATED_FAILURE_NUDGE = "repeated_failure_nudge"
    TRUNCATED_RESPONSE_RECOVERY = "truncated_response_recovery"
    PROMPT_AS_FILE = "prompt_as_file"
    REFUSAL_RETRY = "refusal_retry"
    QUEUED_INPUT = "queued_input"


# --- stream events: produced by providers, re-yielded by the loop ----------------------------


class MessageStarted(Struct, frozen=True):
    """A model response began."""

    message_id: str
    model: str
    usage: Usage
    type: Literal["message_started"] = "message_started"


class BlockStarted(Struct, frozen=True):
    """Content block `index` began; for tool_use blocks `tool_use_id` and `name` are known."""

    index: int
    block_type: str
    tool_use_id: str = ""
    name: str = ""
    type: Literal["block_started"] = "block_started"


class TextDelta(Struct, frozen=True):
    """More visible text for block `index`."""

    index: int
    text: str
    type: Literal["text_delta"] = "text_delta"


class ThinkingDelta(Struct, frozen=True):
    """More reasoning text for block `index`."""

    index: int
    thinking: str
    type: Literal["thinking_delta"] = "thinking_delta"


class ToolInputDelta(Struct, frozen=True):
    """A fragment of a tool call's JSON input, as streamed."""

    index: int
    partial_json: str
    type: Literal["tool_input_delta"] = "tool_input_delta"


class BlockCompleted(Struct, frozen=True):
    """Content block `index` is complete; a tool_use block here means a tool will run."""

    index: int
    block: ContentBlock
    type: Literal["block_completed"] = "block_completed"


class MessageDelta(Struct, frozen=True):
    """The response's stop reason and cumulative usage so far."""

    stop_reason: StopReason | None
    usage: Usage
    type: Literal["message_delta"] = "message_delta"


class MessageCompleted(Struct, frozen=True):
    """The whole response, assembled; always the last event of a provider stream."""

    message: AssistantMessage
    type: Literal["message_completed"] = "message_completed"


StreamEvent: TypeAlias = (
    MessageStarted
    | BlockStarted
    | TextDelta
    | ThinkingDelta
    | ToolInputDelta
    | BlockCompleted
    | MessageDelta
    | MessageCompleted
)


# --- loop events ------------------------------------------------------------------------------

ToolStatus: TypeAlias = Literal["completed", "failed", "denied"]


McpState = Literal["connected", "failed", "pending", "needs-approval", "disabled"]
"""Where an MCP server stands: its tools are offered (connected), it could not start or died
for good (failed, with why), it is still starting or restarting (pending), it is a project's
server nobody approved and was not started (needs-approval), or settings turned it off."""


class McpServerStatus(Struct, frozen=True):
    """Where one MCP server stands: in the init line for every server, and as an event each
    time it changes while the session runs. `error` says in one line why it failed;
    `tools` is how many tools it offers while connected."""

    name: str
    status: McpState
    error: str | None = None
    tools: int = 0
    scope: str = ""
    """Where it was configured: `flag`, `user`, `project`, `local` or `mcpjson`."""
    type: Literal["mcp_server_status"] = "mcp_server_status"


class SessionStarted(Struct, frozen=True):
    """A run began: who answers, with which tools, where, under which permission mode.

    `memory_files` are the memory files (STAYER.md, AGENTS.md, CLAUDE.md and what they import)
    in the system prompt, in the order read; `memory_notes` say, one line each, what was cut
    short or left out and why. `settings_files` are the settings files applied, in order
    (`--settings` last); `settings_warnings` say, one line each, what of them could not be used.
    """

    session_id: str
    model: str
    provider: str
    tools: tuple[str, ...]
    cwd: str
    permission_mode: str
    context_window: int = 0
    max_output_tokens: int = 0
    memory_files: tuple[str, ...] = ()
    memory_notes: tuple[str, ...] = ()
    settings_files: tuple[str, ...] = ()
    settings_warnings: tuple[str, ...] = ()
    mcp_servers: tuple[McpServerStatus, ...] = ()
    """Every MCP server configured, as it stood when the session started (most are still
    `pending`: no model call waits for them unless asked to)."""
    tool_tokens: int = 0
    """About how many tokens the tool definitions sent with each request cost."""
    agents: tuple[str, ...] = ()
    """The agent types a subagent may be started as."""
    skills: tuple[str, ...] = ()
    """The skills the model may load (the Skill tool)."""
    slash_commands: tuple[str, ...] = ()
    """The commands a prompt may start with (`/name args`): custom commands and the skills a
    user may invoke."""
    plugins: tuple[str, ...] = ()
    """The plugins loaded, by name."""
    plugin_roots: tuple[str, ...] = ()
    """Each plugin's folder, in `plugins`' order (Claude Code's init line names both)."""
    agent: str | None = None
    """The agent the session runs as (`--agent`), if any."""
    type: Literal["session_started"] = "session_started"


class RequestStarted(Struct, frozen=True):
    """The loop is about to call the model for turn `turn` (1-based)."""

    turn: int
    type: Literal["request_started"] = "request_started"


class Retrying(Struct, frozen=True):
    """A model call failed in a way worth retrying; the loop waits `delay_s` and tries again."""

    attempt: int
    max_retries: int
    delay_s: float
    error: str
    status: int | None
    type: Literal["retrying"] = "retrying"


class Withdrawn(Struct, frozen=True):
    """A partial response was abandoned (the stream broke); its blocks are void."""

    message_id: str
    reason: str
    type: Literal["withdrawn"] = "withdrawn"


class PartialKept(Struct, frozen=True):
    """A stream broke after some output; what of it the conversation keeps (`message`) stays,
    and the model is asked to go on from where it stops (`truncated_response_recovery`): the
    text exactly as it streamed, or the answer up to the last tool call that had started (the
    calls that ran are answered first)."""

    message: AssistantMessage
    reason: str
    type: Literal["partial_kept"] = "partial_kept"


class ModelSwitched(Struct, frozen=True):
    """The model serving the run changed (`--fallback-model`): the request goes again to
    `to_model`, which serves the rest of the run; `reason` says why, in one line."""

    from_model: str
    to_model: str
    reason: str
    type: Literal["model_switched"] = "model_switched"


class ToolCallStarted(Struct, frozen=True):
    """A tool call began running."""

    tool_use_id: str
    name: str
    input: dict[str, JSON]
    type: Literal["tool_call_started"] = "tool_call_started"


class ToolCallProgress(Struct, frozen=True):
    """Live output from a running tool call, for watching only (the result is what counts).

    `omitted_lines` is how many lines the tool printed just before `text` and left out, to keep
    its live output bounded (Bash sends a few batches of lines a second, however much it prints).
    """

    tool_use_id: str
    text: str
    omitted_lines: int = 0
    type: Literal["tool_call_progress"] = "tool_call_progress"


class SubagentEvent(Struct, frozen=True):
    """An event of a nested run (a subagent a tool call started), wrapped: `event` is the
    nested run's own, `parent_tool_use_id` the call that runs it. Nested runs nest again."""

    parent_tool_use_id: str
    event: Event
    agent_id: str = ""
    """The nested run's session id (its transcript is `subagents/agent-<agent_id>.jsonl`)."""
    agent_type: str = ""
    """Which agent runs it (`general-purpose`, `Explore`, a custom agent's name)."""
    description: str = ""
    """The few words the call that started it gave (what a live view shows)."""
    background: bool = False
    """Whether the nested run goes on in the background (its call returned at once)."""
    type: Literal["subagent_event"] = "subagent_event"


ToolReport: TypeAlias = ToolCallProgress | SubagentEvent
"""What a running tool may report through `ToolContext.emit`: its live output, or the events
of a run it started."""


class ToolCallFinished(Struct, frozen=True):
    """A tool call ended; `result` is exactly what the model will see."""

    tool_use_id: str
    name: str
    status: ToolStatus
    result: ToolResultBlock
    duration_ms: float
    data: dict[str, JSON] = field(default_factory=dict[str, JSON])
    spent: tuple[ModelSpend, ...] = ()
    """Model calls the tool made of its own (see `ToolOutput.spent`), billed to the run."""
    followup: str = ""
    """Text the model reads after the round's results (see `ToolOutput.followup`)."""
    type: Literal["tool_call_finished"] = "tool_call_finished"


class PermissionRequested(Struct, frozen=True):
    """A tool call needs someone's approval before it may run; the run waits for the answer
    (`PermissionResolved`) while the model's answer goes on streaming.

    `reason` says why it asks (and is what the model reads if nobody answers), `rule` names the
    ask rule behind it if one is, `suggestions` are rules that would allow such calls, and
    `mode` is the permission mode the session switches to if the call is allowed (accepting a
    plan leaves plan mode)."""

    tool_use_id: str
    name: str
    input: dict[str, JSON]
    reason: str
    rule: str | None = None
    suggestions: tuple[str, ...] = ()
    mode: str | None = None
    agent: str = ""
    """Who asks when it is a subagent, in a few words (`Explore: find the config loader`);
    "" for the session's own calls. The question goes to the top-level session's decider."""
    type: Literal["permission_requested"] = "permission_requested"


class PermissionResolved(Struct, frozen=True):
    """The answer to a `PermissionRequested`: allowed or denied, by whom, with the input the
    call runs with when the answer changed it, and the mode the session switched to, if any."""

    tool_use_id: str
    name: str
    behavior: Literal["allow", "deny"]
    by: str
    message: str = ""
    updated_input: dict[str, JSON] | None = None
    mode: str | None = None
    type: Literal["permission_resolved"] = "permission_resolved"


class ToolResultsAppended(Struct, frozen=True):
    """The user message of tool results, one per tool_use in order, now in the conversation."""

    message: UserMessage
    data: tuple[dict[str, JSON], ...] = ()
    type: Literal["tool_results_appended"] = "tool_results_appended"


class Continuing(Struct, frozen=True):
    """The loop goes round again, for `reason`."""

    reason: Continue
    type: Literal["continuing"] = "continuing"


class Compacted(Struct, frozen=True):
    """The history was shrunk to fit the window: old tool output cleared, the history
    replaced by the model's summary, or a prompt too long to send saved to a file and sent as
    its head. `trigger` is ``auto`` (before a call, at the threshold), ``reactive`` (the API
    refused the prompt as too long) or ``manual`` (the user asked: `Session.compact`)."""

    trigger: Literal["auto", "reactive", "manual"]
    method: Literal["cleared_tool_results", "summary", "saved_prompt"]
    tokens_before: int
    tokens_after: int
    left_out: int = 0
    """Oldest messages the summariser was not shown, to fit its own window."""
    reattached: tuple[str, ...] = ()
    """Files shown again after the summary, as they are now (or the saved prompt's path)."""
    type: Literal["compacted"] = "compacted"


HookOutcome = Literal["success", "blocked", "error", "timeout"]
"""How one hook run ended: fine (exit 0), blocking (exit 2 or `decision: block`), a
non-blocking failure (another exit status, a program that could not start, JSON it could not
mean), or killed for taking too long."""


class HookRan(Struct, frozen=True):
    """One hook command ran for a lifecycle event (settings `hooks`), and how it went.

    `message` is what it said that counts: the stderr of a blocking or failed run, the reason
    it gave, or what was wrong with its output."""

    hook_id: str
    hook_event: str
    hook_name: str
    """The event and what it matched, as Claude Code names it (`PreToolUse:Bash`)."""
    command: str
    exit_code: int | None
    duration_ms: float
    outcome: HookOutcome
    message: str = ""
    stdout: str = ""
    stderr: str = ""
    type: Literal["hook_ran"] = "hook_ran"


class PermissionDenial(Struct, frozen=True):
    """A tool call the permission policy refused during the run."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, JSON]


class ModelUsage(Struct, frozen=True):
    """What one model served of a run: its tokens, what they cost, and its limits (one entry of
    the result's `modelUsage`). `model` is the id as shown, `[1m]` included."""

    model: str
    usage: Usage
    cost_usd: float
    context_window: int
    max_output_tokens: int


class Finished(Struct, frozen=True):
    """The run ended. Always the last event, exactly once."""

    terminal: Terminal
    message: str
    num_turns: int
    usage: Usage
    cost_usd: float
    result_text: str
    stop_reason: StopReason | None
    duration_ms: float
    duration_api_ms: float
    error_status: int | None = None
    permission_denials: tuple[PermissionDenial, ...] = ()
    model_usage: tuple[ModelUsage, ...] = ()
    """Usage and cost per model that served the run, in the order they first served; the
    costs add up to `cost_usd` and the usages to `usage`."""
    messages: tuple[Message, ...] = ()
    """The whole conversation at the end, every tool_use answered (for continuing it). Left out
    of equality, hashing and repr: two runs that end alike are equal, and a repr stays short."""
    type: Literal["finished"] = "finished"

    @property
    def is_error(self) -> bool:
        """True unless the model chose to stop."""
        return self.terminal is not Terminal.COMPLETED

    def _outcome(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__struct_fields__ if name != "messages")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Finished:
            return NotImplemented
        return self._outcome() == other._outcome()

    def __hash__(self) -> int:
        return hash(self._outcome())

    def __repr__(self) -> str:
        fields = self.__struct_fields__
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in fields if name != "messages"
        )
        return f"Finished({shown})"

    @classmethod
    def without_a_call(
        cls, terminal: Terminal, message: str, messages: tuple[Message, ...]
    ) -> Finished:
        """The end of a run that made no model call (a prompt a hook kept out, a run a fault
        of stayer's stopped): nothing used, the conversation `messages` as it stands."""
        return cls(
            terminal=terminal,
            message=message,
            num_turns=0,
            usage=Usage(),
            cost_usd=0.0,
            result_text="",
            stop_reason=None,
            duration_ms=0.0,
            duration_api_ms=0.0,
            messages=messages,
        )


LoopEvent: TypeAlias = (
    SessionStarted
    | RequestStarted
    | Retrying
    | Withdrawn
    | PartialKept
    | ModelSwitched
    | ToolCallStarted
    | ToolCallProgress
    | SubagentEvent
    | ToolCallFinished
    | PermissionRequested
    | PermissionResolved
    | ToolResultsAppended
    | Continuing
    | Compacted
    | HookRan
    | McpServerStatus
    | Finished
)

Event: TypeAlias = StreamEvent | LoopEvent
"""Everything `query()` yields."""
