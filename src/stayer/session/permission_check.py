"""The loop's permission callback: each call judged by the policy as it is now.

Before the pure decision (`stayer.permissions.evaluate`), the call's subject is resolved, and
what it reaches besides is gathered with the disk's help: the files it reads (and whether a git
call's history holds a file a read rule names), what it reaches outside the session's places,
and what else it writes with the protected places around it. `stayer permissions check` replays
past calls through the same callback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from stayer.loop.state import CanUseTool, ToolCall
from stayer.permissions import (
    Decision,
    PermissionPolicy,
    PermissionState,
    evaluate,
    history_asked,
    lexical_subject,
    nul_refusal,
    outside_reads,
    reads_denied,
    resolve_subject,
    sandbox_refusal,
)
from stayer.permissions.reach import Places
from stayer.tools.base import ToolContext

from .git_history import HistoryCheck
from .protected_look import protected_writes
from .sandboxing import places_of
from .trees import trees_holding


def permission_check(
    state: PermissionState,
    cwd: Path,
    context: ToolContext | None = None,
    env: Mapping[str, str] | None = None,
) -> CanUseTool:
    """The loop's permission callback: the policy as it is now (its mode is live) applied to
    each call's resolved subject, and to what it reads and reaches beyond the working
    directories, given the places `context` (the session's folder, its sandbox) adds
    (`stayer permissions check` replays calls through it too). A call that writes has what
    else it writes, and the protected places around it, looked up on the disk and in `env`
    first (`protected_look`)."""

    histories = HistoryCheck()

    async def can_use_tool(call: ToolCall) -> Decision:
        policy, tool = state.policy, call.tool
        subject = tool.permission_subject(call.input)
        refused = nul_refusal(tool.name, subject)
        if refused is not None:
            return refused
        paths, read = await _reads(policy, call, cwd, histories)
        if read is not None and read.behavior == "deny":
            return read
        read_only = tool.is_read_only(call.input)
        reach = _reach(policy, places_of(context), call, subject, paths, read_only, cwd)
        if isinstance(reach, Decision):
            return reach
        aliases: tuple[str, ...] = ()
        if tool.subject_kind == "path":
            aliases = (lexical_subject(subject, cwd),)
            subject = resolve_subject(subject, cwd)
        writes = None
        if not read_only or tool.subject_kind == "command":  # a misjudged line still asks
            names = (subject, *aliases) if subject and tool.subject_kind == "path" else ()
            writes = protected_writes(
                tool, call.input, names, cwd=cwd, roots=policy.directories, env=env
            )
        decision = evaluate(
            policy,
            tool=tool.name,
            subject=subject,
            read_only=read_only,
            cwd=cwd,
            subject_kind=tool.subject_kind,
            aliases=aliases,
            exits_plan=tool.exits_plan,
            outside=reach,
            reads_as=tool.reads_under,
            writes=writes,
            writes_as=tool.writes_under,
        )
        # a read an ask rule names asks, unless the call is refused outright anyway
        return decision if read is None or decision.behavior == "deny" else read

    return can_use_tool


async def _reads(
    policy: PermissionPolicy, call: ToolCall, cwd: Path, histories: HistoryCheck
) -> tuple[tuple[str, ...] | None, Decision | None]:
    """What the call reads besides its subject, and the read rules' answer to it: a denial, a
    question (an ask rule, or a git history that holds a file a rule names), or None."""
    judge = call.tool.reads_under
    if judge is None:
        return (), None
    rules = tuple(r for r in (*policy.deny, *policy.ask) if r.names(judge) and r.specifier)
    paths, history = await histories.settle(call.tool.read_paths(call.input, cwd), rules, cwd)
    if paths is not None and rules and any(path.endswith("/**") for path in paths):
        paths = await asyncio.to_thread(trees_holding, paths, rules, judge, cwd)
    read = reads_denied(policy, tool=judge, paths=paths, cwd=cwd)
    if read is None and history is not None:
        read = history_asked(judge, history)
    return paths, read


def _reach(
    policy: PermissionPolicy,
    places: Places,
    call: ToolCall,
    subject: str | None,
    paths: tuple[str, ...] | None,
    read_only: bool,
    cwd: Path,
) -> Decision | tuple[str, ...] | None:
    """A sandbox's refusal of the call; else, for a read-only call, what it reads outside the
    session's places that no allow rule names (None: it cannot tell)."""
    tool, kind = call.tool, call.tool.subject_kind
    touched = paths
    if kind == "path" and paths is not None:
        touched = (*((subject,) if subject is not None else ()), *paths)
    refused = sandbox_refusal(
        policy, places, tool=tool.name, kind=kind, paths=touched, read_only=read_only, cwd=cwd
    )
    if refused is not None:
        return refused
    if not read_only or kind not in ("path", "command"):
        return ()
    judges = (tool.name, tool.reads_under) if kind == "path" else (tool.reads_under,)
    rule_tools = tuple(dict.fromkeys(name for name in judges if name))
    return outside_reads(policy, places, rule_tools=rule_tools, kind=kind, paths=touched, cwd=cwd)
