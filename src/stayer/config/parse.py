"""One settings document's text → `Settings`, with every problem placed at its line and column.

Problems come in two weights. A *minor* one is a bad value of a key that guards nothing
(`model.UNGUARDED_KEYS`): that value is dropped and the rest of the document applies. Every
other problem makes the document unusable, so no part of it is used: a document that is not
JSON or not an object, a bad value of a key that guards (a permission list or mode, a hook, …),
a guarding key given twice in one object (JSON keeps only the last, so the first one's rules
would vanish unseen), and a permission rule the caller's `rule_problem` refuses (the rule
syntax belongs to `stayer.permissions`, above this layer). Using such a document in part could
leave a deny rule or a hook out without anyone noticing; the caller decides what to do with it
(see `sources`). A whitespace-only document is empty settings.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec import Struct

from .locate import Layout, layout, line_col, position
from .locate import Path as KeyPath
from .model import UNGUARDED_KEYS, Permissions, Settings
from .typing_errors import dotted, located

RuleCheck = Callable[[str], str | None]
"""What is wrong with one permission rule's text, or None if it parses."""

_KNOWN_KEYS = frozenset(Settings.__struct_encode_fields__)
_RULE_KINDS = ("allow", "ask", "deny")


class Problem(Struct, frozen=True):
    """What is wrong in a settings document, and where (no line for a file that could not be
    read at all)."""

    origin: str
    line: int | None
    column: int | None
    what: str
    minor: bool
    """True when only the bad value is dropped; False when the document cannot be used."""

    def line_text(self, consequence: str) -> str:
        """The one line that reports it: `file:line:col: what; consequence`."""
        place = self.origin if self.line is None else f"{self.origin}:{self.line}:{self.column}"
        return f"{place}: {self.what}; {consequence}"


class Parsed(Struct, frozen=True):
    """A document's settings (None if it cannot be used), its problems in the file's order, and
    where its values are."""

    settings: Settings | None
    problems: tuple[Problem, ...]
    text: str
    offsets: dict[KeyPath, int]

    @property
    def serious(self) -> Problem | None:
        """The first problem that makes the document unusable, if any."""
        return next((problem for problem in self.problems if not problem.minor), None)

    def place(self, path: Sequence[str | int]) -> tuple[int, int]:
        """The line and column of the value at `path` (or of what encloses it)."""
        return position(self.text, self.offsets, path) if self.text else (1, 1)


def parse_document(text: str, origin: str, *, rule_problem: RuleCheck | None = None) -> Parsed:
    """Decode and type one settings document; `origin` names it in problems, and
    `rule_problem` judges each permission rule."""
    if not text.strip():
        return Parsed(Settings(), (), "", {})
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            what = f"settings must be a JSON object ({{...}}), not {type(data).__name__}"
            return Parsed(None, (Problem(origin, 1, 1, what, False),), text, {})
        return _typed(text, origin, data, layout(text), rule_problem)
    except json.JSONDecodeError as error:
        what = f"not valid JSON ({error.msg})"
        return Parsed(None, (Problem(origin, error.lineno, error.colno, what, False),), text, {})
    except ValueError as error:  # a number too long to read (over 4,300 digits), say
        what = f"not valid JSON ({error})"
        return Parsed(None, (Problem(origin, 1, 1, what, False),), text, {})
    except RecursionError:  # no settings nest so deep; a traceback would be no answer
        what = "nested too deeply to be settings"
        return Parsed(None, (Problem(origin, 1, 1, what, False),), text, {})


def _typed(
    text: str, origin: str, data: dict[str, Any], where: Layout, rule_problem: RuleCheck | None
) -> Parsed:
    settings, problems = _converted(text, origin, data, where)
    problems += _repeated(origin, text, where)
    problems += _near_misses(origin, text, where, data)
    if settings is not None and rule_problem is not None:
        problems += _bad_rules(origin, text, where, settings, rule_problem)
    problems.sort(key=lambda problem: (problem.line or 0, problem.column or 0))  # file order
    if settings is None or any(not problem.minor for problem in problems):
        return Parsed(None, tuple(problems), text, where.offsets)
    return Parsed(settings, tuple(problems), text, where.offsets)


