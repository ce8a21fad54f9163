"""What the model is told it can delegate to and load: the first user message's listing.

A session that offers the Agent tool names the agent types it may start (name, description,
tools); one that offers the Skill tool names the skills it may load (name, description and
when to use it). Only this listing costs context until a skill is loaded, so it is held to
1% of the model's window: each entry is capped, and when the whole is still too long the
least-used skills lose their descriptions first (their names always stay, so the model still
knows they exist). Skills only the user may invoke are not listed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from stayer.agents.model import AgentDefinition, Catalog, Skill
from stayer.context.compact import CHARS_PER_TOKEN
from stayer.loop.state import LoopParams
from stayer.messages import TextBlock, UserMessage
from stayer.tools.names import AGENT, SKILL

ENTRY_CHARS = 1_536
"""The most of one entry's description (with its when-to-use) the listing shows."""
WINDOW_SHARE = 100
"""The skills' listing takes at most 1/100 of the context window."""
AGENTS_HEAD = "The Agent tool can start these agent types (subagent_type):"
SKILLS_HEAD = (
    "The Skill tool can load these skills; load one when the task matches its description, "
    "before doing the work yourself:"
)
MARK = "<system-reminder>\n"


def with_listing(message: UserMessage, catalog: Catalog, params: LoopParams) -> UserMessage:
    """A conversation's first `message` with the listing after what the user said (where the
    session's other reminders go), or as it is when there is nothing to list."""
    if not catalog.agents and not catalog.skills:
        return message
    from .skill_host import usage_counts  # read only when there are skills to rank

    text = listing(
        catalog,
        offered=params.tools.names,
        context_window=params.context_window,
        usage=usage_counts(params.tool_context.env) if catalog.skills else {},
    )
    return message if text is None else UserMessage((*message.content, TextBlock(text)))


def listing(
    catalog: Catalog,
    *,
    offered: Collection[str],
    context_window: int,
    usage: Mapping[str, int],
) -> str | None:
    """The `<system-reminder>` block for a first message, or None when the session offers
    neither tool, or has nothing to list for those it offers."""
    parts: list[str] = []
    if AGENT in offered and catalog.agents:
        parts.append("\n".join([AGENTS_HEAD, *(_agent_line(a) for a in catalog.agents)]))
    loadable = [s for s in catalog.skills if not s.disable_model_invocation]
    if SKILL in offered and loadable:
        budget = context_window // WINDOW_SHARE * CHARS_PER_TOKEN
        parts.append("\n".join([SKILLS_HEAD, *skill_lines(loadable, budget, usage)]))
    if not parts:
        return None
    return MARK + "\n\n".join(parts) + "\n</system-reminder>"


def is_listing(text: str) -> bool:
    """Whether `text` is a listing this module wrote (a transcript reader, or a test, may
    leave it out of what the user said)."""
    return text.startswith((MARK + AGENTS_HEAD, MARK + SKILLS_HEAD))


def _agent_line(agent: AgentDefinition) -> str:
    tools = "all tools" if agent.tools is None else ", ".join(agent.tools) or "no tools"
    return f"- {agent.name}: {_capped(agent.description)} (tools: {tools})"


def skill_lines(skills: list[Skill], budget: int, usage: Mapping[str, int]) -> list[str]:
    """One line per skill within `budget` characters if dropping descriptions can get there:
    the least-used lose theirs first (of equal use, the later listed)."""
    described = {skill.name: _description(skill) for skill in skills}
    order = sorted(range(len(skills)), key=lambda index: (usage.get(skills[index].name, 0), -index))
    lines = [_line(skill.name, described[skill.name]) for skill in skills]
    total = sum(len(line) + 1 for line in lines)
    for index in order:
        if total <= budget:
            break
        bare = _line(skills[index].name, "")
        total -= len(lines[index]) - len(bare)
        lines[index] = bare
    return lines


def _description(skill: Skill) -> str:
    text = skill.description.strip()
    if skill.when_to_use.strip():
        text = f"{text} - {skill.when_to_use.strip()}" if text else skill.when_to_use.strip()
    return _capped(text)


def _capped(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ENTRY_CHARS else flat[: ENTRY_CHARS - 1] + "…"


def _line(name: str, description: str) -> str:
    return f"- {name}: {description}" if description else f"- {name}"
