"""The catalog's commands in the REPL: the custom commands and the skills a person may invoke
(`user_invocable`), each `/name args` in the command table, and `/agents`, the agent types a
subagent may be started as.

Typing `/greet Ada` sends that line as the person's message: the session expands it (the
command's body, its arguments filled in), as it does for `stayer -p "/greet Ada"`, so the REPL
holds no copy of that logic. A built-in command keeps its name: a custom one that would take it
is not offered, and /help says so (`Commands.shadowed`).
"""

from __future__ import annotations

from typing import Protocol

from stayer.agents.model import AgentDefinition, Catalog, Skill
from stayer.driver import Submit
from stayer.errors import ConfigError
from stayer.session.session import Session
from stayer.ui.live_output import safe

from .commands_entry import Command
from .surface import Repl

ORIGINS = {
    "user": "your",
    "project": "the project's",
    "flag": "--agents",
    "plugin": "plugin",
    "built-in": "built-in",
}


def catalog_of(session: Session) -> Catalog:
    """What the session found to delegate to and invoke (nothing before it resolved any)."""
    resolved = session.setup.resolved
    return resolved.catalog if resolved is not None else Catalog()


def origin(skill: Skill) -> str:
    """Where a command or skill comes from, in a few words (for /help)."""
    kind = "command" if skill.kind == "command" else "skill"
    if skill.plugin:
        return f"{kind} of plugin {skill.plugin}"
    return f"{ORIGINS.get(skill.scope, skill.scope)} {kind}"


def skill_command(skill: Skill) -> Command:
    """`/name args`: the line sent as the person's message, for the session to expand."""
    name = skill.name

    async def run(repl: Repl, argument: str) -> None:
        repl.send(Submit(f"/{name} {argument}".rstrip()))

    summary = " ".join(safe(skill.description).split()) or f"the {name} {skill.kind}"
    return Command(
        name, summary, run, argument_hint=safe(skill.argument_hint), origin=origin(skill)
    )


class _Table(Protocol):
    """What `CatalogCommands` needs of the command table (`commands.Commands`)."""

    shadowed: dict[str, str]

    def add(self, command: Command) -> None: ...

    def remove(self, name: str) -> bool: ...

    def find(self, name: str) -> Command | None: ...


class CatalogCommands:
    """Keeps the table's catalog entries those of the session now (a new one after /resume)."""

    def __init__(self) -> None:
        self._added: set[str] = set()

    def offer(self, table: _Table, catalog: Catalog) -> list[str]:
        """Make the table's catalog commands `catalog`'s user-invocable skills and commands;
        one taking a built-in's name goes in `table.shadowed` instead. What could not be
        offered otherwise, one line each."""
        problems: list[str] = []
        for name in self._added:
            table.remove(name)
        self._added = set()
        table.shadowed.clear()
        for skill in catalog.skills:
            if not skill.user_invocable:
                continue
            command = skill_command(skill)
            try:
                table.add(command)
            except ConfigError as error:
                if table.find(skill.name) is not None:  # a built-in's: it wins, /help says so
                    table.shadowed[skill.name] = command.origin
                else:
                    problems.append(f"{command.origin} /{skill.name} is not offered: {error}")
                continue
            self._added.add(skill.name)
        return problems


def agents_text(agents: tuple[AgentDefinition, ...]) -> str:
    """/agents' answer: each agent type, where it is from, its model and tools, what it is
    for."""
    if not agents:
        return "No agent types: the session cannot start subagents"
    width = min(max(len(agent.name) for agent in agents), 24)
    lines = ["Agent types (the model starts one with the Agent tool):"]
    for agent in agents:
        facts = [
            _where(agent),
            f"model: {agent.model or 'inherit'}",
            "tools: " + (", ".join(agent.tools) if agent.tools is not None else "all"),
        ]
        if agent.disallowed_tools:
            facts.append("not: " + ", ".join(agent.disallowed_tools))
        lines.append(f"  {safe(agent.name):<{width}}  " + safe(" · ".join(facts)))
        lines.append("      " + " ".join(safe(agent.description).split()))
    return "\n".join(lines)


def _where(agent: AgentDefinition) -> str:
    if agent.scope in ("built-in", "flag"):
        return ORIGINS[agent.scope]
    if agent.plugin:
        return f"plugin {agent.plugin} ({agent.source})"
    return f"{ORIGINS.get(agent.scope, agent.scope)} ({agent.source})"


async def _agents(repl: Repl, argument: str) -> None:
    repl.say(agents_text(catalog_of(repl.session).agents))


agents_command = Command(
    "agents",
    "the agent types subagents may be started as: where from, model, tools",
    _agents,
    while_running=True,
)
