"""The TodoWrite tool: the model's own task list, kept as session state.

Each call replaces the whole list (Claude Code's shape: `{todos: [{content, status,
activeForm}]}`). The list lives in `ToolContext.todos`, where the printers can show it and the
session's stop check reads it: a run whose list still has open tasks is not done
(`stayer.session.todo_check`).

Claude Code advises one task in progress at a time but does not enforce it, and neither do we:
refusing the call would cost the model a round trip for a rule about presentation, and work
done in parallel tool calls can honestly have two tasks going. The result says so instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from stayer.messages import JSON
from stayer.tools import names
from stayer.tools.base import TodoItem, TodoStatus, Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput, plural

MAX_TODOS = 100
MAX_TODO_CHARS = 1_000


class TodoInput(ToolInput):
    """One task as the model writes it (Claude Code's field names)."""

    content: str = Field(
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description='The task in the imperative, such as "Run the tests".',
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    active_form: str = Field(
        alias="activeForm",
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description='The task as it is being done, such as "Running the tests".',
    )


class TodoWriteInput(ToolInput):
    """Input of the TodoWrite tool (Claude Code's field names)."""

    todos: list[TodoInput] = Field(
        max_length=MAX_TODOS,
        description="The whole task list as it should now be; it replaces the previous one.",
    )


class TodoWriteTool(Tool[TodoWriteInput]):
    """Replaces the model's task list for this session."""

    name = names.TODO_WRITE
    input_model = TodoWriteInput
    read_only = True  # it changes only the session's own list, nothing on disk
    description = (
        "Keeps your task list for this session: each call replaces the whole list with the "
        "one given.\n\n"
        "- Use it for work of three or more distinct steps, or when the user gives several "
        "things to do; skip it for a single quick change.\n"
        '- Write each task twice: content in the imperative ("Fix the parser") and '
        'activeForm as it is being done ("Fixing the parser").\n'
        "- Mark a task in_progress before you start it and completed as soon as it is fully "
        "done (tests pass, nothing left half-made); work on one task at a time where you "
        "can.\n"
        "- Add tasks you discover as you go; remove tasks that turn out not to be needed.\n"
        "- The run is not finished while a task is pending or in_progress: when you would "
        "stop with open tasks, you are sent back to finish them."
    )

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        schema = self.input_model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        return _inlined(schema)

    async def call(self, tool_input: TodoWriteInput, ctx: ToolContext) -> ToolOutput:
        new = [_item(todo) for todo in tool_input.todos]
        old = list(ctx.todos)
        # In place: the executor hands each call a copy of the context sharing this list.
        ctx.todos[:] = new
        return ToolOutput(
            _saved(new, changed=new != old),
            data={"oldTodos": _as_json(old), "newTodos": _as_json(new)},
        )


def _item(todo: TodoInput) -> TodoItem:
    content, active = todo.content.strip(), todo.active_form.strip()
    if not content or not active:
        raise ToolFailure(
            "Every task needs words in both content and activeForm; one of them is blank."
        )
    return TodoItem(content, todo.status, active)


def _saved(todos: list[TodoItem], *, changed: bool) -> str:
    if not todos:
        return "The todo list is saved, and empty."
    counts = [
        f"{sum(todo.status == status for todo in todos)} {status.replace('_', ' ')}"
        for status in ("completed", "in_progress", "pending")
    ]
    head = "The todo list is saved" if changed else "The todo list is saved, unchanged"
    text = f"{head} ({plural(len(todos), 'task')}: {', '.join(counts)})."
    busy = sum(todo.status == "in_progress" for todo in todos)
    if busy > 1:
        text += f" {busy} tasks are in progress at once; keep to one at a time where you can."
    if any(todo.is_open for todo in todos):
        text += " Go on with the open tasks and mark each completed once it is done."
    return text


def _as_json(todos: list[TodoItem]) -> list[JSON]:
    return [
        {"content": todo.content, "status": todo.status, "activeForm": todo.active_form}
        for todo in todos
    ]


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with the task model written out where it is used, as Claude Code's is:
    some OpenAI-compatible servers do not follow `$ref`."""
    definitions: dict[str, Any] = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                inner = dict(definitions[ref.rsplit("/", 1)[-1]])
                inner.pop("title", None)
                return walk(inner)
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined
