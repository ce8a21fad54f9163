"""The session's decider under `--permission-prompt-tool stdio`: a call the permission policy
would put to a person is put to the SDK instead, as a `can_use_tool` control request
(protocols.md §1.5), and the SDK's callback answers it.

It is the session's decider, not a way around the policy: deny rules, PreToolUse hooks and the
mode have had their say before anything is asked (bypassPermissions and acceptEdits keep their
meaning: what they allow is never asked). The answer:

- `allow`, with `updatedInput`: the call runs with that input. It is checked against the tool's
  schema like any input (by the loop), and first, here, as the loop checks every call: the
  session's PreToolUse hooks, then its permission rules. An input they deny is refused whoever
  approved it, so an approval cannot smuggle in a command or a path the rules or a hook keep
  out; what they would only ask about, the approval answered; a hook's rewrite of it is what
  runs. `updatedPermissions` are applied once the call is allowed (`permission_updates`).
- `deny`, with `message`: the model reads the message and goes on; `interrupt: true` also stops
  the run, as Claude Code does.
- an error reply, an answer that is neither, or the channel closing: the call is denied, saying
  why (the decider raises, and the loop turns that into a denial: it fails closed).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from stayer.driver import Driver
from stayer.events import PermissionRequested
from stayer.loop.state import ToolCall
from stayer.permissions import Decision, Rule
from stayer.tools.base import Tool, Toolbox, ToolInputError
from stayer.ui.repl.dialogs import kept_rule

from .control import ControlChannel, ControlError
from .permission_updates import SAVED, Updates

Ask = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Puts the request's fields to whoever answers and returns the answer (behavior, ...)."""


def to_stderr(line: str) -> None:
    """One line for the person running stayer, on standard error (a rule or mode the SDK sent
    with a line break in it stays on that one line)."""
    print(f"stayer: {' '.join(line.split())}", file=sys.stderr, flush=True)


class PermissionPrompt:
    """Asks the SDK about each call the policy would put to a person; see the module. It
    answers once `bind` has given it the driver of the session it decides for."""

    def __init__(self, ask: Ask, *, warn: Callable[[str], None] = to_stderr) -> None:
        self._ask = ask
        self._warn = warn
        self._bound: _Bound | None = None

    @classmethod
    def over(cls, channel: ControlChannel, **kwargs: Any) -> PermissionPrompt:
        """The decider that asks over `channel` (`can_use_tool` requests)."""

        async def ask(fields: Mapping[str, Any]) -> Mapping[str, Any]:
            return await channel.request("can_use_tool", fields)

        return cls(ask, **kwargs)

    def bind(self, driver: Driver) -> None:
        """Decide for `driver`'s session: its hooks and rules to check a changed input against,
        its rules to apply updates to, its run to stop on an `interrupt`."""
        self._bound = _Bound(driver, Updates(driver.session, self._warn))

    async def __call__(self, request: PermissionRequested) -> Decision:
        bound = self._bound
        if bound is None:  # asked before the session is open: nobody to decide for yet
            raise ControlError("the SDK's permission prompt is not connected to a session yet")
        try:
            answer = await self._ask(request_fields(request))
        except ControlError as error:
            raise ControlError(f"the SDK's can_use_tool request failed: {error}") from None
        behavior = answer.get("behavior")
        if behavior == "deny":
            return self._denied(bound, answer)
        if behavior != "allow":
            raise ControlError(
                f"the SDK answered can_use_tool with behavior {_shown(behavior)}, not allow or deny"
            )
        return await self._allowed(bound, request, answer)

    def _denied(self, bound: _Bound, answer: Mapping[str, Any]) -> Decision:
        message = answer.get("message")
        said = message.strip() if isinstance(message, str) else ""
        if answer.get("interrupt") is True:
            # after the denial is on record: the call's result says why, then the run stops
            reason = f"the SDK denied a tool call and stopped the run{': ' + said if said else ''}"
            asyncio.get_running_loop().call_soon(bound.driver.interrupt, reason)
        return Decision("deny", said, by="user")

    async def _allowed(
        self, bound: _Bound, request: PermissionRequested, answer: Mapping[str, Any]
    ) -> Decision:
        given = answer.get("updatedInput")
        if given is not None and not isinstance(given, Mapping):
            raise ControlError(f"the SDK's updatedInput is {_shown(given)}, not an object")
        changed = None if given is None or dict(given) == request.input else dict(given)
        if changed is not None:
            checked = await _rechecked(bound, request, changed)
            if checked.behavior == "deny":
                if answer.get("updatedPermissions"):
                    self._warn("the call was refused, so its updatedPermissions were not applied")
                return checked
            changed = None if checked.updated_input is None else dict(checked.updated_input)
        mode = bound.updates.apply(answer.get("updatedPermissions"))
        return Decision("allow", updated_input=changed, mode=mode, by="user")


