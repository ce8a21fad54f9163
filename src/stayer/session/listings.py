"""What the model is told it can delegate to and load: the first user message's listing.

A session that offers the Agent tool names the agent types it may start (name, description,
tools); one that offers the Skill tool names the skills it may load (name, description and
when to use it). Only this listing costs context until a skill is loaded, so it is held to
1% of the model's window, agent types and skills together: each entry and each name is
capped, and when the whole is still too long the least-used skills (then the last agent types)
lose their descriptions first, then, if their names alone are too many, their lines, and a
last line says how many more the tools accept by name. The listing is a repository's words:
markup shaped like the harness's own is escaped in it. Skills only the user may invoke are
not listed. A summary carries the listing over into its own message (`loop.reattach`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from msgspec import Struct

from stayer.agents.model import AgentDefinition, Catalog, Skill
from stayer.context.compact import CHARS_PER_TOKEN
from stayer.loop.reattach import AGENTS_HEAD as AGENTS_HEAD  # the listing's heads
from stayer.loop.reattach import LISTING_MARK as MARK
from stayer.loop.reattach import SKILLS_HEAD as SKILLS_HEAD
from stayer.loop.reattach import is_listing as is_listing  # where readers look for it
from stayer.loop.state import LoopParams
from stayer.messages import TextBlock, UserMessage
from stayer.tools.names import AGENT, SKILL

ENTRY_CHARS = 1_536
"""The most of one entry's description (with its when-to-use) the listing shows."""
WINDOW_SHARE = 100
"""The skills' listing takes at most 1/100 of the context window."""
_SUSPECT = re.compile(r"<|(?:human|assistant|user|system)\s*:", re.IGNORECASE)
"""What the escaper could change: a tag's `<`, or a turn's role and colon."""
NAME_CHARS = 64
"""The most of a name the listing shows (a longer one is cut, and marked so)."""
MORE_AGENTS = "- …and {n} more (the Agent tool starts them by name)"
MORE_SKILLS = "- …and {n} more (the Skill tool loads them by name)"


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
    agents = list(catalog.agents) if AGENT in offered else []
    loadable = [s for s in catalog.skills if not s.disable_model_invocation]
    skills = loadable if SKILL in offered else []
    if not agents and not skills:
        return None
    sections = [
        _Section(AGENTS_HEAD, tuple(_agent_entry(a) for a in agents), MORE_AGENTS),
        _Section(SKILLS_HEAD, tuple(_skill_entry(s) for s in skills), MORE_SKILLS),
    ]
    sections = [section for section in sections if section.entries]
    frame = len(MARK) + len("\n</system-reminder>")
    budget = context_window // WINDOW_SHARE * CHARS_PER_TOKEN - frame
    budget -= sum(len(section.head) + 2 for section in sections)
    ranks = [usage.get(skill.name, 0) for skill in skills]
    parts = [
        "\n".join([section.head, *lines])
        for section, lines in zip(sections, _fitted(sections, budget, ranks), strict=True)
    ]
    return MARK + "\n\n".join(parts) + "\n</system-reminder>"


def _plain(text: str) -> str:
    """`text`, a repository's words, with markup shaped like the harness's own made inert, as
    in a subagent's report."""
    if _SUSPECT.search(text) is None:
        return text  # the escaper (and the tools package it lives in) is not loaded for it
    from stayer.tools.builtin.agent_result import escaped

    return escaped(text)[0]


class _Entry(Struct, frozen=True):
    """One listed agent type or skill: its line with its description, and without."""

    full: str
    bare: str


class _Section(Struct, frozen=True):
    """The agents' or the skills' part of the listing."""

    head: str
    entries: tuple[_Entry, ...]
    more: str


def _agent_entry(agent: AgentDefinition) -> _Entry:
    if agent.tools is None:
        tools = "all tools"
    else:
        tools = _capped(_plain(", ".join(agent.tools))) or "no tools"
    name = _name(_plain(agent.name))
    described = _capped(_plain(agent.description))
    full = f"- {name}: {described} (tools: {tools})" if described else f"- {name} (tools: {tools})"
    return _Entry(full, f"- {name}")


def _skill_entry(skill: Skill) -> _Entry:
    name = _name(_plain(skill.name))
    return _Entry(_line(name, _description(skill)), _line(name, ""))


def _fitted(sections: Sequence[_Section], budget: int, ranks: Sequence[int]) -> list[list[str]]:
    """Each section's lines within `budget` characters: over it, the least-used skills (of
    equal use, the later listed), then the later agent types lose their descriptions; if bare
    names are still too many, they are left out in the same order, and a last line says how
    many more there are. `ranks` is each skill's use (the last section's entries)."""
    lines: list[list[str | None]] = [[e.full for e in section.entries] for section in sections]
    order = _order(sections, ranks)
    total = sum(len(line) + 1 for part in lines for line in part if line is not None)
    for s, i in order:
        if total <= budget:
            break
        bare = sections[s].entries[i].bare
        total -= len(lines[s][i] or "") - len(bare)
        lines[s][i] = bare
    dropped = [0] * len(sections)

    def more() -> int:  # the "…and N more" lines, as they stand
        return sum(len(x.more.format(n=n)) + 1 for x, n in zip(sections, dropped, strict=True) if n)

    for s, i in order:
        if total + more() <= budget:
            break
        total -= len(lines[s][i] or "") + 1
        lines[s][i] = None
        dropped[s] += 1
    return [
        [line for line in part if line is not None]
        + ([section.more.format(n=gone)] if gone else [])
        for section, part, gone in zip(sections, lines, dropped, strict=True)
    ]


def _order(sections: Sequence[_Section], ranks: Sequence[int]) -> list[tuple[int, int]]:
    """Which entries give way first: skills by use (the later of equal use first), then agent
    types from the last listed (the built-in ones come first and go last)."""
    skills = [
        (s, i)
        for s, section in enumerate(sections)
        if section.head == SKILLS_HEAD
        for i in sorted(range(len(section.entries)), key=lambda i: (ranks[i], -i))
    ]
    agents = [
        (s, i)
        for s, section in enumerate(sections)
        if section.head == AGENTS_HEAD
        for i in reversed(range(len(section.entries)))
    ]
    return skills + agents


def _description(skill: Skill) -> str:
    text = _plain(skill.description).strip()
    when = _plain(skill.when_to_use).strip()
    if when:
        text = f"{text} - {when}" if text else when
    return _capped(text)


def _name(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= NAME_CHARS else flat[: NAME_CHARS - 1] + "…"


def _capped(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ENTRY_CHARS else flat[: ENTRY_CHARS - 1] + "…"


def _line(name: str, description: str) -> str:
    return f"- {name}: {description}" if description else f"- {name}"
