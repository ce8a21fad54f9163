"""How a tool call reads in an editor: its title, its ACP kind, the files it touches
(`locations`, so the editor can follow along) and, for a file edit, the change as a diff the
editor renders for review; and a TodoWrite list as the session's plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
)
from msgspec import Struct

from stayer.messages import JSON, ToolResultBlock
from stayer.tools import names

Kind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, Kind] = {
    names.READ: "read",
    names.EDIT: "edit",
    names.WRITE: "edit",
    names.NOTEBOOK_EDIT: "edit",
    names.GREP: "search",
    names.GLOB: "search",
    names.BASH: "execute",
    names.WEB_FETCH: "fetch",
    names.EXIT_PLAN_MODE: "switch_mode",
    names.TODO_WRITE: "think",
}
_PATH_KEYS = ("file_path", "notebook_path", "path")
_TITLE_KEYS = ("command", "url", "query", "pattern", "description", "prompt")
_TITLE_CHARS = 120
MAX_RESULT_CHARS = 64_000
"""A tool's result shown in the editor is cut to this many characters (the model sees all)."""


class Described(Struct, frozen=True):
    """What the editor is told about a call when it is announced."""

    title: str
    kind: Kind
    locations: list[ToolCallLocation]
    content: list[Content] | None


def describe(
    name: str, tool_input: Mapping[str, JSON], cwd: Path, agent: str | None = None
) -> Described:
    """The title, kind, locations and (for an edit) diff of a call of `name` with `tool_input`;
    a subagent's call (`agent`) is titled with the subagent's name first."""
    path = _path(tool_input, cwd)
    locations = [ToolCallLocation(path=str(path))] if path is not None else []
    title = _title(name, tool_input, path, cwd)
    return Described(
        title=f"{agent}: {title}" if agent else title,
        kind=_KINDS.get(name, "other"),
        locations=locations,
        content=_diff(name, tool_input, path),
    )


def result_content(result: ToolResultBlock) -> list[Content]:
    """A finished call's result as the editor shows it: its text, cut to `MAX_RESULT_CHARS`."""
    text = result.text
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n… ({len(text) - MAX_RESULT_CHARS} characters more)"
    if not text:
        return []
    return [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))
    ]


def is_edit(name: str) -> bool:
    """Whether a call of `name` is announced with its diff (kept as its content when it ends)."""
    return _KINDS.get(name) == "edit"


def plan_entries(name: str, tool_input: Mapping[str, JSON]) -> list[PlanEntry] | None:
    """The plan a TodoWrite call sets (the whole list, as ACP wants); None for another tool."""
    if name != names.TODO_WRITE:
        return None
    todos = tool_input.get("todos")
    entries: list[PlanEntry] = []
    for todo in todos if isinstance(todos, list) else []:
        if not isinstance(todo, dict):
            continue
        status = todo.get("status")
        entries.append(
            PlanEntry(
                content=str(todo.get("content", "")),
                priority="medium",
                status=status if status in ("pending", "in_progress", "completed") else "pending",
            )
        )
    return entries


def _path(tool_input: Mapping[str, JSON], cwd: Path) -> Path | None:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return Path(value) if Path(value).is_absolute() else cwd / value
    return None


def _title(name: str, tool_input: Mapping[str, JSON], path: Path | None, cwd: Path) -> str:
    argument = ""
    if path is not None:
        argument = str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)
    else:
        for key in _TITLE_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                argument = value.strip().splitlines()[0]
                break
    if len(argument) > _TITLE_CHARS:
        argument = argument[: _TITLE_CHARS - 1] + "…"
    return f"{name} {argument}" if argument else name


def _diff(name: str, tool_input: Mapping[str, JSON], path: Path | None) -> list[Content] | None:
    if path is None or not is_edit(name):
        return None
    if name == names.WRITE:
        new, old = tool_input.get("content"), None
    else:
        new, old = tool_input.get("new_string"), tool_input.get("old_string")
    if not isinstance(new, str) or not isinstance(old, str | None):
        return None
    return [FileEditToolCallContent(type="diff", path=str(path), old_text=old, new_text=new)]
