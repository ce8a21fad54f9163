"""The NotebookEdit tool: replace, insert or delete one cell of a Jupyter notebook.

A notebook is JSON (nbformat 4), edited with the standard library alone. The file stays a valid
notebook: a new cell gets an id when the format has them (4.5 and later), a code cell whose
source changes loses its outputs and execution count (they described the old code), and the
rest of the file is written back as it was read. As with Edit, the notebook must have been read
first and be unchanged since. A cell is named by its id, or, in a notebook without ids, as
``cell-N`` (counting from 0), the form Claude Code uses too.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from stayer.tools import names
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput, plural, require_fresh_read, save_text
from stayer.tools.builtin.textfile import load_text

CellType = Literal["code", "markdown"]
EditMode = Literal["replace", "insert", "delete"]

_INDEX_NAME = re.compile(r"cell-(\d+)")


class NotebookEditInput(ToolInput):
    """Input of the NotebookEdit tool (Claude Code's field names)."""

    notebook_path: str = Field(
        description="Absolute path of the .ipynb file (a relative path is taken from the "
        "working directory)."
    )
    cell_id: str | None = Field(
        default=None,
        description="The id of the cell to change or delete; for insert, the cell the new one "
        "goes after (leave it out to insert at the top). In a notebook without cell ids, "
        "name a cell as cell-N, counting from 0.",
    )
    new_source: str = Field(description="The cell's new source (ignored for delete).")
    cell_type: CellType | None = Field(
        default=None,
        description="code or markdown: required for insert; for replace, changes the cell's "
        "type (by default it keeps its own).",
    )
    edit_mode: EditMode = Field(
        default="replace", description="replace (the default), insert or delete."
    )


class NotebookEditTool(Tool[NotebookEditInput]):
    """Changes one cell of a notebook the model has read."""

    name = names.NOTEBOOK_EDIT
    writes_under = "Edit"
    input_model = NotebookEditInput
    subject_kind = "path"
    description = (
        "Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new "
        "cell, or deletes it.\n\n"
        "- Read the notebook first; a change to a notebook that was not read, or that changed "
        "since, is refused.\n"
        "- Name the cell by its id (cell_id). In a notebook without ids, use cell-N, counting "
        "from 0.\n"
        "- edit_mode insert puts a new cell after cell_id, or at the top without one; it needs "
        "cell_type.\n"
        "- Replacing a code cell clears its outputs and execution count; run the notebook "
        "again to get new ones.\n"
        "- Use this tool, not Edit or Write, for notebooks: it keeps the file a valid notebook."
    )

    def permission_subject(self, tool_input: NotebookEditInput) -> str | None:
        return tool_input.notebook_path

    async def call(self, tool_input: NotebookEditInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(tool_input.notebook_path)
        if path.suffix.lower() != ".ipynb":
            raise ToolFailure(
                f"{path} is not a notebook (.ipynb); use Edit or Write for other files."
            )
        if not path.is_file():
            raise ToolFailure(f"Notebook does not exist: {path}. Check the path with Glob.")
        require_fresh_read(ctx, path, "edit")
        text, encoding = load_text(path)
        notebook = _parse(path, text)
        cells: list[Any] = notebook["cells"]
        mode, cell_id = tool_input.edit_mode, tool_input.cell_id
        if mode == "insert":
            at = 0 if cell_id is None else _find(path, cells, cell_id) + 1
            cell = _new_cell(notebook, tool_input)
            cells.insert(at, cell)
            done = f"Inserted a {cell['cell_type']} cell at position {at}"
            shown_id = cell.get("id", f"cell-{at}")
        else:
            if cell_id is None:
                raise ToolFailure(f"Give cell_id: the cell to {mode}.")
            at = _find(path, cells, cell_id)
            shown_id = cells[at].get("id", cell_id)
            if mode == "delete":
                del cells[at]
                done = f"Deleted cell {shown_id}"
            else:
                _replace(cells[at], tool_input)
                done = f"Replaced the source of cell {shown_id}"
        save_text(ctx, path, json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding)
        return ToolOutput(
            f"{done} in {path} ({plural(len(cells), 'cell')} now).",
            data={"notebook_path": str(path), "cell_id": shown_id, "edit_mode": mode},
        )


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolFailure(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}), so it is no notebook "
            "NotebookEdit can change. Fix or replace it with Write."
        ) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ToolFailure(f"{path} has no list of cells, so it is not a Jupyter notebook.")
    if notebook.get("nbformat") != 4:
        raise ToolFailure(
            f"{path} is in notebook format {notebook.get('nbformat')!r}; NotebookEdit changes "
            "format 4 only (convert it with `jupyter nbconvert --to notebook`)."
        )
    return notebook


def _find(path: Path, cells: list[Any], cell_id: str) -> int:
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return index
    named = _INDEX_NAME.fullmatch(cell_id)
    if named and int(named[1]) < len(cells):
        return int(named[1])
    raise ToolFailure(
        f"{path} has no cell {cell_id!r} (it has {len(cells)} cells). Read the notebook again "
        "and use a cell's id, or cell-N counting from 0 where cells have no ids."
    )


def _has_ids(notebook: dict[str, Any]) -> bool:
    minor = notebook.get("nbformat_minor")
    return isinstance(minor, int) and minor >= 5


def _new_cell(notebook: dict[str, Any], tool_input: NotebookEditInput) -> dict[str, Any]:
    if tool_input.cell_type is None:
        raise ToolFailure("Give cell_type (code or markdown) for the cell to insert.")
    cell: dict[str, Any] = {"cell_type": tool_input.cell_type}
    if _has_ids(notebook):
        taken = {cell.get("id") for cell in notebook["cells"] if isinstance(cell, dict)}
        cell["id"] = next(new for new in iter(_fresh_id, None) if new not in taken)
    cell["metadata"] = {}
    cell["source"] = _source(tool_input.new_source)
    if tool_input.cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def _fresh_id() -> str:
    return uuid.uuid4().hex[:8]


def _replace(cell: dict[str, Any], tool_input: NotebookEditInput) -> None:
    kind = tool_input.cell_type or cell.get("cell_type")
    cell["cell_type"] = kind
    cell["source"] = _source(tool_input.new_source)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    else:  # only code cells may have these two
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    cell.setdefault("metadata", {})


def _source(text: str) -> list[str]:
    """The source as Jupyter stores it: a list of lines, each keeping its newline."""
    return text.splitlines(keepends=True)
