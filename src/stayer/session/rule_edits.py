"""Permission rules added and removed while a session runs, and the rules in force shown whole.

A person answering "yes, and don't ask again" or editing rules in `/permissions` changes the
session's live permission state (`PermissionState.add_rule`, `remove_rule`): the change applies
to the very next check, a running submission's included, and reaches the sessions derived from
this one. With `save`, it is also written to the project's `.stayer/settings.local.json`
(`stayer.config.local_rules`), so later sessions in the project start with it; the file is
written before the session changes, so a file that cannot be written leaves both as they were.

A rule is checked as a settings file's would be (one rule, `Tool` or `Tool(pattern)`); a
`/path` specifier is relative to the project, as it is in the local settings file. Deny rules
win as always: allowing what a deny rule names lets nothing through.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from msgspec import Struct

from stayer.config.local_rules import add_local_rule, local_settings_path, remove_local_rule
from stayer.errors import ConfigError
from stayer.permissions import (
    Behavior,
    PermissionMode,
    PermissionPolicy,
    PermissionState,
    Rule,
    parse_rules,
)

from .assemble import Setup
from .resolve import with_preapproved
from .settings import placed_rule

RuleKind = Literal["allow", "deny", "ask"]
_KINDS: tuple[RuleKind, ...] = ("allow", "deny", "ask")
SESSION_ORIGIN = "session"
"""Where a rule added for this session only (not saved) comes from."""
FLAG_ORIGIN = "flag"
"""Where a rule the session was opened with comes from (`--allowedTools`, `--disallowedTools`,
the options' lists)."""
BUILT_IN_ORIGIN = "built-in"
"""Where the allow rules for the documentation sites WebFetch reads unasked come from."""


class RuleEntry(Struct, frozen=True):
    """One rule in force, and where it came from: a settings file's path (or `--settings`),
    `flag`, `session` (added while the session ran, not saved) or `built-in`."""

    rule: str
    origin: str


class RulesView(Struct, frozen=True):
    """The permission mode and the rules in force now, by kind, each with its origin."""

    mode: PermissionMode
    allow: tuple[RuleEntry, ...]
    deny: tuple[RuleEntry, ...]
    ask: tuple[RuleEntry, ...]


class RuleEdits:
    """One session's rule edits and the origins of the rules it knows (see the module)."""

    def __init__(self, setup: Setup) -> None:
        self._state: PermissionState = setup.permissions
        resolved = setup.resolved
        self._project: Path | None = None if resolved is None else resolved.cwd
        self._origins: dict[tuple[RuleKind, Rule], str] = (
            {} if resolved is None else _settings_origins(setup)
        )
        env = {} if resolved is None else resolved.env
        self._built_in = set(with_preapproved(PermissionPolicy(), env).allow)

    def add(self, kind: RuleKind, text: str, *, save: bool) -> None:
        """Put the rule among `kind`'s now, and with `save` in the local settings file first;
        raises `ConfigError` in one line for a malformed rule or a file that cannot be used."""
        if kind not in _KINDS:
            raise ConfigError(f"unknown kind of rule {kind!r}; use allow, deny or ask")
        rule = self._parsed(text)
        if save:
            project = self._saving_to()
            add_local_rule(project, kind, text.strip(), same=self._same(rule))
            # saved: the file is where it comes from now, wherever it came from before
            self._origins[(kind, rule)] = str(local_settings_path(project))
        else:
            self._origins.setdefault((kind, rule), SESSION_ORIGIN)
        self._state.add_rule(kind, rule)

    def remove(self, text: str, *, save: bool) -> bool:
        """Take the rule out of every kind now, and with `save` out of the local settings file
        too; whether it was in force or in that file. Raises `ConfigError` as `add` does."""
        rule = self._parsed(text)
        saved = False
        if save:
            saved = remove_local_rule(self._saving_to(), text.strip(), same=self._same(rule))
        kinds = self._state.remove_rule(rule)
        for kind in kinds:
            self._origins.pop((kind, rule), None)
        return bool(kinds) or saved

    def view(self) -> RulesView:
        """The rules in force now, with the origin of each."""
        policy = self._state.policy

        def entries(kind: Behavior, rules: tuple[Rule, ...]) -> tuple[RuleEntry, ...]:
            return tuple(RuleEntry(str(rule), self._origin(kind, rule)) for rule in rules)

        return RulesView(
            policy.mode,
            entries("allow", policy.allow),
            entries("deny", policy.deny),
            entries("ask", policy.ask),
        )

    def _origin(self, kind: Behavior, rule: Rule) -> str:
        known = self._origins.get((kind, rule))
        if known is not None:
            return known
        return BUILT_IN_ORIGIN if kind == "allow" and rule in self._built_in else FLAG_ORIGIN

    def _saving_to(self) -> Path:
        if self._project is None:
            raise ConfigError("this session was not opened from options, so it has no project")
        return self._project

    def _parsed(self, text: str) -> Rule:
        """The rule as the session holds it: parsed, a `/path` made absolute from the project."""
        rule = checked_rule(text)
        if self._project is None:
            return rule
        anchored = placed_rule(rule, self._project)
        return rule if anchored is None else Rule.parse(anchored)

    def _same(self, rule: Rule) -> Callable[[str], bool]:
        """Whether an entry of the local settings file is `rule` (as the session reads it)."""

        def same(entry: str) -> bool:
            try:
                return self._parsed(entry) == rule
            except ConfigError:
                return False

        return same


def checked_rule(text: str) -> Rule:
    """One permission rule from `text`; raises `ConfigError` in one line saying what is wrong
    and how to write one."""
    example = "such as Bash(npm test:*), Read(./src/**) or WebFetch(domain:example.com)"
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"the permission rule is empty; write Tool or Tool(pattern), {example}")
    try:
        count = len(parse_rules([text]))
        rule = Rule.parse(text) if count == 1 else None
    except ConfigError:
        raise ConfigError(
            f"bad permission rule {text.strip()!r}; write Tool or Tool(pattern), {example}"
        ) from None
    if rule is None:
        raise ConfigError(
            f"{text.strip()!r} reads as {count} rules; give one rule at a time, {example}"
        )
    return rule


def _settings_origins(setup: Setup) -> dict[tuple[RuleKind, Rule], str]:
    """The settings file each settings rule came from, keyed as the session holds the rule."""
    assert setup.resolved is not None
    loaded = setup.resolved.settled.loaded
    found: dict[tuple[RuleKind, Rule], str] = {}
    for kind in _KINDS:
        for source in getattr(loaded, kind):
            parsed = Rule.parse(source.text)
            rule = Rule.parse(placed_rule(parsed, source.root) or source.text)
            found.setdefault((kind, rule), source.origin)
    return found
