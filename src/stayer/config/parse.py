"""One settings document's text → `Settings`, with every problem placed at its line and column.

A document that is not JSON (or not a JSON object) yields no settings. A known key with a
value of the wrong type costs only that value: it is dropped and the rest of the document
applies, so one typo does not take a project's deny rules with it (Claude Code likewise drops
a bad permission rule and keeps the others). A whitespace-only document is empty settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .locate import Path as KeyPath
from .locate import position, value_offsets
from .model import Settings

_DROPPED = object()
"""Stands in for a list item being dropped until the list is rebuilt without it."""


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong in a settings document, and where."""

    origin: str
    line: int
    column: int
    what: str
    fatal: bool
    """True when the document yields no settings at all."""

    def line_text(self, consequence: str) -> str:
        """The one line that reports it: `file:line:col: what; consequence`."""
        return f"{self.origin}:{self.line}:{self.column}: {self.what}; {consequence}"


@dataclass(frozen=True, slots=True)
class Parsed:
    """A document's settings (None if unusable), its problems, and where its values are."""

    settings: Settings | None
    problems: tuple[Problem, ...]
    text: str
    data: dict[str, Any]
    """The decoded document as written (before any value was dropped)."""
    offsets: dict[KeyPath, int]

    def line_of(self, path: Sequence[str | int]) -> int:
        """The line of the value at `path` (or of what encloses it)."""
        return position(self.text, self.offsets, path)[0] if self.text else 1


def parse_document(text: str, origin: str) -> Parsed:
    """Decode and type one settings document; `origin` names it in problems."""
    if not text.strip():
        return Parsed(Settings(), (), "", {}, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        what = f"not valid JSON ({error.msg})"
        return Parsed(None, (Problem(origin, error.lineno, error.colno, what, True),), text, {}, {})
    if not isinstance(data, dict):
        what = f"settings must be a JSON object ({{...}}), not {type(data).__name__}"
        return Parsed(None, (Problem(origin, 1, 1, what, True),), text, {}, {})
    return _typed(text, origin, data)


def _typed(text: str, origin: str, data: dict[str, Any]) -> Parsed:
    offsets = value_offsets(text)
    try:
        return Parsed(Settings.model_validate_json(text), (), text, data, offsets)
    except ValidationError as error:
        errors = error.errors(include_url=False)
    problems = []
    kept: Any = json.loads(text)
    for detail in errors:
        line, column = position(text, offsets, detail["loc"])
        problems.append(Problem(origin, line, column, _what(detail), False))
        _drop(kept, _droppable(detail))
    problems.sort(key=lambda problem: (problem.line, problem.column))  # in the file's order
    try:
        settings = Settings.model_validate_json(json.dumps(_rebuilt(kept)))
    except ValidationError as error:  # dropping what was wrong made something else wrong
        detail = error.errors(include_url=False)[0]
        line, column = position(text, offsets, detail["loc"])
        problems.append(Problem(origin, line, column, _what(detail), True))
        return Parsed(None, tuple(problems), text, data, offsets)
    return Parsed(settings, tuple(problems), text, data, offsets)


def _what(detail: ErrorDetails) -> str:
    """`key.path[2]: what pydantic says (got …)`."""
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in detail["loc"])
    message = detail["msg"].removeprefix("Value error, ")
    if detail["type"] == "missing":
        return f"{path.lstrip('.')}: a required key is missing"
    shown = json.dumps(detail["input"])
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{path.lstrip('.')}: {message[:1].lower()}{message[1:]} (got {shown})"


def _droppable(detail: ErrorDetails) -> KeyPath:
    """What to drop for an error: the bad value, or for a missing key the object lacking it."""
    loc = tuple(detail["loc"])
    return loc[:-1] if detail["type"] == "missing" else loc


def _drop(data: Any, path: KeyPath) -> None:
    if not path:
        return
    *parents, last = path
    for key in parents:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return  # already dropped with an enclosing value
    if isinstance(data, dict) and last in data:
        del data[last]
    elif isinstance(data, list) and isinstance(last, int) and last < len(data):
        data[last] = _DROPPED  # indexes of the other errors stay valid


def _rebuilt(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: _rebuilt(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_rebuilt(item) for item in data if item is not _DROPPED]
    return data
