"""The permission updates an answer carries (`updatedPermissions` of the SDK's `can_use_tool`
answer or of a PermissionRequest hook's allow), applied to the session they came for.

Each update names a `type` and a `destination` (protocols.md §1.5). stayer applies what it can:
rules added, replaced and removed for the session (`session`), and also written to the
project's `.stayer/settings.local.json` (`localSettings`); a mode switch. A rule meant for the
project's or the user's shared settings (`projectSettings`, `userSettings`) holds for this
session only, since stayer writes no shared settings file; working directories cannot change
while a session runs. Everything not applied as asked is one line for `warn` (standard error),
never dropped in silence.

Removing is held to what the destination put there: a rule comes out only when every place
that holds it is the destination named and the kind named, so an update never takes a deny
rule of the settings (or a rule of another kind) away with it. Deny rules win as always: an
allow rule added here lets nothing through that a deny rule names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol

from stayer.config.local_rules import local_settings_path
from stayer.errors import ConfigError
from stayer.permissions import PermissionMode, parse_mode
from stayer.session.assemble import Setup
from stayer.session.rule_edits import SESSION_ORIGIN, RulesView, checked_rule
from stayer.session.shown import shown as _shown

Kind = Literal["allow", "deny", "ask"]
KINDS: tuple[Kind, ...] = ("allow", "deny", "ask")
SAVED = "localSettings"
KEPT_FOR_SESSION = ("projectSettings", "userSettings")
DESTINATIONS = ("session", SAVED, *KEPT_FOR_SESSION)


class Session(Protocol):
    """What updates are applied to: a `stayer.Session`'s rules and mode."""

    @property
    def setup(self) -> Setup: ...

    def add_rule(self, kind: Kind, rule: str, *, save: bool) -> None: ...

    def remove_rule(self, rule: str, *, save: bool) -> bool: ...

    def rules(self) -> RulesView: ...

    def check_mode(self, mode: PermissionMode) -> PermissionMode: ...


class Updates:
    """Applies one answer's updates to `session`, each problem one line for `warn`."""

    def __init__(self, session: Session, warn: Callable[[str], None]) -> None:
        self._session = session
        self._warn = warn

    def apply(self, updates: object) -> PermissionMode | None:
        """Apply `updates` (the answer's `updatedPermissions`); returns the mode a `setMode`
        asks for (the session's decider switches to it once the call is allowed), else None."""
        if updates is None:
            return None
        if not isinstance(updates, Sequence) or isinstance(updates, str):
            self._warn("updatedPermissions is not a list of updates; none was applied")
            return None
        mode: PermissionMode | None = None
        for update in updates:
            try:
                mode = self._one(update) or mode
            except ConfigError as error:
                self._warn(f"permission update not applied: {error}")
        return mode

    def _one(self, update: object) -> PermissionMode | None:
        if not isinstance(update, Mapping):
            raise ConfigError(f"{_shown(update)} is not an object with a type")
        kind, destination = update.get("type"), update.get("destination") or "session"
        if destination not in DESTINATIONS:
            raise ConfigError(
                f"{kind}: unknown destination {_shown(destination)}; stayer knows "
                f"{', '.join(DESTINATIONS)}"
            )
        if kind == "setMode":
            return self._mode(update.get("mode"), str(destination))
        if kind in ("addDirectories", "removeDirectories"):
            raise ConfigError(
                f"{kind}: stayer cannot change the working directories while a session runs; "
                "start it with --add-dir (add_dirs) instead"
            )
        if kind not in ("addRules", "replaceRules", "removeRules"):
            raise ConfigError(
                f"unknown update type {_shown(kind)}; stayer knows addRules, replaceRules, "
                "removeRules, setMode, addDirectories and removeDirectories"
            )
        behavior, rules = _behavior(update.get("behavior"), kind), _rules(update.get("rules"))
        if kind == "replaceRules":
            self._clear(behavior, str(destination))
        for rule in rules:
            if kind == "removeRules":
                self._remove(behavior, rule, str(destination))
            else:
                self._add(behavior, rule, str(destination))
        return None

    def _mode(self, given: object, destination: str) -> PermissionMode:
        mode = parse_mode(given) if isinstance(given, str) else None
        if mode is None:
            raise ConfigError(f"setMode needs a mode (a string), not {_shown(given)}")
        self._session.check_mode(mode)  # bypassPermissions only where the session allows it
        if destination != "session":
            self._warn(
                f"setMode {mode} applies to this session only: stayer does not write a default "
                f"mode to {destination}"
            )
        return mode

    def _add(self, behavior: Kind, rule: str, destination: str) -> None:
        self._session.add_rule(behavior, rule, save=destination == SAVED)
        if destination in KEPT_FOR_SESSION:
            self._warn(
                f"{behavior} rule {rule} holds for this session only: stayer writes rules to the "
                f"project's .stayer/settings.local.json (localSettings), not to {destination}"
            )

    def _remove(self, behavior: Kind, rule: str, destination: str) -> None:
        holders = _holders(self._session.rules(), str(checked_rule(rule)))
        origin = self._origin(destination)
        if not holders:
            return  # nothing to take away: the session already goes without it
        if holders != {(behavior, origin)}:
            places = ", ".join(f"{kind} from {where}" for kind, where in sorted(holders))
            self._warn(
                f"{behavior} rule {rule} was not removed: it is held as {places}, and an update "
                f"for {destination} takes away only its own {behavior} rules"
            )
            return
        self._session.remove_rule(rule, save=destination == SAVED)

    def _clear(self, behavior: Kind, destination: str) -> None:
        """What `replaceRules` takes away first: the destination's own rules of that kind."""
        origin = self._origin(destination)
        entries = getattr(self._session.rules(), behavior)
        for entry in entries:
            if entry.origin == origin:
                self._remove(behavior, entry.rule, destination)

    def _origin(self, destination: str) -> str:
        """Where the session says a rule of `destination` comes from."""
        if destination != SAVED:
            return SESSION_ORIGIN
        resolved = self._session.setup.resolved
        if resolved is None:
            raise ConfigError("this session has no project, so it has no local settings file")
        return str(local_settings_path(resolved.cwd))


def _holders(view: RulesView, rule: str) -> set[tuple[str, str]]:
    """Every (kind, origin) under which the session holds `rule`."""
    held = ((kind, entry) for kind in KINDS for entry in getattr(view, kind))
    return {(kind, entry.origin) for kind, entry in held if entry.rule == rule}


def _behavior(given: object, kind: object) -> Kind:
    if given not in KINDS:
        raise ConfigError(f"{kind} needs a behavior (allow, deny or ask), not {_shown(given)}")
    return given


def _rules(given: object) -> list[str]:
    """The rules of an update as stayer writes them: `Tool` or `Tool(content)`."""
    if not isinstance(given, Sequence) or isinstance(given, str):
        raise ConfigError(f"rules must be a list of {{toolName, ruleContent}}, not {_shown(given)}")
    texts = []
    for rule in given:
        name = rule.get("toolName") if isinstance(rule, Mapping) else None
        content = rule.get("ruleContent") if isinstance(rule, Mapping) else None
        if not isinstance(name, str) or not name or not isinstance(content, str | None):
            raise ConfigError(f"a rule needs a toolName and a text ruleContent: {_shown(rule)}")
        text = name if not content else f"{name}({content})"
        checked_rule(text)  # a malformed one stops the update before any of it applies
        texts.append(text)
    return texts
