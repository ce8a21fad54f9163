"""The ExitPlanMode tool: the model presents its plan and asks the user to accept it.

Claude Code's tool of the same name and input. In plan mode only read-only tools run; calling
this one asks the session's decider to accept the plan (the tool declares `exits_plan`, so the
permission layer asks without knowing its name). Accepted, the session leaves plan mode for the
rest of its life (for the mode it had before, or one the user picks) and the tool tells the model
to start; refused, the model reads why and stays in plan mode. With nobody to ask (a headless
run) the call is denied and the model is told to give the plan as its final answer, so the run's
result is the plan, as `claude -p --permission-mode plan` ends with one. Like Claude Code, the
tool is always offered; outside plan mode it is refused, there being no plan to accept.
"""

from __future__ import annotations

from pydantic import Field

from stayer.tools import names
from stayer.tools.base import Tool, ToolContext, ToolOutput
from stayer.tools.builtin import ToolInput


class ExitPlanModeInput(ToolInput):
    """Input of the ExitPlanMode tool."""

    plan: str = Field(
        min_length=1,
        description="The plan to present for approval, in Markdown: concise, step by step.",
    )


class ExitPlanModeTool(Tool[ExitPlanModeInput]):
    """Presents the plan for the user's approval, to leave plan mode."""

    name = names.EXIT_PLAN_MODE
    input_model = ExitPlanModeInput
    read_only = True
    exits_plan = True
    description = (
        "Use this in plan mode, once the plan is ready, to present it for the user's approval "
        "and leave plan mode.\n\n"
        "- Only for tasks that need writing or running code: planning the steps of a change. "
        "Not for research or questions, which need no approval.\n"
        "- Read what you need first; the plan should name the files and steps concretely.\n"
        "- If the user refuses, you stay in plan mode: revise the plan as they say, or ask."
    )

    def is_concurrency_safe(self, tool_input: ExitPlanModeInput) -> bool:
        return True

    async def call(self, tool_input: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput:
        # It runs only once the plan was accepted: the permission layer asks first.
        return ToolOutput(
            "The user accepted your plan, and plan mode is over. Carry it out now, step by "
            "step, starting with the first.",
            data={"plan": tool_input.plan},
        )
