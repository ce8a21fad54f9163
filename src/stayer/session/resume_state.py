"""What a resumed session takes back besides its conversation: the permission mode it was left
in and the model's todo list, both recorded in its transcript.

The mode comes back as Claude Code brings it back (as if it had been given with
`--permission-mode`), unless the new run names a mode itself, which wins. A transcript can come
from anywhere (`--resume PATH`, another harness's files, a copy someone shared), so a mode that
asks less than `default` comes back only from a session stayer saved in its own folder for this
project, and `bypassPermissions`, which takes every question away, never comes back from a file:
only the person starting the run turns it on (`--dangerously-skip-permissions`). A mode left
behind is said, and the run goes on in the mode it starts in. Any mode other than `default` that
comes back is named on standard error, so a more permissive one (`acceptEdits`) is never silent.
"""

from __future__ import annotations

from typing import cast, get_args

from msgspec.structs import replace

from stayer.messages import JSON
from stayer.permissions.policy import MODE_ALIASES, PERMISSION_MODES
from stayer.tools.base import TodoItem, TodoStatus

from .options import QueryOptions
from .transcript import Loaded

NEVER_RESTORED = "bypassPermissions"
ASKS_LESS = ("acceptEdits",)
"""Modes that ask less than `default`: brought back only from stayer's own saved sessions."""


def with_recorded_mode(
    options: QueryOptions, loaded: Loaded, *, own: bool
) -> tuple[QueryOptions, Loaded]:
    """`options` in the mode the session was left in, when the run names none and that mode
    may come back (`own`: the file is a session stayer saved in its own folder); `loaded` with
    a warning when the mode comes back or is left behind."""
    recorded = loaded.permission_mode
    if options.permission_mode is not None or recorded is None:
        return options, loaded
    recorded = MODE_ALIASES.get(recorded, recorded)
    if recorded == NEVER_RESTORED:
        note = (
            "the session was left in bypassPermissions mode, which a transcript never turns "
            "back on; going on in the mode this run starts in (pass "
            "--dangerously-skip-permissions to go on as before)"
        )
    elif recorded in ASKS_LESS and not own:
        note = (
            f"the session was left in {recorded} permission mode, which comes back only for "
            "a session stayer saved itself; going on in the mode this run starts in "
            f"(pass --permission-mode {recorded} to go on as before)"
        )
    elif recorded not in PERMISSION_MODES:
        note = (
            f"the session was left in a permission mode stayer does not know ({recorded!r}); "
            "going on in the mode this run starts in"
        )
    else:
        options = replace(options, permission_mode=recorded)
        if recorded == "default":
            return options, loaded
        note = (
            f"going on in {recorded} permission mode, as the session was left; "
            "--permission-mode chooses another"
        )
    return options, replace(loaded, warnings=(*loaded.warnings, note))


def recorded_todos(loaded: Loaded) -> list[TodoItem]:
    """The todo list the session was left with, held to the limits TodoWrite keeps (a file
    can say anything); items that are not whole tasks are dropped."""
    if not loaded.todos:
        return []
    from stayer.tools.builtin.todo import MAX_TODO_CHARS, MAX_TODOS  # only when there are some

    items = (_todo(value, MAX_TODO_CHARS) for value in loaded.todos)
    return [item for item in items if item is not None][:MAX_TODOS]


def _todo(value: JSON, limit: int) -> TodoItem | None:
    if not isinstance(value, dict):
        return None
    content, status, active = value.get("content"), value.get("status"), value.get("activeForm")
    if not (isinstance(content, str) and isinstance(active, str)):
        return None
    content, active = content.strip(), active.strip()
    if not (0 < len(content) <= limit and 0 < len(active) <= limit):
        return None
    if status not in get_args(TodoStatus):
        return None
    return TodoItem(content, cast(TodoStatus, status), active)


def todos_json(todos: list[TodoItem]) -> list[JSON]:
    """The list as a transcript records it (Claude Code's item shape)."""
    return [
        {"content": todo.content, "status": todo.status, "activeForm": todo.active_form}
        for todo in todos
    ]
