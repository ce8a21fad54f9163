"""How a tool call reads in the REPL: its line (`● Name(key argument)`), a short result under
it, the whole result on request, and a changed todo list.

The key argument is what tells calls of one tool apart: a command's first line, a path (relative
to the working directory when under it), a search's pattern and place, a page's address. A
tool this module does not know shows its first short string argument, so an MCP tool or a
subagent still reads well.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from rich.table import Table
from rich.text import Text

from stayer.events import ToolStatus
from stayer.messages import JSON
from stayer.tools import names
from stayer.ui.live_output import safe

from .ansi import hang
from .diffs import Change, counts, diff_texts

SHORT_RESULT_LINES = 3
SHORT_DIFF_LINES = 24
RESULT_PREFIX = "  ⎿  "
INDENT = " " * len(RESULT_PREFIX)
EXPAND_HINT = "(ctrl+o to expand)"
_SHORT_ARGUMENT = 160
_FALLBACK_KEYS = ("url", "query", "description", "prompt", "file_path", "path", "pattern")

TODO_MARKS = {"completed": "☒", "in_progress": "◐", "pending": "☐"}


def key_argument(name: str, tool_input: Mapping[str, JSON], cwd: str | None) -> str:
    """The argument that says what a call does, on one line (not yet cut to a width)."""
    if name == names.BASH:
        return _first_line(_string(tool_input, "command"))
    if name in (names.READ, names.WRITE, names.EDIT):
        return relative(_string(tool_input, "file_path"), cwd)
    if name == names.NOTEBOOK_EDIT:
        return relative(_string(tool_input, "notebook_path"), cwd)
    if name == names.GREP:
        return _search(tool_input, cwd)
    if name == names.GLOB:
        return _string(tool_input, "pattern")
    if name == names.TODO_WRITE:
        todos = tool_input.get("todos")
        count = len(todos) if isinstance(todos, list) else 0
        return f"{count} task" + ("" if count == 1 else "s")
    for key in _FALLBACK_KEYS:  # WebFetch, WebSearch, Task/Agent and tools we do not know
        if _string(tool_input, key):
            return _first_line(_string(tool_input, key))
    return _first_short_string(tool_input)


def _search(tool_input: Mapping[str, JSON], cwd: str | None) -> str:
    pattern = _string(tool_input, "pattern")
    where = _string(tool_input, "path")
    shown = f'pattern: "{pattern}"'
    return shown + (f', path: "{relative(where, cwd)}"' if where else "")


def _string(tool_input: Mapping[str, JSON], key: str) -> str:
    value = tool_input.get(key)
    return safe(value) if isinstance(value, str) else ""


def _first_line(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return lines[0] + (" …" if len(lines) > 1 else "")


def _first_short_string(tool_input: Mapping[str, JSON]) -> str:
    for value in tool_input.values():
        if isinstance(value, str) and value.strip() and len(value) <= _SHORT_ARGUMENT:
            return _first_line(safe(value))
    return ""


def relative(path: str, cwd: str | None) -> str:
    """`path` relative to `cwd` when it lies under it, else as given."""
    if not path or not cwd or not os.path.isabs(path):
        return path
    try:
        inside = os.path.commonpath([path, cwd]) == cwd
    except ValueError:
        return path
    return os.path.relpath(path, cwd) if inside and path != cwd else path


def call_text(name: str, tool_input: Mapping[str, JSON], cwd: str | None, mark: Text) -> Text:
    """`● Name(argument)`, the mark given (a bullet, a spinner frame), kept to one row."""
    line = Text.assemble(mark, " ", (safe(name), "bold"))
    argument = key_argument(name, tool_input, cwd)
    if argument:
        line.append(f"({argument})")
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


def status_mark(status: ToolStatus) -> Text:
    """The bullet of a finished call: green done, red failed, yellow denied."""
    return Text("●", style={"completed": "green", "failed": "red", "denied": "yellow"}[status])


def result_texts(
    text: str, status: ToolStatus, *, change: Change | None, limit: int | None, cwd: str | None
) -> list[Table]:
    """The result under a call, `limit` lines at most (None: all): a diff for a file change
    that went through, else the result's own lines (red for an error)."""
    if change is not None and status == "completed":
        return _change_texts(change, limit, cwd)
    style = {"completed": "", "failed": "red", "denied": "yellow"}[status]
    lines = [safe(line) for line in text.rstrip("\n").splitlines()] or ["(no output)"]
    return _under(
        [Text(line, style=style) for line in lines],
        limit,
        more_style=style or "dim",
    )


def _change_texts(change: Change, limit: int | None, cwd: str | None) -> list[Table]:
    added, removed = counts(change)
    path = relative(change.path, cwd)
    head = Text(f"{'Updated' if change.before else 'Wrote'} {path} with ")
    head.append(f"{added} addition" + ("" if added == 1 else "s"))
    head.append(f" and {removed} removal" + ("" if removed == 1 else "s"))
    diff = diff_texts(change)
    cut = None if limit is None else max(limit, SHORT_DIFF_LINES)
    return _under([head, *diff], cut, more_style="dim")


def _under(lines: Sequence[Text | Table], limit: int | None, *, more_style: str) -> list[Table]:
    """`lines` hung under a call: the first after "  ⎿  ", the rest indented to match, and a
    count of what was left out; a line too long for the width wraps under itself."""
    shown: list[Text | Table] = list(lines if limit is None else lines[:limit])
    left = len(lines) - len(shown)
    if left:
        shown.append(Text(f"… +{left} lines {EXPAND_HINT}", style=more_style))
    return [
        hang(Text(RESULT_PREFIX if index == 0 else INDENT, style="dim"), line)
        for index, line in enumerate(shown)
    ]


def todo_texts(todos: Sequence[JSON]) -> list[Table]:
    """A todo list, one task a line, marked by status (done ones struck through)."""
    lines: list[Text] = []
    for todo in todos:
        if not isinstance(todo, dict):
            continue
        status, content = str(todo.get("status")), safe(str(todo.get("content", "")))
        style = {"completed": "strike dim", "in_progress": "bold"}.get(status, "")
        lines.append(Text(f"{TODO_MARKS.get(status, '☐')} {content}", style=style))
    return _under(lines, None, more_style="dim")


def describe_input(tool_input: Mapping[str, JSON]) -> list[Text]:
    """A call's input, one argument a line, for a permission question: a command in full,
    the rest cut short."""
    texts: list[Text] = []
    for key, value in tool_input.items():
        if isinstance(value, str) and key == "command":
            texts += [Text("  " + safe(line), style="bold") for line in value.splitlines()]
        elif isinstance(value, str):
            first = (safe(value).splitlines() or [""])[0]
            texts.append(Text(f"  {key}: {first}", style="dim", no_wrap=True, overflow="ellipsis"))
        else:
            texts.append(
                Text(f"  {key}: {value!r}"[:200], style="dim", no_wrap=True, overflow="ellipsis")
            )
    return texts
