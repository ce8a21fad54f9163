"""The vocabulary of permissions: modes, a decision, the policy in force and its live mode and
rules."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
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
    """A session's policy, whose mode and rules are live: they change during the session (an
    accepted plan leaves plan mode; a front end may switch the mode, or add and remove rules),
    and every check reads the policy as it is now. Mutable on purpose, and the only mutable
    thing here. The policy itself stays a frozen value, replaced whole at each change.

    States that `follow` this one (a child session's) get each later rule edit too, so a rule
    removed here stops applying there at once, and a deny rule added here applies there; and
    each mode switch, which they bound themselves by (`leader_switched`)."""

    __slots__ = ("__weakref__", "_followers", "_watchers", "policy")

    def __init__(self, policy: PermissionPolicy) -> None:
        self.policy = policy
        self._followers: weakref.WeakSet[PermissionState] = weakref.WeakSet()
        self._watchers: list[Callable[[PermissionPolicy], None]] = []

    @property
    def mode(self) -> PermissionMode:
        return self.policy.mode

    def set_mode(self, mode: PermissionMode) -> None:
        """Switch the mode for every later check; entering plan mode remembers where to return."""
        if mode == self.policy.mode:
            return
        after = self.policy.mode if mode == "plan" else self.policy.after_plan
        self.policy = replace(self.policy, mode=mode, after_plan=after)
        for follower in list(self._followers):
            follower.leader_switched(mode)

    def leader_switched(self, mode: PermissionMode) -> None:
        """The state this one follows switched to `mode`. A plain follower keeps its own mode;
        one bounded by its leader (a subagent's) narrows to it."""

    def watch_rules(self, watcher: Callable[[PermissionPolicy], None]) -> None:
        """Call `watcher` with the new policy after each change of the rules (what is derived
        from the rules, such as the files searches leave out, is kept in step by it)."""
        self._watchers.append(watcher)

    def follow(self, follower: PermissionState) -> None:
        """Hand every later rule edit and mode switch of this state to `follower` as well (it
        is held weakly: a child that is gone is forgotten)."""
        self._followers.add(follower)

    def add_rule(self, kind: Behavior, rule: Rule) -> bool:
        """Put `rule` among the `kind` rules for every later check (deny rules win over the
        others wherever they are, as always); False when it was there already."""
        held = _rules_of(self.policy, kind)
        added = rule not in held
        if added:
            self._change(replace(self.policy, **{kind: (*held, rule)}))
        for follower in list(self._followers):
            follower.add_rule(kind, rule)
        return added

    def remove_rule(self, rule: Rule) -> tuple[Behavior, ...]:
        """Take `rule` out of every kind that holds it, for every later check; the kinds it
        was taken from (none: it was not in force here)."""
        kinds = tuple(kind for kind in _KINDS if rule in _rules_of(self.policy, kind))
        if kinds:
            changes = {k: tuple(r for r in _rules_of(self.policy, k) if r != rule) for k in kinds}
            self._change(replace(self.policy, **changes))
        for follower in list(self._followers):
            follower.remove_rule(rule)
        return kinds

    def _change(self, policy: PermissionPolicy) -> None:
        self.policy = policy
        for watcher in self._watchers:
            watcher(policy)


_KINDS: tuple[Behavior, ...] = get_args(Behavior)


def _rules_of(policy: PermissionPolicy, kind: Behavior) -> tuple[Rule, ...]:
    return {"allow": policy.allow, "deny": policy.deny, "ask": policy.ask}[kind]
