"""stream-json's task lines for a subagent running in the background, in Claude Code's shapes
(shared/reference/protocols.md §1.6): `system`/`task_started` when it starts, and
`system`/`task_notification` when it ends, saying how (`completed`, `failed`, `stopped`), where
its output is (its transcript, `output_file`), a one-line `summary` and its `usage`
(`total_tokens`, `tool_uses`, `duration_ms`: the SDK's `TaskUsage`). The SDK needs these lines
to know when background work is over; a subagent that runs in its call's time has none (the
call's own result says how it ended).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from stayer.events import Finished, SubagentEvent
from stayer.tools.base import subagent_transcript
from stayer.ui.wording import UNFINISHED, agent_label, subagent_outcome, task_status

Line = dict[str, Any]
Frame = Callable[..., Line]
"""The writer's `_frame`: a line of a type with its fields, the session id and a uuid."""

TASK_SUBTYPES = frozenset({"task_started", "task_notification"})


def task_started(wrapped: SubagentEvent, frame: Frame) -> Line:
    """The line announcing a background subagent (its wrapped `SessionStarted` came)."""
    return frame(
        "system",
        subtype="task_started",
        task_id=wrapped.agent_id,
        description=wrapped.description,
        tool_use_id=wrapped.parent_tool_use_id,
        task_type="local_agent",
        subagent_type=wrapped.agent_type,
        is_backgrounded=True,
    )


def _output_file(wrapped: SubagentEvent, session_dir: str) -> str:
    if not (session_dir and wrapped.agent_id):
        return ""
    return str(subagent_transcript(Path(session_dir), wrapped.agent_id))


def task_unfinished(started: SubagentEvent, tool_uses: int, session_dir: str, frame: Frame) -> Line:
    """The line closing a background subagent whose end never came (stopped before it began,
    or with the run): a caller waiting on its tasks must not wait for it. No `usage`: what it
    spent is not known here (the run's result counts it)."""
    label = agent_label(started.agent_type, started.description)
    return frame(
        "system",
        subtype="task_notification",
        task_id=started.agent_id,
        status="stopped",
        output_file=_output_file(started, session_dir),
        summary=f"{label} · {UNFINISHED} ({tool_uses} tool calls)",
        tool_use_id=started.parent_tool_use_id,
    )


def task_notification(
    wrapped: SubagentEvent, finished: Finished, *, tool_uses: int, session_dir: str, frame: Frame
) -> Line:
    """The line closing a background subagent (its wrapped `Finished` came)."""
    output_file = _output_file(wrapped, session_dir)
    label = agent_label(wrapped.agent_type, wrapped.description)
    usage = finished.usage
    return frame(
        "system",
        subtype="task_notification",
        task_id=wrapped.agent_id,
        status=task_status(finished.terminal),
        output_file=output_file,
        summary=f"{label} · {subagent_outcome(finished, tool_uses)}",
        usage={
            "total_tokens": usage.total_input_tokens + usage.output_tokens,
            "tool_uses": tool_uses,
            "duration_ms": round(finished.duration_ms),
        },
        tool_use_id=wrapped.parent_tool_use_id,
    )
