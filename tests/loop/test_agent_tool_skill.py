"""The Skill tool through the real loop: a small real skill host renders skills as the
session's does (`SkillHost`), and the parent's next request shows what the model reads."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from stayer.events import SubagentEvent, ToolCallFinished
from stayer.loop.state import LoopParams
from stayer.messages import TextBlock, ToolResultBlock, ToolUseBlock
from stayer.permissions import PermissionPolicy, PermissionState
from stayer.permissions.rules import Rule
from stayer.providers.scripted import Reply, ScriptedProvider, text
from stayer.session.permission_check import permission_check
from stayer.tools.base import LoadedSkill, SubagentRequest, ToolFailure
from stayer.tools.builtin.agent import AgentTool
from stayer.tools.builtin.skill import SkillTool
from tests.fakes.children import Children
from tests.fakes.loop_harness import make_params, results_in, run
from tests.fakes.tools import Echo


class Skills:
    """The skills a session knows, each rendered with the arguments it is given."""

    def __init__(self, **skills: LoadedSkill) -> None:
        self.skills = skills
        self.loaded: list[tuple[str, str, str | None]] = []

    async def load(self, name: str, args: str, tool_use_id: str | None) -> LoadedSkill:
        self.loaded.append((name, args, tool_use_id))
        if name not in self.skills:
            raise ToolFailure(f"no skill named {name!r}")
        skill = self.skills[name]
        return replace(skill, followup=skill.followup.replace("$ARGUMENTS", args))


GREET = LoadedSkill(
    "greet",
    "Loaded skill greet; its instructions follow.",
    followup="Greet $ARGUMENTS in French.",
    data={"commandName": "greet"},
)


def with_skills(params: LoopParams, skills: Skills) -> LoopParams:
    return replace(params, tool_context=replace(params.tool_context, skills=skills))


def skill_call(call_id: str, skill: str, args: str = "") -> ToolUseBlock:
    return ToolUseBlock(
        call_id, "Skill", {"skill": skill, "args": args} if args else {"skill": skill}
    )


async def test_a_skills_instructions_follow_the_rounds_tool_results(tmp_path: Path) -> None:
    skills = Skills(greet=GREET)
    calls = Reply((skill_call("s1", "greet", "Ada"), ToolUseBlock("e1", "Echo", {"text": "hi"})))
    model = ScriptedProvider([calls, text("Bonjour Ada")])
    events = await run(with_skills(make_params(model, [SkillTool(), Echo()], tmp_path), skills))

    assert model.requests[1].messages[-1].content == (
        ToolResultBlock("s1", (TextBlock("Loaded skill greet; its instructions follow."),)),
        ToolResultBlock("e1", (TextBlock("hi"),)),
        TextBlock("Greet Ada in French."),
    )
    assert skills.loaded == [("greet", "Ada", "s1")]
    done = next(e for e in events if isinstance(e, ToolCallFinished) and e.tool_use_id == "s1")
    assert (done.data, done.followup) == ({"commandName": "greet"}, "Greet Ada in French.")


async def test_a_command_slash_before_the_name_is_taken_off(tmp_path: Path) -> None:
    skills = Skills(greet=GREET)
    model = ScriptedProvider([Reply((skill_call("s1", "/greet"),)), text("done")])
    await run(with_skills(make_params(model, [SkillTool()], tmp_path), skills))

    assert skills.loaded == [("greet", "", "s1")]


async def test_an_unknown_skill_or_no_host_gives_one_line(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((skill_call("s1", "nope"),)), text("done")])
    await run(with_skills(make_params(model, [SkillTool()], tmp_path), Skills()))
    (result,) = results_in(model.requests[1].messages[-1])
    assert (result.is_error, result.text) == (True, "no skill named 'nope'")

    model = ScriptedProvider([Reply((skill_call("s1", "greet"),)), text("done")])
    await run(make_params(model, [SkillTool()], tmp_path))
    (result,) = results_in(model.requests[1].messages[-1])
    assert (result.is_error, result.text) == (
        True,
        "skills are not available here; do the task yourself",
    )


async def test_a_deny_rule_on_one_skill_stops_it_and_not_the_others(tmp_path: Path) -> None:
    other = replace(GREET, name="other")
    skills = Skills(greet=GREET, other=other)
    model = ScriptedProvider(
        [Reply((skill_call("s1", "greet"), skill_call("s2", "other"))), text("done")]
    )
    params = with_skills(make_params(model, [SkillTool()], tmp_path), skills)
    state = PermissionState(PermissionPolicy(deny=(Rule.parse("Skill(greet)"),)))
    await run(replace(params, can_use_tool=permission_check(state, tmp_path)))

    denied, allowed = results_in(model.requests[1].messages[-1])
    assert denied.is_error and "denied" in denied.text
    assert not allowed.is_error
    assert [name for name, _, _ in skills.loaded] == ["other"]


async def test_a_forked_skill_runs_as_a_subagent_and_returns_its_report(tmp_path: Path) -> None:
    fork = SubagentRequest(
        prompt="Summarise the changes.",
        description="summarise",
        subagent_type="Explore",
        system_prompt="You summarise.",
    )
    skills = Skills(summary=LoadedSkill("summary", "", fork=fork))
    children = Children(lambda request: ScriptedProvider([text("Three files changed.")]))
    model = ScriptedProvider([Reply((skill_call("s1", "summary"),)), text("done")])
    params = make_params(model, [SkillTool(), AgentTool()], tmp_path)
    events = await run(children.attach(with_skills(params, skills)))

    (result,) = results_in(model.requests[1].messages[-1])
    assert result.text.startswith(
        "Agent Explore (agent1) finished. Its report:\n\nThree files changed.\n\n[agent agent1: "
    )
    assert model.requests[1].messages[-1].content[1:] == ()  # a fork brings no instructions
    assert children.asked == [replace(fork, tool_use_id="s1")]
    assert {e.parent_tool_use_id for e in events if isinstance(e, SubagentEvent)} == {"s1"}
