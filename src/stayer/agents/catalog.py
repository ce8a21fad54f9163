"""Everything a session can delegate to or invoke, found once as it opens (`load_catalog`).

This first version knows the built-in agents and `--agents`; the project's and the user's
files and plugins join it as their readers land.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stayer.errors import ConfigError

from .model import AgentDefinition, Catalog

_BUILT_IN = (
    AgentDefinition(
        name="general-purpose",
        description="A capable agent for multi-step work: researching a question, searching "
        "code, making a change across files. Use it when a task needs many steps of its own.",
        prompt="You are an agent working on one task for a lead agent. Do the task fully with "
        "the tools you have, then answer with a concise report of what you found or did: the "
        "lead reads only your final message.",
        scope="built-in",
        source="built-in",
    ),
)


def load_catalog(
    cwd: Path,
    *,
    project_root: Path | None,
    env: Mapping[str, str],
    agents_json: str | Mapping[str, Mapping[str, Any]] | None = None,
    plugin_dirs: Sequence[Path] = (),
    enabled_plugins: Mapping[str, bool] | None = None,
) -> Catalog:
    """The agents found, `--agents` over the built-ins; raises `ConfigError` in one line for
    a bad `--agents`."""
    given = _flag_agents(agents_json)
    names = {agent.name for agent in given}
    return Catalog(agents=(*given, *(a for a in _BUILT_IN if a.name not in names)))


def _flag_agents(
    agents_json: str | Mapping[str, Mapping[str, Any]] | None,
) -> tuple[AgentDefinition, ...]:
    if agents_json is None:
        return ()
    data: Any = agents_json
    if isinstance(agents_json, str):
        try:
            data = json.loads(agents_json)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--agents: not JSON ({exc}); give an object of agents") from None
    if not isinstance(data, Mapping):
        raise ConfigError("--agents: give a JSON object, each key an agent's name")
    agents = []
    for name, fields in data.items():
        if not isinstance(fields, Mapping) or not all(
            isinstance(fields.get(key), str) and fields.get(key)
            for key in ("description", "prompt")
        ):
            raise ConfigError(f"--agents: agent {name!r} needs a description and a prompt")
        tools = fields.get("tools")
        agents.append(
            AgentDefinition(
                name=str(name),
                description=fields["description"],
                prompt=fields["prompt"],
                scope="flag",
                source="--agents",
                tools=None if tools is None else tuple(str(tool) for tool in tools),
                model=fields.get("model") if fields.get("model") != "inherit" else None,
            )
        )
    return tuple(agents)
