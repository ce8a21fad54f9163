"""The Agent tool: the model hands a task to a subagent and reads back only its final report.

Claude Code's tool, with its name, its old name `Task` as an alias and its input, so models
trained on it call it unchanged. The tool starts nothing itself: it asks the session through
`ToolContext.spawn_subagent` (the session knows the agent types, the depth and concurrency caps,
the budget) and passes every event of the child on (`ctx.emit`), so the printers can nest
them under this call. What the parent model reads is the child's last text, framed and escaped
(`agent_result`), never the child's tool output; what it spent is billed to the parent's run
(`ToolOutput.spent`).

The call itself needs no permission and changes nothing (each of the child's calls is judged
as it comes), so several Agent calls of one response run side by side. Its permission subject
is the agent type, so a rule `Agent(Explore)` (or Claude Code's older `Task(Explore)`) allows
or denies one kind of agent.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Literal

from pydantic import Field

from stayer.events import Finished, SessionStarted, SubagentEvent
from stayer.messages import JSON, AssistantMessage, Usage
from stayer.tools.base import (
    SpawnSubagent,
    SubagentRequest,
    Tool,
    ToolContext,
    ToolFailure,
    ToolOutput,
    subagent_transcript,
)
from stayer.tools.builtin import ToolInput
from stayer.tools.builtin.agent_result import report, spends, tool_use_count
from stayer.tools.names import AGENT, TASK

AGENT_TIMEOUT_S = 3600.0
"""How long one foreground subagent may run (an hour): its own turn limit and the budget
usually end it first."""

ISOLATIONS = ("worktree",)
"""The `isolation` values the tool passes on; any other is refused in one line."""

Effort = Literal["low", "medium", "high", "xhigh", "max"]


class AgentInput(ToolInput):
    """Input of the Agent tool (Claude Code's field names)."""

    description: str = Field(
        description="A short description of the task in 3 to 5 words, shown while it runs."
    )
    prompt: str = Field(
        description="The whole task for the agent, with everything it needs to know: it sees "
        "none of this conversation."
    )
    subagent_type: str = Field(
        default="general-purpose",
        description="The type of agent to start (one of those listed in the system reminder); "
        "general-purpose when left out.",
    )
    model: str | None = Field(
        default=None,
        description="The model the agent uses: sonnet, opus, haiku, fable or a full model id; "
        "leave it out for the agent type's own (else this session's).",
    )
    effort: Effort | None = Field(
        default=None,
        description="How hard the agent should work at its answers; leave it out for the agent "
        "type's own (else this session's).",
    )
    run_in_background: bool = Field(
        default=True,
        description="Left out or true, the call returns at once and the agent's report reaches "
        "you in a later message when it finishes (you may go on meanwhile); false waits for "
        "the report in this call.",
    )
    isolation: str | None = Field(
        default=None,
        description='"worktree" to have the agent work in a git worktree of its own, so its '
        "changes stay apart from yours until merged.",
    )


class AgentTool(Tool[AgentInput]):
    """Starts a subagent and returns its final report (or, in the background, its id)."""

    name = AGENT
    aliases = (TASK,)
    input_model = AgentInput
    read_only = True  # the child's own calls are judged one by one
    timeout_s = AGENT_TIMEOUT_S
    description = (
        "Starts a subagent: a separate agent with its own conversation, tools and context "
        "window, which works on one task on its own and reports back.\n\n"
        "- Use it for work that would fill your context with material you do not need to keep "
        "(a broad search of a large codebase, reading many files to answer one question), and "
        "for independent pieces of work that can go on side by side.\n"
        "- Do not use it for a task a single Read, Grep or Glob call would do, or for a file "
        "you already know the path of.\n"
        "- The agent types you may start are listed in a system reminder; pick the one whose "
        "description fits the task, or leave `subagent_type` out for a general-purpose agent.\n"
        "- The agent sees nothing of this conversation: write `prompt` so it stands alone, say "
        "exactly what to do and what its report should contain, and whether it should change "
        "files or only look.\n"
        "- Several Agent calls in one message run at the same time. Start independent agents "
        "together rather than one after another.\n"
        "- The result is the agent's final report only, not its tool calls or their output; "
        "it is the agent's own account, so check what matters before relying on it. The user "
        "does not see it: tell them what they need to know.\n"
        "- By default (`run_in_background` left out or true) the call returns at once and the "
        "report comes in a later message; do not ask for it or wait for it in a loop. Set it "
        "to false when you need the report before you can go on."
    )

    def is_concurrency_safe(self, tool_input: AgentInput) -> bool:
        return True

    def permission_subject(self, tool_input: AgentInput) -> str | None:
        return tool_input.subagent_type

    async def call(self, tool_input: AgentInput, ctx: ToolContext) -> ToolOutput:
        request = SubagentRequest(
            prompt=tool_input.prompt,
            description=tool_input.description,
            subagent_type=tool_input.subagent_type,
            model=tool_input.model,
            effort=tool_input.effort,
            background=tool_input.run_in_background,
            isolation=checked_isolation(tool_input.isolation),
            tool_use_id=ctx.tool_use_id or "",
        )
        if request.background:
            return await run_in_background(request, ctx)
        return await run_subagent(request, ctx)


def checked_isolation(isolation: str | None) -> str | None:
    """The isolation to ask for; raises `ToolFailure` for one the tool does not offer."""
    if isolation is None or isolation in ISOLATIONS:
        return isolation
    raise ToolFailure(f"isolation {isolation!r} is not supported; use worktree or leave it out")


def _spawner(ctx: ToolContext) -> SpawnSubagent:
    if ctx.spawn_subagent is None:
        raise ToolFailure("subagents are not available here; do the task yourself")
    return ctx.spawn_subagent


class _Child:
    """What the tool learns of its child from the events it passes on."""

    def __init__(self, request: SubagentRequest) -> None:
        self.request = request
        self.agent_id = ""
        self.agent_type = request.subagent_type
        self.started: SessionStarted | None = None
        self.finished: Finished | None = None

    def saw(self, wrapped: SubagentEvent) -> None:
        """Note the child's own start and end (a grandchild's come wrapped once more)."""
        event = wrapped.event
        if isinstance(event, SessionStarted) and self.started is None:
            self.started = event
            self.agent_id = wrapped.agent_id or event.session_id
            self.agent_type = wrapped.agent_type or self.agent_type
        elif isinstance(event, Finished):
            self.finished = event


async def _follow(request: SubagentRequest, ctx: ToolContext) -> _Child:
    """Run the child to the end of what the session yields, passing each event on."""
    child = _Child(request)
    events = _spawner(ctx)(request)
    try:
        async for event in events:
            if not isinstance(event, SubagentEvent):  # a spawner that forgot to wrap
                event = SubagentEvent(request.tool_use_id, event, agent_type=child.agent_type)
            ctx.emit(event)
            child.saw(event)
    finally:  # a call stopped midway stops its child with it
        if isinstance(events, AsyncGenerator):
            await events.aclose()
    return child


async def run_subagent(request: SubagentRequest, ctx: ToolContext) -> ToolOutput:
    """Run `request` in the foreground and return its framed report (the Agent tool's, and
    the Skill tool's for a skill that forks)."""
    child = await _follow(request, ctx)
    finished = child.finished
    if finished is None:
        raise ToolFailure(
            f"agent {child.agent_type} ({child.agent_id or 'not started'}) ended without "
            "a result; nothing of its work is known"
        )
    text = report(finished, agent_id=child.agent_id, agent_type=child.agent_type)
    return ToolOutput(
        text,
        is_error=finished.is_error,
        data=_completed_data(child, finished, ctx),
        spent=spends(finished),
    )


def _completed_data(child: _Child, finished: Finished, ctx: ToolContext) -> dict[str, JSON]:
    """Claude Code's `completed` result for programs (stream-json's `tool_use_result`)."""
    usage = finished.usage
    total = usage.input_tokens + usage.output_tokens
    total += usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    last = next(
        (m.usage for m in reversed(finished.messages) if isinstance(m, AssistantMessage)), Usage()
    )
    data: dict[str, JSON] = {
        "status": "completed" if not finished.is_error else "failed",
        "agentId": child.agent_id,
        "agentType": child.agent_type,
        "content": [{"type": "text", "text": finished.result_text}],
        "resolvedModel": child.started.model if child.started else "",
        "totalToolUseCount": tool_use_count(finished.messages),
        "totalDurationMs": round(finished.duration_ms),
        "totalTokens": total,
        "usage": _usage_json(last),
        "prompt": child.request.prompt,
    }
    if finished.is_error:
        data["terminalReason"] = finished.terminal.value
        data["error"] = finished.message
    if ctx.session_dir is not None and child.agent_id:
        data["transcriptPath"] = str(subagent_transcript(ctx.session_dir, child.agent_id))
    return data


def _usage_json(usage: Usage) -> dict[str, JSON]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
    }


async def run_in_background(request: SubagentRequest, ctx: ToolContext) -> ToolOutput:
    """Start `request` in the background and say so at once, with where its output goes."""
    child = await _follow(request, ctx)
    if child.started is None:
        raise ToolFailure(f"agent {child.agent_type} did not start; nothing runs in its name")
    text = f"launched agent {child.agent_id} ({child.agent_type}) in the background; "
    text += "its report will reach you when it finishes"
    data: dict[str, JSON] = {
        "status": "async_launched",
        "agentId": child.agent_id,
        "description": request.description,
        "resolvedModel": child.started.model,
    }
    if ctx.session_dir is not None:
        output = str(subagent_transcript(ctx.session_dir, child.agent_id))
        data["outputFile"] = output
        text += f"; output file: {output}"
    return ToolOutput(text + ".", data=data)
