"""One-line notices about how a run goes on: retries, compaction, a switch of model, a
discarded or kept partial answer, every recovery the loop makes, a hook that stopped something,
a call a rule or hook refused, and the closing line of a run."""

from __future__ import annotations

from typing import Literal, assert_never

from msgspec import Struct

from stayer.events import (
    Compacted,
    Continue,
    Continuing,
    Finished,
    HookRan,
    McpServerStatus,
    ModelSwitched,
    PartialKept,
    PermissionResolved,
    Retrying,
    Terminal,
    Withdrawn,
)
from stayer.ui.live_output import safe
from stayer.ui.wording import RECOVERIES, compacted_note, hook_line, mcp_line

Level = Literal["info", "warning", "error"]
NoticeEvent = (
    Retrying
    | Compacted
    | ModelSwitched
    | Withdrawn
    | PartialKept
    | Continuing
    | HookRan
    | PermissionResolved
    | McpServerStatus
)


class Notice(Struct, frozen=True):
    """What to say, and how loudly."""

    text: str
    level: Level = "info"


def notice_of(event: NoticeEvent) -> Notice | None:
    """The notice for `event`, or None when it has nothing to say (an ordinary next turn, a
    hook that did its job, a call the person allowed or refused themselves)."""
    match event:
        case Retrying(attempt=attempt, max_retries=limit, delay_s=delay, error=error):
            why = _one_line(error)
            return Notice(
                f"↻ retrying in {delay:.0f}s (attempt {attempt}/{limit}): {why}", "warning"
            )
        case Compacted():
            return Notice(f"⟲ {compacted_note(event)}")
        case ModelSwitched(from_model=old, to_model=new, reason=reason):
            text = f"⇄ switched from {old} to {new} for the rest of this run: {_one_line(reason)}"
            return Notice(text, "warning")
        case Withdrawn(reason=reason):
            return Notice(f"the partial answer above was discarded: {_one_line(reason)}")
        case PartialKept(reason=reason):
            return Notice(f"the answer broke off ({_one_line(reason)}); what arrived is kept")
        case Continuing(reason=reason):
            return None if reason is Continue.NEXT_TURN else Notice(f"↻ {RECOVERIES[reason]}")
        case HookRan(outcome=outcome):
            if outcome == "success":
                return None
            return Notice(f"⚑ {_one_line(hook_line(event).removeprefix('stayer: '))}", "warning")
        case PermissionResolved():
            return _denial(event)
        case McpServerStatus():
            line = mcp_line(event)
            return None if line is None else Notice(_one_line(line), "warning")
        case _ as unreachable:
            assert_never(unreachable)


def _denial(event: PermissionResolved) -> Notice | None:
    if event.behavior == "allow" or event.by == "user":
        return None  # the person answered: the call's own result says it
    why = _one_line(event.message) or "no reason given"
    return Notice(f"⊘ {safe(event.name)} denied by {event.by}: {why}", "warning")


def finished_line(event: Finished) -> str:
    """The run's closing line: how it ended (unless it simply completed), turns, cost, tokens
    and time."""
    tokens = event.usage.total_input_tokens + event.usage.output_tokens
    turns = f"{event.num_turns} turn" + ("" if event.num_turns == 1 else "s")
    facts = f"{turns} · ${event.cost_usd:.4f} · {tokens:,} tokens · {event.duration_ms / 1000:.1f}s"
    if event.terminal is Terminal.COMPLETED:
        return facts
    said = _one_line(event.message)
    return f"{event.terminal.value}" + (f" ({said})" if said else "") + f" · {facts}"


def _one_line(text: str) -> str:
    return " ".join(safe(text).split())
