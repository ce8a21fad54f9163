"""What an agent type's definition gives its children: memory files or none, preloaded
skills in the first message, its own turn limit (and a parent told why a child stopped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec.structs import replace

import stayer
from stayer.agents.model import AgentDefinition, Catalog, Skill
from stayer.events import SessionStarted, ToolCallFinished
from stayer.messages import TextBlock
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.listings import is_listing
from tests.fakes.tools import Echo

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
