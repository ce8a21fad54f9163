"""Asking about a call the policy will not settle alone: the request out, the answer back.

First `LoopParams.permission_hook` (PermissionRequest hooks) may answer in the person's
place: its allow or deny is a `PermissionResolved` with no question shown; a hook that breaks
denies the call. With no answer from it, the request is a `PermissionRequested` event, passed
on as the call's own (the model's answer goes on streaming meanwhile), and `LoopParams.decide`
answers it: a dialog, an SDK callback. The answer is a `PermissionResolved`. With nobody to
ask (a headless run) the call is denied with the reason the policy wrote for that case, which
says how the user can allow it. A decider that breaks or answers nonsense denies the call,
saying so; it never ends the run.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec.structs import replace

from stayer.events import PermissionRequested, PermissionResolved
from stayer.messages import ToolUseBlock
from stayer.permissions import Decision

from .state import LoopParams


async def ask(
    params: LoopParams,
    block: ToolUseBlock,
    asked: Decision,
    emit: Callable[[PermissionRequested | PermissionResolved], None],
) -> Decision:
    """The answer to `asked` for the call `block` asks for: a PermissionRequest hook's, the
    decider's, or a denial when there is neither."""
    name = block.name
    shown = asked.updated_input if asked.updated_input is not None else block.input
    request = PermissionRequested(
        block.id,
        name,
        dict(shown),  # what would run: a PreToolUse hook may have rewritten it
        asked.reason,
        asked.rule,
        asked.suggestions,
        asked.mode,
    )
    answer = await _hooked(params, request)
    if answer is None:
        if params.decide is None:
            return replace(asked, behavior="deny")
        emit(request)
        try:
            answer = _checked(name, await params.decide(request))
        except Exception as exc:
            answer = _failed(name, "asking for approval", exc)
    emit(
        PermissionResolved(
            block.id,
            name,
            "allow" if answer.behavior == "allow" else "deny",
            answer.by or "user",
            answer.reason,
            None if answer.updated_input is None else dict(answer.updated_input),
            answer.mode,
        )
    )
    return answer


async def _hooked(params: LoopParams, request: PermissionRequested) -> Decision | None:
    """The PermissionRequest hooks' answer, None when they give none; one that breaks denies."""
    if params.permission_hook is None:
        return None
    try:
        answer = await params.permission_hook(request)
    except Exception as exc:
        return _failed(request.name, "a PermissionRequest hook", exc)
    return None if answer is None else _checked(request.name, answer)


def _failed(name: str, what: str, exc: Exception) -> Decision:
    return Decision(
        "deny",
        f"Permission to use {name} was not granted: {what} failed "
        f"({type(exc).__name__}: {exc}), so the call did not run. Do not try another way "
        "to do the same; if it is essential, stop and say so.",
        by="policy",
    )


def _checked(name: str, answer: object) -> Decision:
    """A decider's answer as a decision the call can act on: allow, or deny with words."""
    if not isinstance(answer, Decision) or answer.behavior not in ("allow", "deny"):
        shown = repr(answer.behavior) if isinstance(answer, Decision) else type(answer).__name__
        return Decision(
            "deny",
            f"Permission to use {name} was not granted: the approval answered {shown}, not "
            "allow or deny, so the call did not run.",
            by="policy",
        )
    if answer.behavior == "deny":
        who = "A hook" if answer.by == "hook" else "The user"
        said = answer.reason.strip()
        text = f"{who} denied permission to use {name}"
        if said:
            text += f", saying: {said}\nFollow that; do not make the same call another way."
        else:
            text += (
                ". Do not try another way to do the same; take a different approach, or stop "
                "and ask how to proceed."
            )
        return replace(answer, reason=text)
    return answer