def _converted(
    text: str, origin: str, data: dict[str, Any], where: Layout
) -> tuple[Settings | None, list[Problem]]:
    """The document typed, with the problems found on the way. msgspec stops at the first bad
    value: one of a key that guards nothing is dropped and the typing tried again; any other
    makes the document unusable, so typing stops there."""
    problems: list[Problem] = []
    while True:
        try:
            return msgspec.convert(data, Settings), problems
        except msgspec.ValidationError as error:
            path, what = located(error, data, Settings)
        line, column = position(text, where.offsets, path)
        minor = bool(path) and path[0] in UNGUARDED_KEYS
        if minor and len(path) > 1 and path[0] != "env":
            what += f" (so all of {path[0]} in this file is left out)"  # not just this entry
        problems.append(Problem(origin, line, column, what, minor))
        if not minor:
            return None, problems
        # `env` loses only its bad entry; any other such key (an object like `statusLine`
        # too: half of one is no use) is dropped whole
        if not _drop(data, path if path[0] == "env" else path[:1]):  # fail closed (cannot be)
            what = "what is left after dropping the bad values is not valid settings"
            problems.append(Problem(origin, 1, 1, what, False))
            return None, problems


def _repeated(origin: str, text: str, where: Layout) -> list[Problem]:
    """A known key that guards, or anything inside one, given twice in one object."""
    found = []
    for path in where.repeated:
        if path[0] not in _KNOWN_KEYS or path[0] in UNGUARDED_KEYS:
            continue
        line, column = line_col(text, where.offsets[path])
        what = f"{dotted(path)}: given twice in one object (only the last would count)"
        found.append(Problem(origin, line, column, what, False))
    return found


_GUARDED_KEYS = tuple(sorted(_KNOWN_KEYS - UNGUARDED_KEYS))
_PERMISSION_KEYS = Permissions.__struct_encode_fields__


def _near_misses(origin: str, text: str, where: Layout, data: dict[str, Any]) -> list[Problem]:
    """An unknown key that is a guarding key misspelled (`permisions`, `Deny`): kept as
    unknown, its rules would not apply, and nobody would notice."""
    found = []
    places: list[tuple[KeyPath, dict[str, Any], tuple[str, ...]]] = [((), data, _GUARDED_KEYS)]
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        places.append((("permissions",), permissions, _PERMISSION_KEYS))
    for path, mapping, known in places:
        for key in mapping:
            if key in known or (not path and key in _KNOWN_KEYS):
                continue
            meant = _meant(key, known)
            if meant is None:
                continue
            line, column = position(text, where.offsets, (*path, key))
            what = (
                f"{dotted((*path, key))}: not a settings key; did you mean {meant}? (as it "
                "is, it would not apply)"
            )
            found.append(Problem(origin, line, column, what, False))
    return found


def _meant(key: str, known: tuple[str, ...]) -> str | None:
    """The known key `key` most likely misspells, if any."""
    folded = {name.casefold(): name for name in known}
    if key.casefold() in folded:
        return folded[key.casefold()]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return close[0] if close else None


def _bad_rules(
    origin: str, text: str, where: Layout, settings: Settings, rule_problem: RuleCheck
) -> list[Problem]:
    """Each permission rule that does not parse, at its place."""
    found = []
    for kind in _RULE_KINDS:
        rules: tuple[str, ...] = getattr(settings.permissions, kind)
        for index, rule in enumerate(rules):
            what = rule_problem(rule)
            if what is None:
                continue
            path = ("permissions", kind, index)
            line, column = position(text, where.offsets, path)
            found.append(Problem(origin, line, column, f"{dotted(path)}: {what}", False))
    return found


def _drop(data: Any, path: KeyPath) -> bool:
    """Delete the value at `path` from its object; False if it is not in one (an array item:
    the places of the problems found next would shift)."""
    *parents, last = path
    for key in parents:
        data = data[key]
    if isinstance(data, dict) and last in data:
        del data[last]
        return True
    return False
