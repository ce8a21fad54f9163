"""The Skill tool: the model loads one of the skills it was shown into the conversation.

Claude Code's tool, with its name and input (`skill`, `args`). Only a listing of the skills
(name and description) reaches the model up front; this call brings in one skill's
instructions. The session renders the skill (`ToolContext.skills`: its arguments put in, its
`!` commands run through the permission policy); the tool returns the short result, and the
instructions join the conversation after the round's tool results (`ToolOutput.followup`), so
they read as instructions rather than as a tool's output. A skill marked `context: fork` runs
as a subagent instead, exactly as an Agent call does (in the foreground unless the skill
asks for the background), and its report is the result.

The call needs no permission of its own (what the skill then does is judged call by call), but
its subject is the skill's name, so `Skill(name)` rules allow or deny one skill. It is not run
beside other calls: a skill may grant tools for the turn, which the calls after it should see.
"""

from __future__ import annotations

from msgspec.structs import replace
from pydantic import Field

from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput
from stayer.tools.builtin.agent import run_in_background, run_subagent
from stayer.tools.names import SKILL


class SkillInput(ToolInput):
    """Input of the Skill tool (Claude Code's field names)."""

    skill: str = Field(
        description='The name of the skill, as listed (e.g. "pdf" or "my-plugin:review").'
    )
    args: str = Field(default="", description="Arguments for the skill, if it takes any.")


def skill_name(tool_input: SkillInput) -> str:
    """The skill's name as the catalog has it: models often write a command's slash too."""
    return tool_input.skill.strip().removeprefix("/")


class SkillTool(Tool[SkillInput]):
    """Loads a skill's instructions into the conversation, or runs a forked skill."""

    name = SKILL
    input_model = SkillInput
    read_only = True  # what the skill's instructions lead to is judged call by call
    description = (
        "Loads a skill: a set of instructions (and sometimes scripts and reference files) for "
        "a particular kind of task.\n\n"
        "- The skills you may load are listed, each with a description, in a system reminder. "
        "When the task at hand matches a skill's description, load it before starting the "
        "task, and follow its instructions.\n"
        "- Give the skill's name as listed; put anything it should work on in `args`.\n"
        "- The skill's instructions arrive in the conversation after this call's result. A "
        "skill already loaded is there still: do not load it again for the same task.\n"
        "- A skill the user ran as a slash command is already loaded; do not load it again.\n"
        "- Only load skills that are listed; do not guess names."
    )

    def permission_subject(self, tool_input: SkillInput) -> str | None:
        return skill_name(tool_input)

    async def call(self, tool_input: SkillInput, ctx: ToolContext) -> ToolOutput:
        if ctx.skills is None:
            raise ToolFailure("skills are not available here; do the task yourself")
        name = skill_name(tool_input)
        if not name:
            raise ToolFailure("no skill named: give one of the listed skills' names")
        loaded = await ctx.skills.load(name, tool_input.args, ctx.tool_use_id)
        if loaded.fork is not None:
            request = replace(loaded.fork, tool_use_id=ctx.tool_use_id or "")
            if request.background:
                return await run_in_background(request, ctx)
            return await run_subagent(request, ctx)
        return ToolOutput(loaded.result, data=loaded.data, followup=loaded.followup)
