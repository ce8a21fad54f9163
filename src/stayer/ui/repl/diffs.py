"""The change an Edit, Write or NotebookEdit call makes to a file, as coloured diff lines.

The change is worked out from the call's input and the file as it was before the call (read
through a function the caller gives, so this module does no I/O of its own and tests can hand it
any text). When the file cannot be read, or the edit's text is not in it, the change shown is
the call's own old and new text, so a person still sees what will be written.
"""

from __future__ import annotations

import difflib
import json
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from msgspec import Struct
from rich.table import Table
from rich.text import Text

from stayer.messages import JSON
from stayer.tools import names
from stayer.ui.live_output import safe

from .ansi import hang

Reader = Callable[[Path], str | None]
"""Gives a file's text, or None when it cannot (missing, unreadable, too large, not text)."""

MAX_READ_BYTES = 2_000_000
CONTEXT_LINES = 3


class Change(Struct, frozen=True):
    """A file's text before and after a call (`before` is empty for a new file)."""

    path: str
    before: str
    after: str


def read_text(path: Path) -> str | None:
    """The file's text, or None for anything that is not a readable text file of fair size."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None  # a pipe or a device would block or never end
        with path.open("rb") as file:
            data = file.read(MAX_READ_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_READ_BYTES:
        return None
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def file_argument(name: str, tool_input: Mapping[str, JSON]) -> str | None:
    """The path a file-changing call writes, or None for any other call."""
    key = "notebook_path" if name == names.NOTEBOOK_EDIT else "file_path"
    if name not in (names.EDIT, names.WRITE, names.NOTEBOOK_EDIT):
        return None
    value = tool_input.get(key)
    return value if isinstance(value, str) and value else None


def change_of(name: str, tool_input: Mapping[str, JSON], before: str | None) -> Change | None:
    """What the call does to the file whose text was `before` (None: not known)."""
    path = file_argument(name, tool_input)
    if path is None:
        return None
    if name == names.WRITE:
        content = _text(tool_input, "content")
        if before == content:  # read after the write landed: what was there is not known
            before = None
        return Change(path, before or "", content)
    if name == names.EDIT:
        return _edit(path, tool_input, before)
    return _notebook(path, tool_input, before)


def _text(tool_input: Mapping[str, JSON], key: str) -> str:
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


def _edit(path: str, tool_input: Mapping[str, JSON], before: str | None) -> Change:
    old, new = _text(tool_input, "old_string"), _text(tool_input, "new_string")
    if before is None or (old and old not in before):
        return Change(path, old, new)  # only the edit's own text is known
    if not old:
        return Change(path, before, new)
    count = -1 if tool_input.get("replace_all") is True else 1
    return Change(path, before, before.replace(old, new, count))


def _notebook(path: str, tool_input: Mapping[str, JSON], before: str | None) -> Change:
    mode = tool_input.get("edit_mode", "replace")
    new = "" if mode == "delete" else _text(tool_input, "new_source")
    old = "" if mode == "insert" else _cell_source(before, tool_input.get("cell_id"))
    return Change(path, old, new)


def _cell_source(notebook: str | None, cell_id: JSON) -> str:
    """The source of the cell named `cell_id` (its id, or cell-N), or "" if not found."""
    try:
        cells = json.loads(notebook or "").get("cells")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(cells, list) or not isinstance(cell_id, str):
        return ""
    found = [cell for cell in cells if isinstance(cell, dict) and cell.get("id") == cell_id]
    index = cell_id.removeprefix("cell-")
    if not found and index.isdigit() and int(index) < len(cells):
        found = [cells[int(index)]]
    source = found[0].get("source", "") if found and isinstance(found[0], dict) else ""
    return "".join(source) if isinstance(source, list) else str(source)


def counts(change: Change) -> tuple[int, int]:
    """How many lines the change adds and removes."""
    added = removed = 0
    for line in _diff(change):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def diff_texts(change: Change) -> list[Text | Table]:
    """The change as numbered diff lines: removals red, additions green, context plain, a
    dim "⋮" between hunks."""
    shown: list[Text | Table] = []
    old_line = new_line = 0
    for line in _diff(change):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            old_line, new_line = _hunk_start(line)
            if shown:
                shown.append(Text("   ⋮", style="dim"))
            continue
        sign, body = line[:1], line[1:]
        if sign == "-":
            shown.append(_numbered(old_line, "-", body, "red"))
            old_line += 1
        elif sign == "+":
            shown.append(_numbered(new_line, "+", body, "green"))
            new_line += 1
        else:
            shown.append(_numbered(new_line, " ", body, ""))
            old_line, new_line = old_line + 1, new_line + 1
    return shown


def _diff(change: Change) -> list[str]:
    before = change.before.splitlines()
    after = change.after.splitlines()
    return list(difflib.unified_diff(before, after, lineterm="", n=CONTEXT_LINES))


def _hunk_start(header: str) -> tuple[int, int]:
    """The first old and new line numbers of a hunk header such as "@@ -3,7 +3,8 @@"."""
    old, new = header.split()[1:3]
    return int(old[1:].split(",")[0] or 0), int(new[1:].split(",")[0] or 0)


def _numbered(number: int, sign: str, body: str, style: str) -> Table:
    number_column = Text(f"{max(number, 1):>5} {sign} ", style=style or "dim")
    return hang(number_column, Text(safe(body), style=style))
