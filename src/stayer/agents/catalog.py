"""Everything a session can call on, found once at start-up: `load_catalog` looks in the
project's folders (from the working directory up to the repository root), the user's, the
plugins' and `--agents`, and returns one `Catalog`.

Which definition of a name wins, highest first:
  agents: `--agents` > project (nearest folder; in one folder `.stayer` over `.claude`) >
    user (`~/.stayer` over `~/.claude`) > plugin (`plugin:name`) > built-in;
  skills and commands: a skill over a command of the same name; then personal (home) >
    project (nearest; `.stayer` over `.claude` over `.agents`) > plugin (`plugin:name`).
Two files in one folder defining the same name keep the first (by path) and a problem line.

A run with none of these folders only stats them: the parsers, and PyYAML behind them, are
imported when the first file is found. Nothing here raises for a file: every file left out is
one line in `Catalog.problems`. Only a bad `--agents`, which the user typed for this run, is a
`ConfigError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from msgspec import Struct

from stayer.config.dirs import claude_config_dir, config_root

from .builtin import BUILTIN_AGENTS
from .model import AgentDefinition, Catalog, Plugin, Scope, Skill

if TYPE_CHECKING:
    from .plugins import PluginParts

PluginSource = Literal["--plugin-dir", "enabledPlugins"]

PROJECT_FOLDERS = (".stayer", ".claude")
"""Where agents and commands are, highest first within one directory."""
SKILL_FOLDERS = (".stayer", ".claude", ".agents")
"""Where skills are, highest first within one directory (`.agents` is the Agent Skills
standard's own folder, which Codex and opencode read too)."""


class _Places(Struct, frozen=True, kw_only=True):
    """The folders that may hold definitions, each with its scope, highest first."""

    agents: tuple[tuple[Path, Scope], ...]
    skills: tuple[tuple[Path, Scope], ...]
    commands: tuple[tuple[Path, Scope], ...]


def load_catalog(
    cwd: Path,
    *,
    project_root: Path | None,
    env: Mapping[str, str],
    agents_json: str | Mapping[str, object] | None = None,
    plugin_dirs: Sequence[Path] = (),
    enabled_plugins: Mapping[str, bool] | None = None,
) -> Catalog:
    """The agents, skills, commands and plugins for a session started in `cwd`."""
    places = _places(cwd, project_root, env)
    problems: list[str] = []
    plugins: list[tuple[Plugin, PluginParts]] = []
    if plugin_dirs or enabled_plugins:
        given = [cwd / directory for directory in plugin_dirs]  # an absolute one stays so
        plugins = _plugins(given, enabled_plugins or {}, env, problems)
    agents = _agents(places, plugins, agents_json, problems)
    skills = _skills(places, plugins, problems)
    problems += _dangling(agents, skills)
    return Catalog(
        agents=agents,
        skills=skills,
        plugins=tuple(plugin for plugin, _ in plugins),
        problems=tuple(problems),
    )


def _user_dirs(env: Mapping[str, str]) -> tuple[Path, Path, Path]:
    """The user's stayer folder, Claude Code's, and the home directory."""
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    stayer = config_root(env) if env.get("STAYER_CONFIG_DIR") else home / ".stayer"
    claude = claude_config_dir(env) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    return stayer, claude, home


def _project_chain(cwd: Path, project_root: Path | None) -> tuple[Path, ...]:
    """The directories from `cwd` up to the repository root, nearest first (just `cwd`
    outside a repository)."""
    chain = (cwd, *cwd.parents)
    if project_root is None or project_root not in chain:
        return (cwd,)
    return chain[: chain.index(project_root) + 1]


def _places(cwd: Path, project_root: Path | None, env: Mapping[str, str]) -> _Places:
    """The folders that exist, the user's first, then the project's from `cwd` up."""
    stayer, claude, home = _user_dirs(env)
    user = {".stayer": stayer, ".claude": claude, ".agents": home / ".agents"}
    user_paths = set(user.values())
    chain = _project_chain(cwd, project_root)

    def existing(kind: str, folders: Sequence[str]) -> tuple[tuple[Path, Scope], ...]:
        found: list[tuple[Path, Scope]] = []
        for name in folders:
            found.append((user[name] / kind, "user"))
        for directory in chain:
            for name in folders:
                if directory / name not in user_paths:  # a project at home: the user's, once
                    found.append((directory / name / kind, "project"))
        return tuple((path, scope) for path, scope in found if os.path.isdir(path))

    return _Places(
        agents=existing("agents", PROJECT_FOLDERS),
        skills=existing("skills", SKILL_FOLDERS),
        commands=existing("commands", PROJECT_FOLDERS),
    )


def _plugins(
    plugin_dirs: Sequence[Path],
    enabled: Mapping[str, bool],
    env: Mapping[str, str],
    problems: list[str],
) -> list[tuple[Plugin, PluginParts]]:
    """The plugins from `--plugin-dir` then `enabledPlugins`; the first of a name wins."""
    from .plugins import installed_roots, read_plugin

    _, claude, _ = _user_dirs(env)
    roots, missing = installed_roots(enabled, claude_dir=claude)
    problems += missing
    found: dict[str, tuple[Plugin, PluginParts]] = {}
    candidates: list[tuple[Path, PluginSource, str | None]]
    candidates = [(Path(d), "--plugin-dir", None) for d in plugin_dirs]
    candidates += [(root, "enabledPlugins", version) for root, version in roots]
    for root, source, version in candidates:
        plugin, parts, trouble = read_plugin(root, source=source, version=version)
        problems += trouble
        if plugin is None:
            continue
        if plugin.name in found:
            if source == "--plugin-dir":  # the same name twice on the command line
                problems.append(
                    f"{root}: a plugin named {plugin.name} is already loaded from "
                    f"{found[plugin.name][0].root}; this one is left out"
                )
            continue
        found[plugin.name] = (plugin, parts)
    return list(found.values())


def _agents(
    places: _Places,
    plugins: Sequence[tuple[Plugin, PluginParts]],
    agents_json: str | Mapping[str, object] | None,
    problems: list[str],
) -> tuple[AgentDefinition, ...]:
    """Every agent by name, lowest precedence first so a higher one replaces it."""
    chosen = {agent.name: agent for agent in BUILTIN_AGENTS}
    sources: list[tuple[Path, Scope, str | None]] = [
        (folder, "plugin", plugin.name) for plugin, parts in plugins for folder in parts.agents
    ]
    # `places` is highest first with the user's before the project's; here the user's are
    # the lower of the two
    sources += [
        (folder, "user", None) for folder, scope in reversed(places.agents) if scope == "user"
    ]
    sources += [
        (folder, "project", None) for folder, scope in reversed(places.agents) if scope == "project"
    ]
    for folder, scope, plugin_name in sources:
        chosen.update(_agents_in(folder, scope, plugin_name, problems))
    if agents_json is not None:
        from .definitions import agents_from_json

        chosen.update((agent.name, agent) for agent in agents_from_json(agents_json))
    return tuple(chosen.values())


def _agents_in(
    folder: Path, scope: Scope, plugin: str | None, problems: list[str]
) -> dict[str, AgentDefinition]:
    """The agents of one folder (or one file, a plugin's manifest may name one), by name."""
    from .definitions import agent_files, read_agent_file

    try:
        files = (folder,) if folder.is_file() else agent_files(folder)
    except OSError as error:
        problems.append(
            f"{folder}: cannot be listed ({error.strerror or error}); its agents are left out"
        )
        return {}
    found: dict[str, AgentDefinition] = {}
    for path in files:
        sub = path.parent.relative_to(folder).parts if path.parent != folder else ()
        prefix = "".join(f"{part}:" for part in sub) if plugin is not None else ""
        agent, trouble = read_agent_file(path, scope=scope, plugin=plugin, prefix=prefix)
        problems += trouble
        if agent is None:
            continue
        if agent.name in found:
            problems.append(
                f"{path}: agent `{agent.name}` is also defined in "
                f"{found[agent.name].source}; this one is left out"
            )
            continue
        found[agent.name] = agent
    return found


def _skills(
    places: _Places,
    plugins: Sequence[tuple[Plugin, PluginParts]],
    problems: list[str],
) -> tuple[Skill, ...]:
    """Every skill and command by name, highest precedence first so the first one stays."""
    chosen: dict[str, Skill] = {}
    for kind in ("skills", "commands"):
        folders: list[tuple[Path, Scope, str | None]] = [
            (folder, scope, None) for folder, scope in getattr(places, kind)
        ]
        for plugin, parts in plugins:
            folders += [(folder, "plugin", plugin.name) for folder in getattr(parts, kind)]
        for folder, scope, plugin_name in folders:
            for skill in _skills_in(folder, kind, scope, plugin_name, problems):
                chosen.setdefault(skill.name, skill)
    return tuple(sorted(chosen.values(), key=lambda skill: skill.name))


def _skills_in(
    folder: Path, kind: str, scope: Scope, plugin: str | None, problems: list[str]
) -> list[Skill]:
    """The skills (or commands) of one folder; a repeated name keeps the first."""
    from .skills import SKILL_FILE, command_files, read_command, read_skill, skill_folders

    found: dict[str, Skill] = {}
    try:
        if kind == "skills":
            # a plugin's manifest may name one skill's own folder
            folders = (folder,) if (folder / SKILL_FILE).is_file() else skill_folders(folder)
            read = [read_skill(path, scope=scope, plugin=plugin) for path in folders]
        else:
            files = (folder,) if folder.is_file() else command_files(folder)
            read = [read_command(path, scope=scope, plugin=plugin) for path in files]
    except OSError as error:
        problems.append(
            f"{folder}: cannot be listed ({error.strerror or error}); its {kind} are left out"
        )
        return []
    for skill, problem in read:
        if problem is not None:
            problems.append(problem)
        if skill is None:
            continue
        if skill.name in found:
            problems.append(
                f"{skill.source}: `/{skill.name}` is also defined by "
                f"{found[skill.name].source}; this one is left out"
            )
            continue
        found[skill.name] = skill
    return list(found.values())


def _dangling(agents: Sequence[AgentDefinition], skills: Sequence[Skill]) -> list[str]:
    """A line for each agent's preloaded skill, and each forked skill's agent, that is not
    there: the session would otherwise start the agent without it, or fail only when called."""
    skill_names = {skill.name for skill in skills}
    agent_names = {agent.name for agent in agents}
    lines = [
        f"{agent.source}: agent `{agent.name}` preloads skill `{name}`, which was not found; "
        "add the skill or take it out of `skills`"
        for agent in agents
        for name in agent.skills
        if name not in skill_names
    ]
    lines += [
        f"{skill.source}: `agent: {skill.agent}` names no agent there is; use one of "
        f"{', '.join(sorted(agent_names))}"
        for skill in skills
        if skill.agent is not None and skill.agent not in agent_names
    ]
    return lines