class _Bound:
    """What the decider needs of the session it decides for."""

    def __init__(self, driver: Driver, updates: Updates) -> None:
        self.driver = driver
        self.updates = updates

    async def check(self, call: ToolCall) -> Decision:
        """The session's own check of `call`, as the loop makes it: its PreToolUse hooks, then
        the permission rules as they are now."""
        return await self.driver.session.setup.params.can_use_tool(call)

    @property
    def tools(self) -> Toolbox:
        return self.driver.session.setup.params.tools


async def _rechecked(
    bound: _Bound, request: PermissionRequested, changed: dict[str, Any]
) -> Decision:
    """The call with its changed input checked again as the loop checks every call (PreToolUse
    hooks, then the rules): a denial when they deny it; else an allow with the input to run
    (a hook's rewrite of it, if one rewrote it). What they would only ask about, the approval
    answered; an input that does not fit the tool's schema is left to the loop to refuse."""
    tool = _tool(bound.tools, request.name)
    if tool is None:  # a subagent's own tool, say: what cannot be checked does not run
        return Decision(
            "deny",
            f"the approval changed the input of {request.name}, which stayer cannot check "
            "against the permission rules here, so the call did not run",
            by="policy",
        )
    try:
        parsed = tool.parse_input(changed)
    except ToolInputError:
        return Decision("allow", updated_input=changed)
    decision = await bound.check(ToolCall(tool, request.tool_use_id, parsed))
    if decision.behavior == "deny":
        return Decision(
            "deny",
            f"the input the call was approved with was checked again and refused: "
            f"{decision.reason}",
            rule=decision.rule,
            by=decision.by or "policy",
        )
    rewritten = decision.updated_input
    return Decision("allow", updated_input=changed if rewritten is None else dict(rewritten))


def _tool(tools: Toolbox, name: str) -> Tool[Any] | None:
    """The session's tool called `name`, or known by it as an old name."""
    found = tools.tools()
    tool = found.get(name)
    return tool or next((each for each in found.values() if name in each.aliases), None)


def request_fields(request: PermissionRequested) -> dict[str, Any]:
    """The `can_use_tool` request's fields for `request`, as the SDK's query code reads them."""
    fields: dict[str, Any] = {
        "tool_name": request.name,
        "input": dict(request.input),
        "tool_use_id": request.tool_use_id,
        "permission_suggestions": suggestions(request),
        "blocked_path": None,
    }
    if request.reason:
        fields["decision_reason"] = request.reason
    return fields


def suggestions(request: PermissionRequested) -> list[dict[str, Any]]:
    """The rule the REPL's "yes, and don't ask again" would keep for `request` (never one that
    allows a whole tool's every call), as the one update an SDK callback may hand back to stop
    being asked: kept in the project's local settings, as the REPL keeps it."""
    text = kept_rule(request)
    if text is None:
        return []
    rule = Rule.parse(text)
    value = {"toolName": rule.tool}
    if rule.specifier is not None:
        value["ruleContent"] = rule.specifier
    return [{"type": "addRules", "rules": [value], "behavior": "allow", "destination": SAVED}]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
