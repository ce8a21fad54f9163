"""What a person reads about how a run goes on: the wording the demo's live view and the REPL
share (a recovery the loop made, a hook that stopped something, a history that was shrunk), so
both say the same thing in the same words; and how a subagent reads (its label, how it ended)
for every printer."""

from __future__ import annotations

from typing import Literal

from msgspec.structs import replace

from stayer.events import (
    Compacted,
    Continue,
    Event,
    Finished,
    HookRan,
    McpServerStatus,
    PermissionRequested,
    SubagentEvent,
    Terminal,
)

RECOVERIES: dict[Continue, str] = {
    Continue.MAX_OUTPUT_TOKENS_ESCALATE: "cut off by the output limit: asking again, allowing more",
    Continue.MAX_OUTPUT_TOKENS_RECOVERY: "cut off by the output limit: asking the model to go on",
    Continue.MALFORMED_TOOL_USE_RETRY: "the reply promised a tool call it never made: asking again",
    Continue.EMPTY_RESPONSE_NUDGE: "the reply was empty: asking the model to go on",
    Continue.EMPTY_RESPONSE_RESEND: "the reply was empty again: sending the request once more",
    Continue.COLLAPSE_DRAIN_RETRY: "the context is too long: clearing old tool output",
    Continue.REACTIVE_COMPACT_RETRY: "the context is too long: summarising the conversation",
    Continue.STOP_HOOK_BLOCKING: "a check before stopping failed: the model goes on",
    Continue.TOKEN_BUDGET_CONTINUATION: "the token budget is not spent: the model goes on",
    Continue.REPEATED_FAILURE_NUDGE: "the same call keeps failing: asking for another approach",
    Continue.TRUNCATED_RESPONSE_RECOVERY: (
        "the stream broke off: keeping the text above, the model goes on"
    ),
    Continue.PROMPT_AS_FILE: "the message is too long to send: saved to a file, sending its start",
    Continue.REFUSAL_RETRY: "the model declined to answer: asking the fallback model",
    Continue.QUEUED_INPUT: "going on with the message queued meanwhile",
    Continue.NEXT_TURN: "",
}
"""What a person watching sees when the loop recovers instead of stopping (nothing for an
ordinary next turn)."""


def hook_line(event: HookRan) -> str:
    """What a person sees of a hook that blocked, failed or timed out."""
    how = {"blocked": "blocked", "error": "failed", "timeout": "timed out"}.get(event.outcome, "")
    said = event.message.strip().replace("\n", " ")
    return f"stayer: {event.hook_name} hook `{event.command}` {how}: {said}"


def compacted_note(event: Compacted) -> str:
    """How the history was shrunk, and what the summariser could not see (one line, no
    newline)."""
    how = {
        "summary": "summarised the conversation",
        "cleared_tool_results": "cleared old tool output",
        "saved_prompt": "saved the long message to a file and sent its beginning",
    }[event.method]
    note = f"{how}: about {event.tokens_before:,} → {event.tokens_after:,} tokens"
    if event.left_out:
        note += f" ({event.left_out:,} oldest messages were too many for the summary to see)"
    if event.reattached:
        note += f"; {', '.join(event.reattached)}"
    return note


def mcp_line(event: McpServerStatus) -> str | None:
    """One line on an MCP server that changed, or None when there is nothing a person needs to
    read (it is starting, or came up as expected)."""
    match event.status:
        case "failed":
            return f"MCP server {event.name} failed: {event.error or 'no reason given'}"
        case "needs-approval":
            where = ".mcp.json" if event.scope == "mcpjson" else "settings"
            return (
                f"MCP server {event.name} (from the project's {where}) was not started: "
                f"approve it with `stayer mcp approve {event.name}`"
            )
        case "connected" | "pending" | "disabled":
            return None


# --- subagents ------------------------------------------------------------------------------

TaskStatus = Literal["completed", "failed", "stopped"]

_STOPPED = frozenset({Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS})


def unwrapped(event: SubagentEvent) -> tuple[SubagentEvent, int]:
    """The innermost wrapper of a nested run's event (whose `event` is the run's own) and how
    deep it is (1: a subagent of the session's own call)."""
    depth = 1
    while isinstance(event.event, SubagentEvent):
        event, depth = event.event, depth + 1
    return event, depth


def question_in(event: Event) -> PermissionRequested | None:
    """The permission question `event` puts, the session's own or a subagent's (wrapped; named
    by its wrapper when it does not name the subagent itself)."""
    if not isinstance(event, SubagentEvent):
        return event if isinstance(event, PermissionRequested) else None
    level = unwrapped(event)[0]
    request = level.event
    if not isinstance(request, PermissionRequested):
        return None
    if request.agent:
        return request
    return replace(request, agent=agent_label(level.agent_type, level.description))


def agent_label(agent_type: str, description: str) -> str:
    """A subagent in a few words: its type, and what it was asked to do."""
    kind = agent_type or "subagent"
    return f"{kind}: {description}" if description.strip() else kind


def task_status(terminal: Terminal) -> TaskStatus:
    """How a subagent's run ended, in Claude Code's task words."""
    if terminal is Terminal.COMPLETED:
        return "completed"
    return "stopped" if terminal in _STOPPED else "failed"


UNFINISHED = "stopped: the run ended before it did"
"""What is said of a background subagent whose end never came (stopped before it started, or
with the run)."""


def subagent_outcome(finished: Finished, tool_calls: int) -> str:
    """How a subagent ended, one line: done or why not, its tool calls, its time."""
    status = task_status(finished.terminal)
    said = {"completed": "done", "stopped": "stopped"}.get(status)
    if said is None:
        said = f"failed ({finished.terminal.value})"
    calls = f"{tool_calls} tool call" + ("" if tool_calls == 1 else "s")
    return f"{said} · {calls} · {finished.duration_ms / 1000:.1f}s"
