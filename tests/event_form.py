"""Events as plain values, so a test can assert a whole stream at once (as an inline snapshot).

Each event becomes a dict: its `type` first, then every field that differs from its default,
as their JSON gives them. What differs from run to run is left out (durations, generated ids, the
conversation `Finished` carries, whose outcome the other fields already give) and the folders a
test made, and this Python, are named by placeholders, so a snapshot stays the same on every
machine and every run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import msgspec.json
import msgspec.structs

from stayer.events import Event, StreamEvent

VARYING = frozenset(
    {"duration_ms", "duration_api_ms", "delay_s", "session_id", "message_id", "hook_id"}
)
"""Fields whose values change from run to run."""
LEFT_OUT = frozenset({"messages", "tools", "tool_tokens", "agents"})
"""Fields too large for a stream's value (the conversation at the end, every tool the session
offers and what their definitions cost, every agent type: a new built-in tool or agent, or a
reworded description, would change every snapshot); tests that care assert on them directly."""


def plain(event: Event, places: Mapping[Path, str] | None = None) -> dict[str, Any]:
    """`event` as a dict of builtins: `type`, then the fields that are not at their default.

    `places` names folders (say `{tmp_path: "<tmp>"}`) to put in place of their paths in any
    string; the running Python is always `<python>`."""
    form: dict[str, Any] = {"type": event.type}
    for field in msgspec.structs.fields(event):
        value = getattr(event, field.name)
        if field.name in VARYING or field.name in LEFT_OUT or field.name == "type":
            continue
        if not field.required and value == _default(field):
            continue
        form[field.name] = msgspec.json.decode(msgspec.json.encode(value))
    replacements = [(str(path), label) for path, label in (places or {}).items()]
    replacements += [(str(path.resolve()), label) for path, label in (places or {}).items()]
    replacements.append((sys.executable, "<python>"))
    longest_first = sorted(replacements, key=lambda pair: -len(pair[0]))
    return {key: _replace(value, longest_first) for key, value in form.items()}


def stream(
    events: Iterable[Event],
    places: Mapping[Path, str] | None = None,
    *,
    deltas: bool = False,
) -> list[dict[str, Any]]:
    """Every event in `events` as `plain` gives it; the model's streaming events (text deltas,
    block starts) only if `deltas` is true."""
    return [
        plain(event, places) for event in events if deltas or not isinstance(event, StreamEvent)
    ]


def _default(field: msgspec.structs.FieldInfo) -> object:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return field.default


def _replace(value: Any, replacements: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {key: _replace(item, replacements) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, replacements) for item in value]
    return value
