"""What an agent type's definition gives its children: memory files or none, preloaded
skills in the first message, its own turn limit (and a parent told why a child stopped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
from stayer.agents.model import AgentDefinition, Catalog, Skill
from stayer.events import SessionStarted, ToolCallFinished
from stayer.messages import TextBlock
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.listings import is_listing
from stayer.session.spawn import child_tools, restriction_notes
from stayer.tools.base import SubagentRequest
from stayer.tools.names import AGENT, SKILL, TASK
from tests.fakes.tools import Echo
from tests.session.skill_kit import skill

from .subagent_kit import Router, Spawn, nested, options
from .test_subagents import result_text, results, run


def kind(name: str, **fields: Any) -> AgentDefinition:
    return AgentDefinition(
        name=name,
        description=f"the {name} agent",
        prompt=f"You are {name.upper()}.",
        scope="project",
        source=f".claude/agents/{name}.md",
        **fields,
    )


def with_catalog(session: stayer.Session, catalog: Catalog) -> None:
    """The catalog a session would have read from files (their reader is another module's)."""
    resolved = session.setup.resolved
    assert resolved is not None
    session.setup = replace(session.setup, resolved=replace(resolved, catalog=catalog))


async def test_memory_files_join_a_childs_prompt_only_when_its_type_keeps_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "CLAUDE.md").write_text("Always answer in French.\n")
    lead = ScriptedProvider(
        [
            tool_call("Spawn", {"prompt": "a", "subagent_type": "keeper"}, id="t1"),
            tool_call("Spawn", {"prompt": "b", "subagent_type": "plain"}, id="t2"),
            text("ok"),
        ]
    )
    keeper = ScriptedProvider([text("oui")])
    plain = ScriptedProvider([text("yes")])
    router = Router(lead, KEEPER=keeper, PLAIN=plain)
    async with stayer.Session(options(tmp_path, router)) as session:
        with_catalog(session, Catalog(agents=(kind("keeper"), kind("plain", memory=False))))
        await run(session, "go")
    assert "Always answer in French." in keeper.requests[0].system
    assert "Always answer in French." not in plain.requests[0].system
    router.assert_done()


async def test_preloaded_skills_open_a_childs_first_message(tmp_path: Path) -> None:
    skill = Skill(
        name="style",
        description="house style",
        body="Indent with tabs.\n",
        kind="skill",
        scope="project",
        source=tmp_path / "style" / "SKILL.md",
        base_dir=tmp_path / "style",
    )
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "fix it", "subagent_type": "styler"}, id="t1"), text("ok")]
    )
    styler = ScriptedProvider([text("fixed")])
    router = Router(lead, STYLER=styler)
    catalog = Catalog(agents=(kind("styler", skills=("style", "missing")),), skills=(skill,))
    async with stayer.Session(options(tmp_path, router)) as session:
        with_catalog(session, catalog)
        await run(session, "go")
    (first,) = styler.requests[0].messages
    said = "".join(
        block.text
        for block in first.content
        if isinstance(block, TextBlock) and not is_listing(block.text)  # the session's own
    )
    assert said == (
        f"[Skill style, from {tmp_path / 'style'}:]\nIndent with tabs.\n\n"
        "[The skill 'missing' this agent preloads was not found.]\n\nfix it"
    )
    router.assert_done()


async def test_a_child_stops_at_its_own_turn_limit_and_its_parent_is_told_why(
    tmp_path: Path,
) -> None:
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "loop", "subagent_type": "brief"}, id="t1"), text("ok")]
    )
    brief = ScriptedProvider([tool_call("Echo", {"text": "again"}, say="Working on it.")])
    router = Router(lead, BRIEF=brief)
    opts = options(tmp_path, router, extra_tools=[Spawn(), Echo()])
    async with stayer.Session(opts) as session:
        with_catalog(session, Catalog(agents=(kind("brief", max_turns=1),)))
        events = await run(session, "go")
    block = results(events)["t1"]
    said = result_text(block)
    assert block.is_error
    assert "stopped before finishing (max_turns:" in said
    assert "The last it wrote:\nWorking on it." in said
    assert "[This report was cut off" in said
    router.assert_done()


async def test_an_agent_type_cannot_give_its_child_a_looser_mode_than_the_parents(
    tmp_path: Path,
) -> None:
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "echo", "subagent_type": "loose"}, id="t1"), text("ok")]
    )
    loose = ScriptedProvider([tool_call("Echo", {"text": "hi"}, id="e1"), text("could not")])
    router = Router(lead, LOOSE=loose)
    opts = options(
        tmp_path,
        router,
        permission_mode="default",
        allowed_tools="Spawn",
        extra_tools=[Spawn(), Echo()],
    )
    async with stayer.Session(opts) as session:
        with_catalog(session, Catalog(agents=(kind("loose", permission_mode="bypassPermissions"),)))
        events = await run(session, "go")
    echoed = [
        e.event
        for e in nested(events)
        if isinstance(e.event, ToolCallFinished) and e.event.tool_use_id == "e1"
    ]
    assert [e.status for e in echoed] == ["denied"]  # asked, and headless nobody answers
    started = [e.event for e in nested(events) if isinstance(e.event, SessionStarted)]
    assert [s.permission_mode for s in started] == ["default"]
    router.assert_done()


