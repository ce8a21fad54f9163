"""The first message's listing: the skills the Skill tool may load and the agent types the
Agent tool may start, once per conversation, within 1% of the window, the least-used skills
losing their descriptions first."""

from __future__ import annotations

from pathlib import Path

import stayer
from stayer.agents.model import AgentDefinition, Catalog
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.listings import (
    AGENTS_HEAD,
    ENTRY_CHARS,
    SKILLS_HEAD,
    listing,
    skill_lines,
)
from stayer.tools.names import AGENT, SKILL
from tests.session.skill_kit import options, skill, submit, with_skills


def first_texts(model: ScriptedProvider, request: int) -> list[str]:
    first = model.requests[request].messages[0]
    assert isinstance(first, UserMessage)
    return [block.text for block in first.content if isinstance(block, TextBlock)]


async def test_the_first_message_lists_the_skills_the_model_may_load_once(tmp_path: Path) -> None:
    model = ScriptedProvider([text("one"), text("two")])
    async with stayer.Session(options(tmp_path, model, tools=["Skill"])) as session:
        folder = tmp_path / "sk"
        with_skills(
            session,
            skill("greet", "Hi.", folder, when_to_use="When someone arrives."),
            skill("mine", "Mine.", folder, disable_model_invocation=True),
        )
        await submit(session, "hello")
        await submit(session, "again")
    assert first_texts(model, 0) == [
        "hello",
        f"<system-reminder>\n{SKILLS_HEAD}\n"
        "- greet: The greet skill. - When someone arrives.\n</system-reminder>",
    ]
    later = model.requests[1].messages[-1]
    assert isinstance(later, UserMessage) and later.content == (TextBlock("again"),)
    assert first_texts(model, 1) == first_texts(model, 0)  # the first message stays as it was


async def test_a_resumed_conversation_is_not_listed_again(tmp_path: Path) -> None:
    model = ScriptedProvider([text("one")])
    history = (UserMessage.of_text("before"),)
    async with stayer.Session(options(tmp_path, model, history=history)) as session:
        with_skills(session, skill("greet", "Hi.", tmp_path / "sk"))
        await submit(session, "next")
    assert all("<system-reminder>" not in t for t in first_texts(model, 0))


async def test_a_session_without_the_skill_tool_lists_no_skills(tmp_path: Path) -> None:
    model = ScriptedProvider([text("one")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        with_skills(session, skill("greet", "Hi.", tmp_path / "sk"))
        await submit(session, "hello")
    assert first_texts(model, 0) == ["hello"]


def test_agent_types_are_listed_with_their_tools_when_the_agent_tool_is_offered(
    tmp_path: Path,
) -> None:
    catalog = Catalog(
        agents=(
            AgentDefinition(
                name="general-purpose",
                description="Anything.",
                prompt="p",
                scope="built-in",
                source="built-in",
            ),
            AgentDefinition(
                name="reader",
                description="Reads.",
                prompt="p",
                scope="project",
                source="x.md",
                tools=("Read", "Grep"),
            ),
        ),
        skills=(skill("greet", "Hi.", tmp_path),),
    )
    shown = listing(catalog, offered={AGENT}, context_window=200_000, usage={})
    assert shown == (
        f"<system-reminder>\n{AGENTS_HEAD}\n- general-purpose: Anything. (tools: all tools)\n"
        "- reader: Reads. (tools: Read, Grep)\n</system-reminder>"
    )
    both = listing(catalog, offered={AGENT, SKILL}, context_window=200_000, usage={})
    assert both is not None and SKILLS_HEAD in both
    assert listing(catalog, offered=set(), context_window=200_000, usage={}) is None


def test_over_budget_the_least_used_lose_their_descriptions_first(tmp_path: Path) -> None:
    skills = [skill(name, "", tmp_path, description="d" * 100) for name in ("a", "b", "c")]
    full = skill_lines(skills, 10_000, {})
    assert full == [f"- {name}: {'d' * 100}" for name in "abc"]
    budget = sum(len(line) + 1 for line in full) - 50  # one description must go
    assert skill_lines(skills, budget, {"a": 3, "b": 1, "c": 2}) == [
        f"- a: {'d' * 100}",
        "- b",
        f"- c: {'d' * 100}",
    ]
    assert skill_lines(skills, 0, {}) == ["- a", "- b", "- c"]  # names always stay


def test_each_entry_is_capped(tmp_path: Path) -> None:
    long = skill("long", "", tmp_path, description="w " * 2_000)
    [line] = skill_lines([long], 1_000_000, {})
    assert len(line) == len("- long: ") + ENTRY_CHARS and line.endswith("…")
