"""The vocabulary of permissions: modes, a decision, the policy in force and its live mode."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeAlias, cast, get_args

from msgspec import Struct
from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.messages import JSON

from .rules import Rule

PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"
]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
MODE_ALIASES = {"manual": "default"}
"""Newer Claude Code names `default` `manual`; both are accepted."""

Behavior: TypeAlias = Literal["allow", "deny", "ask"]
Resolver: TypeAlias = Literal["policy", "user", "hook"]
"""Who settled a call: the rules and mode, a person (or the program answering for one), a hook."""


def parse_mode(value: str) -> PermissionMode:
    """A permission mode from its name; raises `ConfigError` for an unknown one."""
    name = MODE_ALIASES.get(value, value)
    if name in PERMISSION_MODES:
        return cast(PermissionMode, name)
    raise ConfigError(
        f"unknown permission mode {value!r}; use one of: {', '.join(PERMISSION_MODES)}"
    )


Question = Literal["mode", "rule", "protected", "plan"]


class Decision(Struct, frozen=True):
    """Allow, deny or ask, and why.

    `reason` is what the model reads when the call is denied; for an ask, it is what the model
    reads when nobody is there to answer (headless), so it says how the user can allow the call.
    `updated_input` replaces the call's input (checked against the tool's schema again).
    `rule` is the rule that decided, `suggestions` rules that would allow the call next time,
    and `mode` the permission mode the session switches to once the call is allowed (accepting
    a plan leaves plan mode). `by` says who decided, when not the policy.
    """

    behavior: Behavior
    reason: str = ""
    updated_input: Mapping[str, JSON] | None = None
    rule: str | None = None
    suggestions: tuple[str, ...] = ()
    mode: PermissionMode | None = None
    by: Resolver | None = None
    question: Question | None = None
    """For an ask, what asks: the mode (`mode`: nobody allowed it, which a PreToolUse hook's
    allow may answer), an ask rule (`rule`), a protected path (`protected`) or leaving plan
    mode (`plan`); the last three only a person answers."""


class PermissionPolicy(Struct, frozen=True):
    """The mode and rules in force for a run."""

    mode: PermissionMode = "default"
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    directories: tuple[Path, ...] = ()
    """Working directories besides the run's own (``--add-dir``), resolved."""
    after_plan: PermissionMode = "default"
    """The mode an accepted plan returns to: the one the session was in before plan mode."""

    def hides(self, tool: str) -> bool:
        """Whether a whole-tool deny rule removes `tool` from what the model is shown."""
        return any(rule.names(tool) and rule.specifier is None for rule in self.deny)


class PermissionState:
    """A session's policy, whose mode is live: it changes during the session (an accepted plan
    leaves plan mode; a front end may switch it), and every check reads it as it is now.
    Mutable on purpose, and the only mutable thing here."""

    __slots__ = ("policy",)

    def __init__(self, policy: PermissionPolicy) -> None:
        self.policy = policy

    @property
    def mode(self) -> PermissionMode:
        return self.policy.mode

    def set_mode(self, mode: PermissionMode) -> None:
        """Switch the mode for every later check; entering plan mode remembers where to return."""
        if mode == self.policy.mode:
            return
        after = self.policy.mode if mode == "plan" else self.policy.after_plan
        self.policy = replace(self.policy, mode=mode, after_plan=after)
