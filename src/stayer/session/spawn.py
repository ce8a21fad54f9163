"""A subagent's session, made from its agent type and the request (`Session._spawn_subagent`).

The child is derived from the session whose tool asked (`Session.derive`): its conversation
starts from the request's prompt (with the agent's preloaded skills), its system prompt is the
agent's own with the environment facts the model needs (where it works, on what, when), its
tools are the agent's less what it may not use and never one its parent lacks, and its model
is the one asked for or the agent's, served by its parent's client (a model that client cannot
serve is refused in one line: a child never silently answers with another model than the one
configured). It asks its permission questions of the top session's decider, naming itself.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from stayer.agents.model import AgentDefinition, Catalog
from stayer.context.memory import Memory, project_root
from stayer.context.prompt import Environment, environment_section, memory_section
from stayer.errors import ConfigError
from stayer.events import PermissionRequested
from stayer.messages import ToolSpec
from stayer.permissions import Decision
from stayer.permissions.matching import first_hit
from stayer.tools.base import SubagentRequest, Tool, ToolFailure, subagent_transcript
from stayer.tools.names import AGENT, MCP_PREFIX, TASK, TOOL_ALIASES

from .member import Member
from .reasoning import checked_effort
from .transcript import TranscriptWriter

if TYPE_CHECKING:
    from stayer.tools.base import ToolSource


def definition_for(catalog: Catalog, request: SubagentRequest) -> AgentDefinition:
    """The agent type the request names; an unknown one is refused naming the known ones."""
    found = catalog.agent(request.subagent_type)
    if found is None:
        known = ", ".join(agent.name for agent in catalog.agents) or "none"
        raise ToolFailure(
            f"there is no agent type {request.subagent_type!r}; the types are: {known}"
        )
    return found


def check_allowed(parent: Member, definition: AgentDefinition, isolation: str | None) -> None:
    """Refuse, in one line, a subagent the parent's permission policy rules out: one an
    `Agent` or `Agent(type)` deny rule covers (a skill's fork reaches here without the Agent
    tool's own check), or one in its own worktree while the parent plans (making a worktree
    writes a branch and a checkout; plan mode changes nothing)."""
    policy = parent.setup.permissions.policy
    cwd = parent.setup.params.tool_context.cwd
    rule = first_hit(policy.deny, AGENT, (definition.name,), cwd, "none")
    if rule is not None:
        raise ToolFailure(
            f"a {definition.name} agent is denied by the permission rule {rule}; do this part "
            "of the task yourself"
        )
    if isolation == "worktree" and parent.permission_mode == "plan":
        raise ToolFailure(
            "isolation 'worktree' makes a branch and a checkout, and plan mode changes "
            "nothing; leave isolation out while planning"
        )


def child_tools(
    parent_names: Sequence[str],
    definition: AgentDefinition,
    request: SubagentRequest,
    *,
    at_cap: bool,
) -> tuple[list[str], Callable[[str], bool]]:
    """The built-in and caller's tools the child gets, and which MCP tools it may see: the
    agent's (all its parent's when it names none), narrowed by the request's, less its
    disallowed ones, never a tool the parent lacks, and no subagent tool at the depth cap.

    An entry with a specifier (`Bash(git log:*)`) grants nothing: a child cannot be held to
    some of a tool's calls, and the whole tool would be more than the agent asked for; a
    disallowed one removes the whole tool (`restriction_notes` says both)."""
    listed = None if definition.tools is None else set(_names(definition.tools))
    asked = None if request.tools is None else set(_names(request.tools))
    denied = tuple(_names(definition.disallowed_tools))

    def allowed(name: str) -> bool:
        if at_cap and name in (AGENT, TASK):
            return False
        if listed is not None and not _matches(name, listed):
            return False
        if asked is not None and not _matches(name, asked):
            return False
        return not any(_rule_covers(rule, name) for rule in denied)

    fixed = [name for name in parent_names if not name.startswith(MCP_PREFIX) and allowed(name)]
    return fixed, allowed


def _names(items: Sequence[str]) -> list[str]:
    return [name.strip() for item in items for name in item.split(",") if name.strip()]


def _matches(name: str, wanted: set[str]) -> bool:
    """Whether an entry of a list that grants tools grants `name` (a specifier never does)."""
    return any(_rule_covers(rule, name) for rule in wanted if "(" not in rule)


def restriction_notes(definition: AgentDefinition, request: SubagentRequest) -> tuple[str, ...]:
    """A line for each `tools` entry with a specifier, which grants nothing, and each
    `disallowedTools` one, which takes the whole tool away."""
    granting = (*(definition.tools or ()), *(request.tools or ()))
    notes = [
        f"tools entry {entry} names only some of {_bare(entry)}'s calls, which a subagent "
        f"cannot be held to; {_bare(entry)} is left out (list it bare to give all of it)"
        for entry in dict.fromkeys(_names(granting))
        if "(" in entry
    ]
    notes += [
        f"disallowedTools entry {entry} takes away all of {_bare(entry)}, not only those calls"
        for entry in dict.fromkeys(_names(definition.disallowed_tools))
        if "(" in entry
    ]
    return tuple(f"[stayer, agent {definition.name}: {note}.]" for note in notes)


def _bare(entry: str) -> str:
    return entry.split("(", 1)[0].strip()


def _rule_covers(rule: str, name: str) -> bool:
    """Whether a tool rule in rule form (`Bash`, `mcp__server`, `mcp__server__*`) names `name`
    (a specifier is dropped: for a deny, the whole tool goes)."""
    rule = _bare(rule)
    if TOOL_ALIASES.get(rule, rule) == TOOL_ALIASES.get(name, name):
        return True
    if rule.startswith(MCP_PREFIX):
        server = rule.removesuffix("*").removesuffix("__")
        return name.startswith(server + "__")
    return False


class FilteredSource:
    """A tool source (the session's MCP catalog) as a child sees it: only the tools it may use."""

    def __init__(self, source: ToolSource, allowed: Callable[[str], bool]) -> None:
        self._source = source
        self._allowed = allowed

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(spec for spec in self._source.specs() if self._allowed(spec.name))

    def tools(self) -> Mapping[str, Tool[Any]]:
        return {n: t for n, t in self._source.tools().items() if self._allowed(n)}

    def begin(self) -> None:
        self._source.begin()


def system_text(
    definition: AgentDefinition,
    request: SubagentRequest,
    *,
    cwd: Path,
    model: str,
    memory: Memory,
) -> str:
    """The child's system prompt: the request's or the agent's, where it works, and the
    memory files its parent read when its agent type keeps them (`memory`)."""
    own = request.system_prompt or definition.prompt
    facts = Environment(
        cwd=cwd,
        platform=platform.system().lower(),
        os_version=platform.release(),
        date=datetime.date.today(),
        is_git_repo=project_root(cwd) is not None,
        model=model,
    )
    parts = [own.rstrip(), environment_section(facts).rstrip()]
    if definition.memory and memory.files:
        parts.append(memory_section(memory).rstrip())
    return "\n\n".join(parts)


NOT_RUN = "[`{command}` was not run: a skill an agent preloads never runs its commands]"


def first_message(
    catalog: Catalog,
    definition: AgentDefinition,
    prompt: str,
    *,
    notes: Sequence[str] = (),
    session_id: str = "",
    project_dir: Path | None = None,
) -> str:
    """The child's first message: what stayer says of its tools (`notes`), the preloaded
    skills' instructions, then the task. Each skill is rendered as if loaded with no
    arguments, except that its `!` commands are not run (nobody chose to run them: the agent's
    file named the skill) but noted in their place; one only the user may invoke is not
    loaded, and a line says so. `project_dir`: the child's folder (None: the process's)."""
    from stayer.agents.arguments import render  # only an agent that preloads skills needs it

    parts: list[str] = list(notes)
    for name in definition.skills:
        skill = catalog.skill(name)
        if skill is None:
            parts.append(f"[The skill {name!r} this agent preloads was not found.]")
            continue
        if skill.disable_model_invocation:
            parts.append(
                f"[The skill {skill.name!r} this agent preloads may only be run by the user "
                "(it disables model invocation); it was not loaded.]"
            )
            continue
        root = next((p.root for p in catalog.plugins if p.name == skill.plugin), None)
        filled = render(
            skill.body,
            "",
            names=skill.arguments,
            session_id=session_id,
            project_dir=project_dir or Path.cwd(),
            skill_dir=skill.base_dir,
            plugin_root=root if skill.plugin is not None else None,
        )
        body = filled.fill([NOT_RUN.format(command=command) for command in filled.commands])
        parts.append(f"[Skill {skill.name}, from {skill.base_dir}:]\n{body.strip()}")
    return "\n\n".join((*parts, prompt))


def derive_child(
    parent: Member,
    request: SubagentRequest,
    definition: AgentDefinition,
    *,
    cwd: Path | None = None,
) -> Member:
    """The child session, before it runs, working in `cwd` (its parent's folder when None); a
    model its parent's client cannot serve, or a permission mode that cannot be read, is
    refused in one line."""
    params = parent.setup.params
    at_cap = parent.depth + 1 >= parent.tree.max_depth
    fixed, allowed = child_tools(params.tools.names, definition, request, at_cap=at_cap)
    model = request.model or definition.model
    cwd = cwd or params.tool_context.cwd
    resolved = parent.setup.resolved
    memory = Memory() if resolved is None else resolved.system.memory
    prompt = system_text(definition, request, cwd=cwd, model=model or params.model, memory=memory)
    effort = request.effort or definition.effort  # the call's, else its agent type's
    try:
        child = parent.derive(
            system_prompt=prompt,
            tools=fixed,
            model=model,
            permission_mode=definition.permission_mode,
            cwd=cwd,
        )
        effort = None if effort is None else checked_effort(effort)
    except ConfigError as error:
        raise ToolFailure(f"cannot start a {definition.name} agent: {error}") from None
    child_params = child.setup.params
    mcp = parent.mcp_source()
    if mcp is not None:
        tools = child_params.tools.with_source(FilteredSource(mcp, allowed))
        child_params = replace(child_params, tools=tools)
    if definition.max_turns is not None:
        child_params = replace(child_params, max_turns=definition.max_turns)
    if effort is not None:
        child_params = replace(child_params, effort=effort)
    label = f"{definition.name}: {request.description}"
    child_params = replace(child_params, decide=_naming(child_params.decide, label))
    child.setup = replace(child.setup, params=child_params)
    return child


def _naming(
    decide: Callable[[PermissionRequested], Awaitable[Decision]] | None, label: str
) -> Callable[[PermissionRequested], Awaitable[Decision]] | None:
    """The top session's decider, told which subagent asks (headless: none, as the parent)."""
    if decide is None:
        return None

    async def named(request: PermissionRequested) -> Decision:
        return await decide(replace(request, agent=label))

    return named


def child_writer(parent: Member, agent_id: str, child: Member) -> TranscriptWriter | None:
    """The child's transcript, beside its parent's (`subagents/agent-<id>.jsonl`); none when
    the parent keeps none."""
    kept = parent.transcript_writer
    folder = parent.setup.params.tool_context.session_dir
    if kept is None or folder is None:
        return None
    return TranscriptWriter(
        path=subagent_transcript(folder, agent_id),
        session_id=agent_id,
        cwd=kept.cwd,
        git_branch=kept.git_branch,
        scrub=kept.scrub,
        mode=lambda: child.permission_mode,
    )
