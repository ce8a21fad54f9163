"""The built-in tools: their specs without loading them, and the tools themselves on demand.

`builtin_toolbox()` is what a run uses: the specs come from `builtin_specs.py` (plain data,
generated from the tools by `scripts/gen_tool_specs.py` and checked against them by a test), so
the first request leaves before pydantic and the tool modules load. `builtin_tools()` makes
fresh instances each call, because some tools keep per-agent state (Bash remembers its working
directory).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from stayer.tools.base import Tool, Toolbox
from stayer.tools.builtin_specs import BUILTIN_SPECS


def builtin_tools() -> tuple[Tool[Any], ...]:
    """New instances of the built-in tools, in the order the model sees them."""
    from stayer.tools.builtin.agent import AgentTool
    from stayer.tools.builtin.bash import BashTool
    from stayer.tools.builtin.edit import EditTool
    from stayer.tools.builtin.exit_plan import ExitPlanModeTool
    from stayer.tools.builtin.glob import GlobTool
    from stayer.tools.builtin.grep import GrepTool
    from stayer.tools.builtin.notebook import NotebookEditTool
    from stayer.tools.builtin.pin import PinTool
    from stayer.tools.builtin.read import ReadTool
    from stayer.tools.builtin.shells import BashOutputTool, KillShellTool
    from stayer.tools.builtin.skill import SkillTool
    from stayer.tools.builtin.todo import TodoWriteTool
    from stayer.tools.builtin.webfetch import WebFetchTool
    from stayer.tools.builtin.write import WriteTool

    return (
        AgentTool(),
        BashTool(),
        BashOutputTool(),
        KillShellTool(),
        GlobTool(),
        GrepTool(),
        ReadTool(),
        EditTool(),
        WriteTool(),
        NotebookEditTool(),
        WebFetchTool(),
        TodoWriteTool(),
        ExitPlanModeTool(),
        SkillTool(),
        PinTool(),
    )


BUILTIN_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILTIN_SPECS)


def builtin_toolbox(names: Collection[str] = BUILTIN_NAMES) -> Toolbox:
    """A toolbox of the built-in tools named in `names`, in the model's order."""
    specs = tuple(spec for spec in BUILTIN_SPECS if spec.name in names)

    def load() -> tuple[Tool[Any], ...]:
        return tuple(tool for tool in builtin_tools() if tool.name in names)

    return Toolbox(specs, load)
