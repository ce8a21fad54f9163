"""The NotebookEdit tool: cells replaced, inserted and deleted in real .ipynb files, which stay
valid notebooks; read-before-write as for Edit."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.notebook import NotebookEditInput, NotebookEditTool
from stayer.tools.builtin.read import ReadTool
from tests.unit.tools.helpers import run_tool, text_of

CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def notebook(*, minor: int = 5) -> dict[str, Any]:
    with_ids = minor >= 5

    def cell(cell_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"id": cell_id, **body} if with_ids else body

    return {
        "cells": [
            cell("intro", {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]}),
            cell(
                "load",
                {
                    "cell_type": "code",
                    "execution_count": 3,
                    "metadata": {"tags": ["keep"]},
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}],
                    "source": ["x = 1\n", "print(x)"],
                },
            ),
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read_notebook(
    ctx: ToolContext, content: dict[str, Any] | str, name: str = "a.ipynb"
) -> Path:
    path = ctx.cwd / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=1))
    await run_tool(ReadTool(), ctx, file_path=name)
    return path


def cells(path: Path) -> list[dict[str, Any]]:
    loaded: dict[str, Any] = json.loads(path.read_text())
    assert loaded["nbformat"] == 4
    result: list[dict[str, Any]] = loaded["cells"]
    return result


async def test_replacing_a_code_cell_clears_its_outputs_and_keeps_the_rest(
    ctx: ToolContext,
) -> None:
    path = await read_notebook(ctx, notebook())
    output = await run_tool(
        NotebookEditTool(), ctx, notebook_path="a.ipynb", cell_id="load", new_source="y = 2\ny"
    )
    assert text_of(output) == f"Replaced the source of cell load in {path} (2 cells now)."
    expected = notebook()
    expected["cells"][1] = {
        "id": "load",
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": ["keep"]},
        "outputs": [],
        "source": ["y = 2\n", "y"],
    }
    assert json.loads(path.read_text()) == expected


async def test_replacing_with_another_type_makes_a_valid_cell_of_that_type(
    ctx: ToolContext,
) -> None:
    path = await read_notebook(ctx, notebook())
    await run_tool(
        NotebookEditTool(),
        ctx,
        notebook_path="a.ipynb",
        cell_id="load",
        new_source="Now prose.",
        cell_type="markdown",
    )
    await run_tool(
        NotebookEditTool(),
        ctx,
        notebook_path="a.ipynb",
        cell_id="intro",
        new_source="import os",
        cell_type="code",
    )
    assert cells(path) == [
        {
            "id": "intro",
            "cell_type": "code",
            "metadata": {},
            "source": ["import os"],
            "execution_count": None,
            "outputs": [],
        },
        {
            "id": "load",
            "cell_type": "markdown",
            "metadata": {"tags": ["keep"]},
            "source": ["Now prose."],
        },
    ]


async def test_insert_puts_a_new_cell_with_a_fresh_id_after_the_one_named(
    ctx: ToolContext,
) -> None:
    path = await read_notebook(ctx, notebook())
    output = await run_tool(
        NotebookEditTool(),
        ctx,
        notebook_path="a.ipynb",
        cell_id="intro",
        new_source="import math\n",
        cell_type="code",
        edit_mode="insert",
    )
    new = cells(path)[1]
    assert [cell["id"] for cell in cells(path)] == ["intro", new["id"], "load"]
    assert CELL_ID.fullmatch(new["id"]) and new["id"] not in ("intro", "load")
    assert new == {
        "cell_type": "code",
        "id": new["id"],
        "metadata": {},
        "source": ["import math\n"],
        "execution_count": None,
        "outputs": [],
    }
    assert text_of(output) == f"Inserted a code cell at position 1 in {path} (3 cells now)."
    assert output.data == {"notebook_path": str(path), "cell_id": new["id"], "edit_mode": "insert"}


async def test_insert_without_a_cell_goes_first_and_older_formats_get_no_id(
    ctx: ToolContext,
) -> None:
    path = await read_notebook(ctx, notebook(minor=4))
    await run_tool(
        NotebookEditTool(),
        ctx,
        notebook_path="a.ipynb",
        new_source="Top",
        cell_type="markdown",
        edit_mode="insert",
    )
    assert cells(path)[0] == {"cell_type": "markdown", "metadata": {}, "source": ["Top"]}
    assert len(cells(path)) == 3


async def test_delete_removes_the_cell(ctx: ToolContext) -> None:
    path = await read_notebook(ctx, notebook())
    output = await run_tool(
        NotebookEditTool(),
        ctx,
        notebook_path="a.ipynb",
        cell_id="intro",
        new_source="",
        edit_mode="delete",
    )
    assert [cell["id"] for cell in cells(path)] == ["load"]
    assert text_of(output) == f"Deleted cell intro in {path} (1 cell now)."


async def test_cells_without_ids_are_named_by_position(ctx: ToolContext) -> None:
    path = await read_notebook(ctx, notebook(minor=4))
    await run_tool(
        NotebookEditTool(), ctx, notebook_path="a.ipynb", cell_id="cell-1", new_source="z = 3"
    )
    assert cells(path)[1]["source"] == ["z = 3"]
    with pytest.raises(ToolFailure, match=r"has no cell 'cell-2' \(it has 2 cells\)"):
        await run_tool(
            NotebookEditTool(), ctx, notebook_path="a.ipynb", cell_id="cell-2", new_source="z"
        )


async def test_edits_follow_one_another_without_another_read(ctx: ToolContext) -> None:
    path = await read_notebook(ctx, notebook())
    for source in ("first", "second"):
        await run_tool(
            NotebookEditTool(), ctx, notebook_path="a.ipynb", cell_id="intro", new_source=source
        )
    assert cells(path)[0]["source"] == ["second"]


async def test_a_notebook_not_read_or_changed_since_is_refused(ctx: ToolContext) -> None:
    unread = ctx.cwd / "unread.ipynb"
    unread.write_text(json.dumps(notebook()))
    with pytest.raises(ToolFailure, match=r"has not been read yet\. Read it with the Read tool"):
        await run_tool(
            NotebookEditTool(), ctx, notebook_path="unread.ipynb", cell_id="intro", new_source="x"
        )
    path = await read_notebook(ctx, notebook())
    before = path.read_text()
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(ToolFailure, match="has changed on disk since it was last read"):
        await run_tool(
            NotebookEditTool(), ctx, notebook_path="a.ipynb", cell_id="intro", new_source="x"
        )
    assert path.read_text() == before


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"cell_id": "nope"}, r"has no cell 'nope' \(it has 2 cells\)"),
        ({}, "Give cell_id: the cell to replace"),
        ({"edit_mode": "delete"}, "Give cell_id: the cell to delete"),
        ({"edit_mode": "insert"}, r"Give cell_type \(code or markdown\)"),
    ],
)
async def test_a_call_that_names_no_usable_cell_changes_nothing(
    ctx: ToolContext, given: dict[str, str], message: str
) -> None:
    path = await read_notebook(ctx, notebook())
    before = path.read_text()
    with pytest.raises(ToolFailure, match=message):
        await run_tool(NotebookEditTool(), ctx, notebook_path="a.ipynb", new_source="x", **given)
    assert path.read_text() == before


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.ipynb", "{not json", r"is not valid JSON \(Expecting property name"),
        ("list.ipynb", "[1, 2]", "has no list of cells, so it is not a Jupyter notebook"),
        ("old.ipynb", json.dumps({"cells": [], "nbformat": 3}), "in notebook format 3"),
    ],
)
async def test_a_file_that_is_no_notebook_of_format_4_is_refused(
    ctx: ToolContext, name: str, content: str, message: str
) -> None:
    await read_notebook(ctx, content, name)
    with pytest.raises(ToolFailure, match=message):
        await run_tool(
            NotebookEditTool(), ctx, notebook_path=name, cell_id="cell-0", new_source="x"
        )


async def test_only_existing_ipynb_files_are_edited(ctx: ToolContext) -> None:
    (ctx.cwd / "a.py").write_text("x = 1\n")
    with pytest.raises(ToolFailure, match=r"is not a notebook \(.ipynb\); use Edit or Write"):
        await run_tool(NotebookEditTool(), ctx, notebook_path="a.py", new_source="x")
    with pytest.raises(ToolFailure, match="Notebook does not exist"):
        await run_tool(NotebookEditTool(), ctx, notebook_path="missing.ipynb", new_source="x")


def test_the_permission_subject_is_the_path_and_the_tool_changes_things() -> None:
    tool = NotebookEditTool()
    given = NotebookEditInput(notebook_path="nb/a.ipynb", new_source="x")
    assert (tool.permission_subject(given), tool.subject_kind) == ("nb/a.ipynb", "path")
    assert tool.is_read_only(given) is False
