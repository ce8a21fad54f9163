"""What one hook run said, typed, and what all of an event's runs say together.

Claude Code's protocol: exit status 0 is fine, and stdout that is a JSON object is read
(`continue`/`stopReason`, `decision`/`reason`, `systemMessage`, `hookSpecificOutput` with
`permissionDecision`, `permissionDecisionReason`, `updatedInput` and `additionalContext`);
other stdout is plain text. Exit status 2 blocks, and stderr is the word the model (or the
user) gets; its stdout is not read. Any other status is a failure that blocks nothing: the
action goes on and the user is told. JSON that starts like an object but is not one, or that
gives a known field a value of the wrong type, is such a failure too (never a crash).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec
from msgspec import Struct, field
from msgspec.structs import replace

from stayer.config.typing_errors import located
from stayer.events import HookOutcome
from stayer.exec import CommandResult

PermissionWord = Literal["allow", "deny", "ask"]


class _Specific(Struct, frozen=True, rename="camel"):
    """`hookSpecificOutput`; keys we do not know are ignored, known ones typed strictly."""

    hook_event_name: str | None = None
    permission_decision: PermissionWord | None = None
    permission_decision_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    decision: Any = None
    """PermissionRequest's answer (`{behavior, ...}`), kept as given: the session reads it,
    and refuses the call when it cannot."""


class _Output(Struct, frozen=True, rename="camel"):
    """A hook's JSON stdout, Claude Code's keys."""

    go_on: bool = field(default=True, name="continue")
    stop_reason: str | None = None
    suppress_output: bool = False
    decision: Literal["approve", "block"] | None = None
    reason: str | None = None
    system_message: str | None = None
    hook_specific_output: _Specific | None = None


_CAMEL = {
    name: encoded
    for struct in (_Output, _Specific)
    for name, encoded in zip(struct.__struct_fields__, struct.__struct_encode_fields__, strict=True)
    if name != encoded and name != "go_on"
}
"""snake_case → camelCase for the keys whose spellings differ (`stop_reason` → `stopReason`)."""


class HookReply(Struct, frozen=True):
    """One run, read: how it ended and what it asked for."""

    command: str
    outcome: HookOutcome
    exit_code: int | None = None
    message: str = ""
    """The blocking or failing word (stderr, the reason), or what was wrong with the output."""
    stdout: str = ""
    stderr: str = ""
    stop: str | None = None
    """Set when the hook said `continue: false`: its `stopReason` (may be empty)."""
    permission: PermissionWord | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str | None = None
    """`additionalContext`, for the model."""
    plain: str = ""
    """Stdout that was not JSON (context for UserPromptSubmit and SessionStart)."""
    system_message: str | None = None
    decision: Any = None
    """A PermissionRequest hook's `hookSpecificOutput.decision`, unread (None: none given)."""


def read_reply(command: str, result: CommandResult, timeout_s: float) -> HookReply:
    """What a finished (or timed out) run said."""
    base = HookReply(
        command, "success", result.exit_code, stdout=result.stdout, stderr=result.stderr
    )
    if result.timed_out:
        return _with(base, "timeout", f"did not finish within {timeout_s:g} s and was stopped")
    if result.exit_code == 2:
        return _with(base, "blocked", result.stderr.strip() or "No stderr output")
    if result.exit_code != 0:
        said = result.stderr.strip() or result.stdout.strip()
        return _with(base, "error", said or f"exited with status {result.exit_code}")
    return _read_stdout(base, result.stdout.strip())


def _with(base: HookReply, outcome: HookOutcome, message: str) -> HookReply:
    return replace(base, outcome=outcome, message=message)


