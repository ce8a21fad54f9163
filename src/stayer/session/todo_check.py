"""The todo list as part of the definition of done: a run with open tasks is not finished.

When the TodoWrite tool is in the toolbox, this stop check is on: if the model would stop while
its list (`ToolContext.todos`) still has tasks pending or in progress, the open tasks go back to
it as the reason (the loop's `stop_hook_blocking` branch), at most `LoopParams.max_stop_blocks`
times in a run. Claude Code has no such check; there the list is only advice to the model. A
model that decides a task is not needed says so by taking it off the list.
"""

from __future__ import annotations

from stayer.loop.state import StopCheck
from stayer.tools.base import ToolContext


def todo_check(ctx: ToolContext) -> StopCheck:
    """A stop check that objects, naming them, while `ctx.todos` has open tasks."""

    async def check() -> str | None:
        open_tasks = [todo for todo in ctx.todos if todo.is_open]
        if not open_tasks:
            return None
        listed = "\n".join(f"- [{todo.status}] {todo.content}" for todo in open_tasks)
        return (
            "Your todo list still has open tasks:\n"
            f"{listed}\n"
            "Finish each and mark it completed with TodoWrite. If one is no longer needed, "
            "take it off the list with TodoWrite and say why."
        )

    return check
