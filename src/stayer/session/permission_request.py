"""PermissionRequest hooks: when a call would be put to a person (after the rules and the
PreToolUse hooks, before the dialog, the SDK's `can_use_tool` or the question), the hooks may
answer in the person's place, as in Claude Code.

Their input is the call's (`tool_name`, `tool_input`, `permission_suggestions`); their JSON's
`hookSpecificOutput.decision` is the answer: `{"behavior": "allow", "updatedInput"?,
"updatedPermissions"?}` or `{"behavior": "deny", "message"?, "interrupt"?}`. No decision from
any hook, and the question goes on as before. A block (exit status 2) denies with its words;
a decision stayer cannot read denies, saying so (it fails closed); a deny from any hook wins
over an allow. An allow's changed input is checked against the rules again by the loop, as any
answer's is; its updates (rules, a mode) are applied as the SDK's are, and what cannot be is
reported as a failed run of the hook (`HookRan`). A deny with `interrupt: true` stops the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct

from stayer.errors import ConfigError
from stayer.events import HookRan, PermissionRequested
from stayer.hooks import HookEvent, HookRunner, Verdict
from stayer.permissions import Decision, PermissionMode, Rule, parse_mode

EVENT: HookEvent = "PermissionRequest"


class PermissionHost(Struct, frozen=True):
    """What the session lends its PermissionRequest hooks: apply an allow's updates (with a
    `warn` for each one not applied as asked; returns the mode a `setMode` asks for), switch
    the mode (raising `ConfigError` for one the session refuses), and stop the run."""

    apply_updates: Callable[[object, Callable[[str], None]], PermissionMode | None]
    set_mode: Callable[[PermissionMode], None]
    interrupt: Callable[[], None]


class PermissionRequests:
    """The session's `LoopParams.permission_hook`: see the module."""

    def __init__(
        self, runner: HookRunner, report: Callable[[HookRan], None], host: PermissionHost
    ) -> None:
        self.runner = runner
        self.report = report
        self.host = host

    async def __call__(self, request: PermissionRequested) -> Decision | None:
        fields = {
            "tool_name": request.name,
            "tool_input": dict(request.input),
            "permission_suggestions": suggestions(request),
        }
        verdict = await self.runner.run(EVENT, fields, subject=request.name)
        raw = _chosen(verdict)
        if isinstance(raw, Decision):
            return raw
        if raw is None:
            return None
        if raw.get("behavior") == "deny":
            return self._denied(raw)
        return self._allowed(request, raw)

    def _denied(self, raw: Mapping[str, Any]) -> Decision:
        message = raw.get("message")
        said = message.strip() if isinstance(message, str) else ""
        if raw.get("interrupt") is True:
            self.host.interrupt()
        return Decision("deny", said, by="hook")

    def _allowed(self, request: PermissionRequested, raw: Mapping[str, Any]) -> Decision:
        given = raw.get("updatedInput")
        changed = None if given is None or dict(given) == request.input else dict(given)
        mode = None
        if raw.get("updatedPermissions") is not None:
            mode = self.host.apply_updates(raw["updatedPermissions"], self._warn)
        if mode is None and request.mode:
            mode = parse_mode(request.mode)
        if mode is not None:  # an accepted plan leaves plan mode, as a person's yes does
            try:
                self.host.set_mode(mode)
            except ConfigError as error:
                self._warn(f"setMode {mode} not applied: {error}")
                mode = None
        return Decision("allow", updated_input=changed, by="hook", mode=mode)

    def _warn(self, line: str) -> None:
        """An update not applied as asked: a failed run of the hook, where hooks' are shown."""
        import uuid

        self.report(
            HookRan(
                hook_id=str(uuid.uuid4()),
                hook_event=EVENT,
                hook_name=f"{EVENT}:updatedPermissions",
                command="updatedPermissions",
                exit_code=None,
                duration_ms=0.0,
                outcome="error",
                message=line,
                stdout="",
                stderr="",
            )
        )


def _chosen(verdict: Verdict) -> Decision | Mapping[str, Any] | None:
    """The decision that stands: a denial for a block or unreadable answer, else the first
    deny, else the first allow (a raw mapping, already checked); None: no hook decided."""
    if verdict.blocks:
        return Decision("deny", "\n".join(verdict.blocks), by="hook")
    read = [_problem(raw) or raw for raw in verdict.decisions]
    refused = next((one for one in read if isinstance(one, str)), None)
    if refused is not None:
        why = f"its answer could not be read ({refused}), so the call was refused"
        return Decision("deny", why, by="hook")
    answers = [one for one in read if isinstance(one, Mapping)]
    denied = next((one for one in answers if one.get("behavior") == "deny"), None)
    return denied or (answers[0] if answers else None)


def _problem(raw: object) -> str | None:
    """Why a hook's decision cannot be acted on (so the call is refused), or None."""
    if not isinstance(raw, Mapping):
        return f"its decision is {_shown(raw)}, not an object with a behavior"
    behavior = raw.get("behavior")
    if behavior == "allow":
        given = raw.get("updatedInput")
        if given is not None and not isinstance(given, Mapping):
            return f"its updatedInput is {_shown(given)}, not an object"
        return None
    if behavior == "deny":
        message, interrupt = raw.get("message"), raw.get("interrupt")
        if message is not None and not isinstance(message, str):
            return f"its deny message is {_shown(message)}, not text"
        if interrupt is not None and not isinstance(interrupt, bool):
            return f"its interrupt is {_shown(interrupt)}, not true or false"
        return None
    return f"its decision's behavior is {_shown(behavior)}, not allow or deny"


def suggestions(request: PermissionRequested) -> list[dict[str, Any]]:
    """The rules that would allow the call next time, as permission updates (the SDK's shape)."""
    found: list[dict[str, Any]] = []
    for text in request.suggestions:
        rule = Rule.parse(text)
        value = {"toolName": rule.tool}
        if rule.specifier is not None:
            value["ruleContent"] = rule.specifier
        found.append(
            {"type": "addRules", "rules": [value], "behavior": "allow", "destination": "session"}
        )
    return found


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