def _read_stdout(base: HookReply, text: str) -> HookReply:
    if not text.startswith("{"):
        return replace(base, plain=text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _with(base, "error", f"its output looks like JSON but is not ({exc.msg})")
    except ValueError as exc:  # a number too long to read, say
        return _with(base, "error", f"its output looks like JSON but is not ({exc})")
    except RecursionError:
        return _with(base, "error", "its JSON output is nested too deeply to read")
    return read_output(base, data)


def read_output(base: HookReply, data: Any) -> HookReply:
    """`base` with what a hook's JSON output (`data`, already parsed: a command's stdout, a
    callback's reply) asks for; output of the wrong shape makes it a failed run."""
    try:
        data = _camel(data)
        output = msgspec.convert(data, _Output)
    except msgspec.ValidationError as exc:
        _, what = located(exc, data, _Output)
        return _with(base, "error", f"its JSON output is not usable: {what}")
    except RecursionError:
        return _with(base, "error", "its JSON output is nested too deeply to read")
    specific = output.hook_specific_output or _Specific()
    blocked = output.decision == "block"
    return replace(
        base,
        outcome="blocked" if blocked else "success",
        message=(output.reason or "Blocked by a hook") if blocked else (output.reason or ""),
        stop=None if output.go_on else (output.stop_reason or ""),
        permission=specific.permission_decision or _legacy(output.decision),
        permission_reason=specific.permission_decision_reason or output.reason or "",
        updated_input=specific.updated_input,
        context=specific.additional_context,
        system_message=output.system_message,
        decision=specific.decision,
    )


def _camel(data: Any) -> Any:
    """Known keys given in snake_case (`permission_decision`) as the camelCase the protocol
    names them: hooks written that way were read so before, and a deny must not be lost."""
    if not isinstance(data, dict):
        return data
    renamed = {_CAMEL.get(key, key): value for key, value in data.items() if key not in _CAMEL}
    for key, value in data.items():
        if key in _CAMEL:
            renamed.setdefault(_CAMEL[key], value)  # the camelCase spelling wins
    specific = renamed.get("hookSpecificOutput")
    if isinstance(specific, dict):
        renamed["hookSpecificOutput"] = _camel(specific)
    return renamed


def _legacy(decision: Literal["approve", "block"] | None) -> PermissionWord | None:
    """The older top-level `decision` as a PreToolUse permission word."""
    if decision is None:
        return None
    return "allow" if decision == "approve" else "deny"


class Verdict(Struct, frozen=True):
    """All the runs of one event together (they ran side by side, so no order is meant)."""

    replies: tuple[HookReply, ...] = ()

    @property
    def blocks(self) -> tuple[str, ...]:
        """The blocking words, each with its command (`[cmd]: stderr`)."""
        return tuple(
            f"[{reply.command}]: {reply.message}"
            for reply in self.replies
            if reply.outcome == "blocked"
        )

    @property
    def stop(self) -> str | None:
        """Why a hook said `continue: false` (the first reason given), else None."""
        stops = [reply.stop for reply in self.replies if reply.stop is not None]
        if not stops:
            return None
        return next((why for why in stops if why), "")

    @property
    def permission(self) -> tuple[PermissionWord, str] | None:
        """The strongest permission word and its reason: deny over ask over allow."""
        for word in ("deny", "ask", "allow"):
            for reply in self.replies:
                if reply.permission == word:
                    return word, reply.permission_reason
        return None

    @property
    def updated_input(self) -> dict[str, Any] | None:
        """The input a hook rewrote the call to (the last that gave one)."""
        given = [reply.updated_input for reply in self.replies if reply.updated_input is not None]
        return given[-1] if given else None

    @property
    def decisions(self) -> tuple[Any, ...]:
        """The PermissionRequest decisions the hooks gave, as given (unread)."""
        return tuple(reply.decision for reply in self.replies if reply.decision is not None)

    def context(self, *, plain: bool = False) -> tuple[str, ...]:
        """`additionalContext`s, and with `plain` the stdout that was not JSON."""
        found: list[str] = []
        for reply in self.replies:
            if reply.context:
                found.append(reply.context)
            if plain and reply.plain and reply.outcome == "success":
                found.append(reply.plain)
        return tuple(found)