def test_a_tools_entry_with_a_specifier_grants_nothing_and_a_disallowed_one_takes_all() -> None:
    definition = kind(
        "gitter", tools=("Read", "Bash(git log:*)", "Edit"), disallowed_tools=("Edit(*.py)",)
    )
    request = SubagentRequest(prompt="p", description="d")
    fixed, allowed = child_tools(
        ["Read", "Bash", "Edit", "Grep"], definition, request, at_cap=False
    )
    assert fixed == ["Read"]
    assert not allowed("Bash") and not allowed("Edit")
    asked = SubagentRequest(prompt="p", description="d", tools=("Read", "Grep(x)"))
    assert child_tools(["Read", "Grep"], kind("all"), asked, at_cap=False)[0] == ["Read"]
    assert restriction_notes(definition, request) == (
        "[stayer, agent gitter: tools entry Bash(git log:*) names only some of Bash's calls, "
        "which a subagent cannot be held to; Bash is left out (list it bare to give all of it).]",
        "[stayer, agent gitter: disallowedTools entry Edit(*.py) takes away all of Edit, not "
        "only those calls.]",
    )


async def test_a_child_is_told_which_tools_entries_were_left_out(tmp_path: Path) -> None:
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "log", "subagent_type": "gitter"}, id="t1"), text("ok")]
    )
    gitter = ScriptedProvider([text("no Bash here")])
    router = Router(lead, GITTER=gitter)
    async with stayer.Session(options(tmp_path, router)) as session:
        with_catalog(session, Catalog(agents=(kind("gitter", tools=("Read", "Bash(git:*)")),)))
        await run(session, "go")
    request = gitter.requests[0]
    assert [tool.name for tool in request.tools] == ["Read"]
    (first,) = request.messages
    said = "".join(block.text for block in first.content if isinstance(block, TextBlock))
    assert said.endswith(
        "[stayer, agent gitter: tools entry Bash(git:*) names only some of Bash's calls, which "
        "a subagent cannot be held to; Bash is left out (list it bare to give all of it).]"
        "\n\nlog"
    )
    router.assert_done()


@pytest.mark.parametrize("rule", [AGENT, f"{AGENT}(gitter)", f"{TASK}(gitter)"])
async def test_a_spawn_an_agent_deny_rule_covers_is_refused_however_it_comes(
    tmp_path: Path, rule: str
) -> None:
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "log", "subagent_type": "gitter"}, id="t1"), text("ok")]
    )
    router = Router(lead, GITTER=ScriptedProvider([]))
    async with stayer.Session(options(tmp_path, router, disallowed_tools=[rule])) as session:
        with_catalog(session, Catalog(agents=(kind("gitter"),)))
        events = await run(session, "go")
    block = results(events)["t1"]
    assert block.is_error
    assert result_text(block) == (
        f"a gitter agent is denied by the permission rule {rule}; do this part of the task yourself"
    )
    assert nested(events) == []
    router.assert_done()


async def test_a_deny_rule_for_another_agent_type_leaves_this_one_be(tmp_path: Path) -> None:
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "log", "subagent_type": "gitter"}, id="t1"), text("ok")]
    )
    router = Router(lead, GITTER=ScriptedProvider([text("done")]))
    denied = [f"{AGENT}(other)"]
    async with stayer.Session(options(tmp_path, router, disallowed_tools=denied)) as session:
        with_catalog(session, Catalog(agents=(kind("gitter"),)))
        events = await run(session, "go")
    assert not results(events)["t1"].is_error
    router.assert_done()


async def test_a_forked_skill_whose_agent_type_a_deny_rule_covers_does_not_run(
    tmp_path: Path,
) -> None:
    lead = ScriptedProvider([tool_call(SKILL, {"skill": "research"}, id="s1"), text("ok")])
    router = Router(lead, GITTER=ScriptedProvider([]))
    denied = [f"{AGENT}(gitter)"]
    async with stayer.Session(options(tmp_path, router, disallowed_tools=denied)) as session:
        research = skill("research", "Look.", tmp_path / "sk", context="fork", agent="gitter")
        with_catalog(session, Catalog(agents=(kind("gitter"),), skills=(research,)))
        events = await run(session, "go")
    block = results(events)["s1"]
    assert block.is_error
    assert result_text(block) == (
        "a gitter agent is denied by the permission rule Agent(gitter); do this part of the "
        "task yourself"
    )
    assert nested(events) == []
    router.assert_done()


async def test_preloaded_skills_are_rendered_without_running_their_commands(
    tmp_path: Path,
) -> None:
    def preloaded(name: str, body: str, **more: object) -> Skill:
        fields: dict[str, Any] = {"description": name, "kind": "skill", **more}
        base = tmp_path / name
        return Skill(
            name=name, body=body, scope="project", source=base / "SKILL.md", base_dir=base, **fields
        )

    marker = tmp_path / "ran"
    style = preloaded("style", f"Tabs$ARGUMENTS in ${{CLAUDE_SKILL_DIR}}. !`touch {marker}`")
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "fix it", "subagent_type": "styler"}, id="t1"), text("ok")]
    )
    styler = ScriptedProvider([text("fixed")])
    router = Router(lead, STYLER=styler)
    skills = (style, preloaded("deploy", "Ship it.", disable_model_invocation=True))
    catalog = Catalog(agents=(kind("styler", skills=("style", "deploy")),), skills=skills)
    async with stayer.Session(options(tmp_path, router)) as session:
        with_catalog(session, catalog)
        await run(session, "go")
    (first,) = styler.requests[0].messages
    said = "".join(
        block.text
        for block in first.content
        if isinstance(block, TextBlock) and not is_listing(block.text)
    )
    assert said == (
        f"[Skill style, from {tmp_path / 'style'}:]\nTabs in {tmp_path / 'style'}. "
        f"[`touch {marker}` was not run: a skill an agent preloads never runs its commands]\n\n"
        "[The skill 'deploy' this agent preloads may only be run by the user (it disables model "
        "invocation); it was not loaded.]\n\nfix it"
    )
    assert not marker.exists()
