"""A main session run as an agent (`--agent NAME`, or `agent` in settings): the agent's
definition folded into the run's options, before the toolbox and the system prompt are made.

What the person gave on the command line wins; the agent fills in the rest, and never widens
what the flags and the settings allow:

* its prompt is the system prompt's base (stayer's environment facts still follow it; a
  non-empty `--system-prompt` wins, the empty one claude-agent-sdk passes does not);
* its `tools` pick among the tools the run would have (`--tools`, else every built-in, and the
  caller's own `extra_tools`); an MCP server none of them names (`mcp__server`,
  `mcp__server__*` or one of its tools) is hidden with a deny rule, and its `disallowedTools`
  become deny rules, as a settings file's would. A server one of whose tools is named is
  offered whole: its other tools are not known yet;
* its `model` unless `--model`, its `maxTurns` unless `--max-turns`;
* its `permissionMode` unless `--permission-mode`, and only when that mode lets through no more
  than the mode the settings start in (else that mode stays, and a note says so).

Whether the memory files join the prompt is the agent's `memory` (`resolve` reads it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from msgspec.structs import replace

from stayer.agents.model import AgentDefinition, Catalog
from stayer.errors import ConfigError
from stayer.permissions import parse_mode
from stayer.tools.base import Tool
from stayer.tools.names import MCP_PREFIX, TOOL_ALIASES

from .mode_bounds import NO_LOOSER
from .options import QueryOptions


def chosen_agent(catalog: Catalog, name: str, *, said_by: str = "--agent") -> AgentDefinition:
    """The agent called `name`; raises `ConfigError` listing the agents there are. `said_by`
    names where the name came from (the flag, or the settings)."""
    agent = catalog.agent(name)
    if agent is None:
        known = ", ".join(sorted(a.name for a in catalog.agents)) or "none"
        raise ConfigError(f"{said_by} {name}: no such agent; the agents are: {known}")
    return agent


def as_agent(
    agent: AgentDefinition,
    options: QueryOptions,
    *,
    flags: QueryOptions,
    builtins: Collection[str],
    servers: Collection[str] = (),
) -> tuple[QueryOptions, tuple[str, ...]]:
    """`options` (the settings folded in) for a session run as `agent`, and a note for each
    part of the agent left out; `flags` are the options as the caller gave them, before the
    settings, `builtins` the names of the built-in tools and `servers` the MCP servers'."""
    notes: list[str] = []
    custom = flags.system_prompt
    mode = _mode(agent, options, flags, notes)
    return replace(
        options,
        system_prompt=custom or agent.prompt,
        tools=_tools(agent, options, builtins, notes),
        extra_tools=_own_tools(agent, options),
        disallowed_tools=(
            *_listed(options.disallowed_tools),
            *agent.disallowed_tools,
            *_unnamed_servers(agent, servers),
        ),
        model=agent.model if flags.model is None and agent.model else options.model,
        max_turns=flags.max_turns if flags.max_turns is not None else agent.max_turns,
        permission_mode=mode,
    ), tuple(notes)


def _mode(
    agent: AgentDefinition, options: QueryOptions, flags: QueryOptions, notes: list[str]
) -> str | None:
    """The agent's mode when the flags name none and it is no looser than the settings' own."""
    wanted = agent.permission_mode
    if wanted is None or flags.permission_mode is not None:
        return options.permission_mode
    start = parse_mode(options.permission_mode or "default")
    try:
        mode = parse_mode(wanted)
    except ConfigError as error:
        raise ConfigError(f"agent {agent.name} ({agent.source}): {error}") from None
    if mode in NO_LOOSER[start]:  # the rule that bounds a subagent's mode by its parent's
        return wanted
    notes.append(
        f"agent {agent.name}: permissionMode {wanted} would allow more than {start}, the mode "
        f"the settings start in; running in {start} (set it with --permission-mode)"
    )
    return start


def _tools(
    agent: AgentDefinition,
    options: QueryOptions,
    builtins: Collection[str],
    notes: list[str],
) -> str | Sequence[str] | None:
    """The built-ins the agent names, among those the run would have; an entry with a
    specifier (`Bash(git log:*)`) names none: the session cannot be held to some of a tool's
    calls by its list of tools, and the whole tool is more than the agent asked for."""
    given, extra = options.tools, options.extra_tools
    if agent.tools is None:
        return given
    allowed = set(builtins) if given is None else _named(given, builtins)
    own = {tool.name for tool in extra}
    picked: list[str] = []
    for entry in agent.tools:
        name = entry.split("(", 1)[0].strip()  # `Agent(worker)`: the tool, not its rule
        name = TOOL_ALIASES.get(name, name)  # `Task` is Agent
        if "(" in entry:
            notes.append(
                f"agent {agent.name}: tools entry {entry.strip()} names only some of {name}'s "
                f"calls, which the tools list cannot hold a session to; {name} is left out "
                "(list it bare to give all of it)"
            )
        elif name in allowed:
            picked.append(name)
        elif name not in builtins and name not in own and not name.startswith(MCP_PREFIX):
            notes.append(f"agent {agent.name}: tool {name} is not one stayer has; left out")
    return list(dict.fromkeys(picked))


def _own_tools(agent: AgentDefinition, options: QueryOptions) -> Sequence[Tool[Any]]:
    """The caller's own tools (`QueryOptions.extra_tools`) the agent's `tools` name."""
    if agent.tools is None:
        return options.extra_tools
    named = {entry.strip() for entry in agent.tools if "(" not in entry}
    return tuple(tool for tool in options.extra_tools if tool.name in named)


def _unnamed_servers(agent: AgentDefinition, servers: Collection[str]) -> list[str]:
    """A deny rule (`mcp__server`) for each MCP server the agent's `tools` do not name."""
    if agent.tools is None:
        return []
    named = {
        entry.removeprefix(MCP_PREFIX).split("__", 1)[0]
        for entry in agent.tools
        if entry.startswith(MCP_PREFIX)
    }
    return [f"{MCP_PREFIX}{server}" for server in servers if server not in named]


def _named(given: str | Sequence[str], builtins: Collection[str]) -> set[str]:
    """The tools `--tools` names (`default`: every built-in)."""
    names = {name.strip() for item in _listed(given) for name in item.split(",")} - {""}
    return set(builtins) if names == {"default"} else names


def _listed(value: str | Sequence[str]) -> Sequence[str]:
    return (value,) if isinstance(value, str) else value
