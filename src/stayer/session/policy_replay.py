"""Replaying recorded tool calls against a permission policy: what each would have met.

The calls come from transcripts (stayer's and Claude Code's, both read by `transcript.load`);
each is judged by the session's own permission callback (`query.permission_check`), so the
replay cannot drift from what a run would decide. A call is *denied* when it is refused even in
bypassPermissions (a deny rule, a protected path, an unreadable input: no prompt could let it
through), *asked* when only the lack of a person to approve it stands in its way (or an ask rule
matches it), and *allowed* otherwise. The verdict is the permission check's own: in dontAsk
mode it turns every question into a denial; plan mode refuses changes outright, but what it
asks (an ask rule's read, accepting the plan) stays a question, since an interactive run puts
those to a person. Symlinks and `..` are resolved on this machine, as they are now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from stayer.loop.state import CanUseTool, ToolCall
from stayer.messages import JSON, AssistantMessage, ToolUseBlock
from stayer.permissions import Decision, PermissionPolicy, PermissionState, Rule
from stayer.tools.base import Tool, ToolInputError
from stayer.tools.names import TOOL_ALIASES

from .permission_check import permission_check
from .transcript import load, recorded_cwd

Verdict = Literal["allowed", "asked", "denied"]
VERDICTS: tuple[Verdict, ...] = ("allowed", "asked", "denied")


class RecordedCall(Struct, frozen=True):
    """One tool call found in a transcript, with the directory its session ran in."""

    tool: str
    input: Mapping[str, JSON]
    cwd: Path


def recorded_calls(paths: Sequence[Path], *, cwd: Path) -> tuple[list[RecordedCall], list[str]]:
    """Every tool call in the transcripts at `paths`, in order, and the warnings of reading
    them (lines skipped); a session that does not say where it ran is taken to have run in
    `cwd`. Raises `OSError` for a file that cannot be read."""
    found: list[RecordedCall] = []
    warnings: list[str] = []
    for path in paths:
        loaded = load(path)
        warnings += loaded.warnings
        where = recorded_cwd(path)
        session_cwd = Path(where) if where else cwd
        for message in loaded.messages:
            if not isinstance(message, AssistantMessage):
                continue
            for block in message.content:
                if isinstance(block, ToolUseBlock) and block.unparsed is None:
                    found.append(RecordedCall(block.name, block.input, session_cwd))
    return found, warnings


class Rules(Struct, frozen=True):
    """The rules under test: a policy (a run's holds its ask rules), and more rules that make
    a call ask even if allowed."""

    policy: PermissionPolicy
    ask: tuple[Rule, ...] = ()


class Judged(Struct, frozen=True):
    """One replayed call, its input as its tool reads it, and what it would have met."""

    call: RecordedCall
    tool: Tool[Any]
    input: Any
    verdict: Verdict
    reason: str


class Checks:
    """Permission callbacks for policies and directories, made once each."""

    def __init__(self) -> None:
        self._made: dict[tuple[PermissionPolicy, Path], CanUseTool] = {}

    async def decide(self, policy: PermissionPolicy, judged: Judged) -> Decision:
        """What `policy` decides for the call."""
        key = (policy, judged.call.cwd)
        check = self._made.get(key)
        if check is None:
            check = permission_check(PermissionState(policy), judged.call.cwd)
            self._made[key] = check
        return await check(ToolCall(judged.tool, "replay", judged.input))

    async def allows(self, policy: PermissionPolicy, judged: Judged) -> bool:
        """Whether `policy` allows the call."""
        return (await self.decide(policy, judged)).behavior == "allow"


async def verdict(rules: Rules, judged: Judged, checks: Checks) -> tuple[Verdict, str]:
    """What the call would have met under `rules`: allowed, asked, or denied, as the run's
    permission check decides (dontAsk's questions are denials there already)."""
    policy = rules.policy
    if rules.ask:
        policy = replace(policy, ask=(*policy.ask, *rules.ask))
    decision = await checks.decide(policy, judged)
    if decision.behavior == "allow":
        return "allowed", ""
    if decision.behavior == "ask":
        return "asked", decision.reason
    return "denied", decision.reason


def validated_input(tool: Tool[Any], given: Mapping[str, JSON]) -> Any | None:
    """The tool's input for a recorded input, or None if the tool refuses it. Fields its
    schema does not name, which another harness adds (Claude Code's Bash has some stayer's
    lacks), are dropped first."""
    known = tool.input_schema.get("properties")
    if isinstance(known, dict):
        given = {k: v for k, v in given.items() if k in known}
    try:
        return tool.parse_input(given)
    except ToolInputError:
        return None


class Replay(Struct, frozen=True):
    """Every replayed call with its verdict, and what could not be replayed."""

    judged: tuple[Judged, ...]
    unknown_tools: Mapping[str, int]
    """Calls of tools stayer does not have, by tool name."""
    unreadable: int
    """Calls whose input their tool does not accept."""

    def of(self, kind: Verdict) -> list[Judged]:
        """The calls that met `kind`."""
        return [judged for judged in self.judged if judged.verdict == kind]


async def replay(
    calls: Sequence[RecordedCall], rules: Rules, tools: Mapping[str, Tool[Any]], checks: Checks
) -> Replay:
    """Judge every call one of `tools` can take; count the rest."""
    judged: list[Judged] = []
    unknown: dict[str, int] = {}
    unreadable = 0
    for call in calls:
        tool = tools.get(TOOL_ALIASES.get(call.tool, call.tool))
        if tool is None:
            unknown[call.tool] = unknown.get(call.tool, 0) + 1
            continue
        validated = validated_input(tool, call.input)
        if validated is None:
            unreadable += 1
            continue
        pending = Judged(call, tool, validated, "allowed", "")
        kind, reason = await verdict(rules, pending, checks)
        judged.append(replace(pending, verdict=kind, reason=reason))
    return Replay(tuple(judged), unknown, unreadable)
