"""The session's decider under `--permission-prompt-tool`: a call the permission policy would
put to a person is put to the SDK instead, as a `can_use_tool` control request (protocols.md
§1.5), and the SDK's callback answers it (`stdio`); or to an MCP tool, which answers the same
way (`prompt_tool`).

It is the session's decider, not a way around the policy: deny rules, PreToolUse hooks and the
mode have had their say before anything is asked (bypassPermissions and acceptEdits keep their
meaning: what they allow is never asked). The answer:

- `allow`, with `updatedInput`: the call runs with that input. The loop checks a changed input
  as it checks every call (the tool's schema, PreToolUse hooks, the rules of the session that
  makes the call, a subagent's included): an input they deny is refused whoever approved it, so
  an approval cannot smuggle in a command or a path the rules or a hook keep out.
  `updatedPermissions` are applied once the call is allowed (`permission_updates`).
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
from stayer.permissions import Decision, Rule
from stayer.session.permission_updates import SAVED, Updates
from stayer.session.shown import shown
from stayer.ui.repl.dialogs import kept_rule

from .control import ControlChannel, ControlError

Ask = Callable[[Mapping[str, Any], Driver], Awaitable[Mapping[str, Any]]]
"""Puts the request's fields to whoever answers for the driver's session, and returns the
answer (`behavior`, ...); raises `ControlError` when there is none."""


def to_stderr(line: str) -> None:
    """One line for the person running stayer, on standard error (a rule or mode the SDK sent
    with a line break in it stays on that one line)."""
    print(f"stayer: {' '.join(line.split())}", file=sys.stderr, flush=True)


class PermissionPrompt:
    """Asks about each call the policy would put to a person (the SDK, or the tool `ask`
    calls); see the module. It answers once `bind` has given it the driver of the session it
    decides for."""

    def __init__(self, ask: Ask, *, warn: Callable[[str], None] = to_stderr) -> None:
        self._ask = ask
        self._warn = warn
        self._driver: Driver | None = None
        self._updates: Updates | None = None

    @classmethod
    def over(cls, channel: ControlChannel, **kwargs: Any) -> PermissionPrompt:
        """The decider that asks the SDK over `channel` (`can_use_tool` requests)."""

        async def ask(fields: Mapping[str, Any], driver: Driver) -> Mapping[str, Any]:
            try:
                return await channel.request("can_use_tool", fields)
            except ControlError as error:
                raise ControlError(f"the SDK's can_use_tool request failed: {error}") from None

        return cls(ask, **kwargs)

    def bind(self, driver: Driver) -> None:
        """Decide for `driver`'s session: its rules to apply updates to, its run to stop on an
        `interrupt`."""
        self._driver = driver
        self._updates = Updates(driver.session, self._warn)

    async def __call__(self, request: PermissionRequested) -> Decision:
        driver, updates = self._driver, self._updates
        if driver is None or updates is None:  # asked before the session is open
            raise ControlError("the permission prompt is not connected to a session yet")
        answer = await self._ask(request_fields(request), driver)
        behavior = answer.get("behavior")
        if behavior == "deny":
            return _denied(driver, answer)
        if behavior != "allow":
            raise ControlError(
                f"the permission prompt answered with behavior {shown(behavior)}, not allow or deny"
            )
        given = answer.get("updatedInput")
        if given is not None and not isinstance(given, Mapping):
            raise ControlError(f"the answer's updatedInput is {shown(given)}, not an object")
        # the SDK sends the input back unchanged when its callback kept it: no change then
        changed = None if given is None or dict(given) == request.input else dict(given)
        mode = updates.apply(answer.get("updatedPermissions"))
        return Decision("allow", updated_input=changed, mode=mode, by="user")


def _denied(driver: Driver, answer: Mapping[str, Any]) -> Decision:
    message = answer.get("message")
    said = message.strip() if isinstance(message, str) else ""
    if answer.get("interrupt") is True:
        # after the denial is on record: the call's result says why, then the run stops
        reason = f"a tool call was denied and the run stopped{': ' + said if said else ''}"
        asyncio.get_running_loop().call_soon(driver.interrupt, reason)
    return Decision("deny", said, by="user")


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
