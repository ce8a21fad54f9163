"""The TodoWrite tool: each call replaces the session's task list and says what it holds."""

from __future__ import annotations

from pathlib import Path

import msgspec
import msgspec.structs
import pytest
from pydantic import ValidationError

from stayer.session.todo_check import todo_check
from stayer.tools.base import TodoItem, ToolContext, ToolFailure
from stayer.tools.builtin.todo import MAX_TODOS, TodoWriteTool
from tests.unit.tools.helpers import run_tool, text_of


def todo(content: str, status: str, active: str = "") -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active or f"{content}ing"}


async def test_a_list_is_saved_in_the_context_and_reported(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    todos = [
        todo("Write the parser", "completed", "Writing the parser"),
        todo("Test the parser", "in_progress", "Testing the parser"),
        todo("Document it", "pending", "Documenting it"),
    ]
    output = await run_tool(TodoWriteTool(), ctx, todos=todos)

    assert ctx.todos == [
        TodoItem("Write the parser", "completed", "Writing the parser"),
        TodoItem("Test the parser", "in_progress", "Testing the parser"),
        TodoItem("Document it", "pending", "Documenting it"),
    ]
    assert text_of(output) == (
        "The todo list is saved (3 tasks: 1 completed, 1 in progress, 1 pending). Go on with "
        "the open tasks and mark each completed once it is done."
    )
    assert output.data == {"oldTodos": [], "newTodos": todos}


async def test_each_call_replaces_the_whole_list(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    await run_tool(TodoWriteTool(), ctx, todos=[todo("A", "pending"), todo("B", "pending")])
    output = await run_tool(TodoWriteTool(), ctx, todos=[todo("C", "completed")])

    assert ctx.todos == [TodoItem("C", "completed", "Cing")]
    assert output.data["oldTodos"] == [todo("A", "pending"), todo("B", "pending")]
    assert (
        text_of(output) == "The todo list is saved (1 task: 1 completed, 0 in progress, 0 pending)."
    )


async def test_the_list_is_shared_by_every_copy_of_the_context(tmp_path: Path) -> None:
    # The executor runs each call with a copy of the context (its own progress callback).
    ctx = ToolContext(cwd=tmp_path)
    await run_tool(TodoWriteTool(), msgspec.structs.replace(ctx), todos=[todo("A", "pending")])
    assert ctx.todos == [TodoItem("A", "pending", "Aing")]


async def test_an_empty_list_clears_it_and_an_unchanged_one_says_so(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    await run_tool(TodoWriteTool(), ctx, todos=[todo("A", "completed")])
    again = await run_tool(TodoWriteTool(), ctx, todos=[todo("A", "completed")])
    assert text_of(again).startswith("The todo list is saved, unchanged (1 task:")
    cleared = await run_tool(TodoWriteTool(), ctx, todos=[])
    assert (ctx.todos, text_of(cleared)) == ([], "The todo list is saved, and empty.")


async def test_two_tasks_in_progress_are_saved_with_advice(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    output = await run_tool(
        TodoWriteTool(), ctx, todos=[todo("A", "in_progress"), todo("B", "in_progress")]
    )
    assert [item.status for item in ctx.todos] == ["in_progress", "in_progress"]
    assert "2 tasks are in progress at once; keep to one at a time" in text_of(output)


async def test_bad_tasks_are_refused_and_the_list_kept(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    await run_tool(TodoWriteTool(), ctx, todos=[todo("Keep me", "pending")])
    kept = list(ctx.todos)
    with pytest.raises(ToolFailure, match="needs words in both content and activeForm"):
        await run_tool(TodoWriteTool(), ctx, todos=[todo("   ", "pending", "Doing")])
    for bad in (
        [{"content": "A", "status": "done", "activeForm": "Aing"}],  # not a status
        [{"content": "A", "status": "pending"}],  # activeForm missing
        [{"content": "A", "status": "pending", "activeForm": "Aing", "priority": "high"}],
        [todo(f"T{n}", "pending") for n in range(MAX_TODOS + 1)],
    ):
        with pytest.raises(ValidationError):
            await run_tool(TodoWriteTool(), ctx, todos=bad)
    assert ctx.todos == kept


async def test_the_stop_check_names_the_open_tasks_and_passes_once_none_are(
    tmp_path: Path,
) -> None:
    ctx = ToolContext(cwd=tmp_path)
    check = todo_check(ctx)
    assert await check() is None  # no list: nothing to object to
    await run_tool(
        TodoWriteTool(),
        ctx,
        todos=[todo("A", "completed"), todo("B", "in_progress"), todo("C", "pending")],
    )
    assert await check() == (
        "Your todo list still has open tasks:\n- [in_progress] B\n- [pending] C\nFinish each "
        "and mark it completed with TodoWrite. If one is no longer needed, take it off the "
        "list with TodoWrite and say why."
    )
    await run_tool(TodoWriteTool(), ctx, todos=[todo("A", "completed"), todo("B", "completed")])
    assert await check() is None
