"""Everything a session can call on, found once at start-up: `load_catalog` looks in the
project's folders (from the working directory up to the repository root), the user's, the
plugins' and `--agents`, and returns one `Catalog`.

Which definition of a name wins, highest first:
  agents: `--agents` > project (nearest folder; in one folder `.stayer` over `.claude`) >
    user (`~/.stayer` over `~/.claude`) > plugin (`plugin:name`) > built-in;
  skills and commands: personal (home) > project (nearest; `.stayer` over `.claude` over
    `.agents`) > plugin (`plugin:name`), and within one of these a skill over a command of
    the same name (so a repository's skill never replaces the user's own command).
Two files in one folder defining the same name keep the first (by path) and a problem line, as
does a name taken across scopes, one of the REPL's own (`RESERVED_COMMANDS`), or one differing
from another only in case. A project's agent may replace a built-in or the user's own agent, as
in Claude Code, with a notice line in `problems` saying so.

A project's folders and files must resolve inside the repository (or `cwd` outside one), a
plugin's inside the plugin; see `guard` for what else a file must be to be read.

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

from .builtin import BUILTIN_AGENTS, BUILTIN_NAMES
from .model import RESERVED_COMMANDS, AgentDefinition, Catalog, Plugin, Scope, Skill

if TYPE_CHECKING:
    from .plugins import PluginParts

PluginSource = Literal["--plugin-dir", "enabledPlugins"]

PROJECT_FOLDERS = (".stayer", ".claude")
"""Where agents and commands are, highest first within one directory."""
SKILL_FOLDERS = (".stayer", ".claude", ".agents")
"""Where skills are, highest first within one directory (`.agents` is the Agent Skills
standard's own folder, which Codex and opencode read too)."""


class _Source(Struct, frozen=True, kw_only=True):
    """A folder (or one file) that may hold definitions: its scope, its plugin, and the root
    its files must stay inside (None for the user's own folders, whose links are theirs)."""

    path: Path
    scope: Scope
    plugin: str | None = None
    boundary: Path | None = None


class _Places(Struct, frozen=True, kw_only=True):
    """The folders that may hold definitions, highest first (the user's before the
    project's)."""

    agents: tuple[_Source, ...]
    skills: tuple[_Source, ...]
    commands: tuple[_Source, ...]


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
        problems=_clean(problems),
    )


def _clean(problems: list[str]) -> tuple[str, ...]:
    """Each line on one line, short, with no terminal control in it (a file's name may)."""
    if not problems:
        return ()
    from .guard import one_line

    return tuple(one_line(line) for line in problems)


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

    top = chain[-1]  # the repository root, or `cwd` outside one: nothing above it is read

    def existing(kind: str, folders: Sequence[str]) -> tuple[_Source, ...]:
        found = [_Source(path=user[name] / kind, scope="user") for name in folders]
        for directory in chain:
            for name in folders:
                if directory / name not in user_paths:  # a project at home: the user's, once
                    path = directory / name / kind
                    found.append(_Source(path=path, scope="project", boundary=top))
        return tuple(source for source in found if os.path.isdir(source.path))

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
    sources = _plugin_sources(plugins, "agents")
    # `places` is highest first with the user's before the project's; here the user's are
    # the lower of the two
    sources += [source for source in reversed(places.agents) if source.scope == "user"]
    sources += [source for source in reversed(places.agents) if source.scope == "project"]
    for source in sources:
        for name, agent in _agents_in(source, problems).items():
            replaced = chosen.get(name)
            if agent.scope == "project" and replaced is not None:
                problems.append(_replaces(agent, replaced))
            chosen[name] = agent
    if agents_json is not None:
        from .definitions import agents_from_json

        chosen.update((agent.name, agent) for agent in agents_from_json(agents_json))
    return tuple(chosen.values())


def _replaces(agent: AgentDefinition, replaced: AgentDefinition) -> str:
    """The notice for a project's agent taking the place of one the user relies on (allowed,
    as in Claude Code, but said: a repository may redefine what `Explore` does)."""
    if replaced.scope == "built-in":
        whose = f"the built-in {replaced.name} agent"
    elif replaced.scope == "user":
        whose = f"your own agent `{replaced.name}` ({replaced.source})"
    else:
        whose = f"agent `{replaced.name}` from {replaced.source}"
    return f"{agent.source}: notice: this project's agent replaces {whose}"


def _plugin_sources(plugins: Sequence[tuple[Plugin, PluginParts]], kind: str) -> list[_Source]:
    """The folders (or files) of one kind in the plugins, each bound to its plugin's root."""
    return [
        _Source(path=path, scope="plugin", plugin=plugin.name, boundary=plugin.root)
        for plugin, parts in plugins
        for path in getattr(parts, kind)
    ]


def _refused(path: Path, source: _Source) -> str | None:
    """Why `path` is not read from `source`: it leads outside the project or plugin."""
    from . import guard

    if source.boundary is None or guard.within(path, source.boundary):
        return None
    where = "plugin" if source.plugin is not None else "project"
    return (
        f"{path}: leads outside the {where} ({source.boundary}); refused (a {where}'s "
        "definitions must be its own files)"
    )


def _listing(source: _Source, kind: str, problems: list[str]) -> tuple[Path, ...] | None:
    """The files (or skill folders) `source` holds, or None (with a problem line) when the
    folder is refused or cannot be listed."""
    from . import guard

    refused = _refused(source.path, source)
    if refused is not None:
        problems.append(refused)
        return None
    try:
        if source.path.is_file():  # a plugin's manifest may name one file
            return (source.path,)
        if kind == "skills":
            from .skills import SKILL_FILE, skill_folders

            if (source.path / SKILL_FILE).exists():  # or one skill's own folder
                return (source.path,)
            return skill_folders(source.path, problems)
        keep = (lambda n: n.lower() != "readme.md") if kind == "agents" else (lambda n: True)
        return guard.markdown_files(source.path, problems, keep=keep)
    except OSError as error:
        problems.append(
            f"{source.path}: cannot be listed ({error.strerror or error}); its {kind} are left out"
        )
        return None


def _agents_in(source: _Source, problems: list[str]) -> dict[str, AgentDefinition]:
    """The agents of one folder (or one file), by name."""
    from . import guard
    from .definitions import read_agent_file

    found: dict[str, AgentDefinition] = {}
    for path in _listing(source, "agents", problems) or ():
        refused = _refused(path, source)
        if refused is not None:
            problems.append(refused)
            continue
        try:
            prefix = _prefix(source, path)
            agent, trouble = read_agent_file(
                path, scope=source.scope, plugin=source.plugin, prefix=prefix
            )
        except _BadPrefix as error:
            agent, trouble = None, (f"{path}: {error}; left out",)
        except guard.PARSE_ERRORS as error:  # the last guard: a file never makes this raise
            agent, trouble = None, (_unreadable(path, error),)
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


class _BadPrefix(Exception):
    """A plugin agent's subfolder that cannot be part of a name."""


def _prefix(source: _Source, path: Path) -> str:
    """For a plugin's agent in a subfolder, the `sub:` its name gets; raises `_BadPrefix`
    for a subfolder that could not be a name."""
    from . import guard

    if source.plugin is None or path.parent == source.path:
        return ""
    from .definitions import valid_name

    parts = path.parent.relative_to(source.path).parts
    for part in parts:
        if not valid_name(part) or part in BUILTIN_NAMES:
            raise _BadPrefix(
                f"its folder `{guard.shown(part)}` cannot be part of an agent's name (use "
                "lowercase letters, digits, `-`, `.` and `_`)"
            )
    return "".join(f"{part}:" for part in parts)


def _unreadable(path: Path, error: BaseException) -> str:
    return f"{path}: cannot be read ({type(error).__name__}); left out"


_ORDER: tuple[Scope, ...] = ("user", "project", "plugin")
"""Skills and commands: the user's own first, then the project's, then the plugins'."""


def _skills(
    places: _Places,
    plugins: Sequence[tuple[Plugin, PluginParts]],
    problems: list[str],
) -> tuple[Skill, ...]:
    """Every skill and command by name: by scope first, then a skill over a command within
    one scope, so the first one stays. A name clashing across scopes, a REPL command's name
    or another's in a different case is a problem line."""
    chosen: dict[str, Skill] = {}  # by lowercase name
    for scope in _ORDER:
        for kind in ("skills", "commands"):
            sources = [s for s in getattr(places, kind) if s.scope == scope]
            if scope == "plugin":
                sources = _plugin_sources(plugins, kind)
            for source in sources:
                for skill in _skills_in(source, kind, problems):
                    _choose(skill, chosen, problems)
    return tuple(sorted(chosen.values(), key=lambda skill: skill.name))


def _choose(skill: Skill, chosen: dict[str, Skill], problems: list[str]) -> None:
    """Keep `skill` unless its name is taken (a problem line when that is surprising)."""
    key = skill.name.lower()
    if key in RESERVED_COMMANDS:
        problems.append(
            f"{skill.source}: `/{skill.name}` is one of stayer's own commands; this one is "
            "left out (rename it)"
        )
        return
    kept = chosen.get(key)
    if kept is None:
        chosen[key] = skill
    elif kept.name != skill.name:
        problems.append(
            f"{skill.source}: `/{skill.name}` differs from `/{kept.name}` ({kept.source}) "
            "only in case; this one is left out (rename one)"
        )
    elif kept.scope != skill.scope:
        problems.append(
            f"{skill.source}: `/{skill.name}` is also defined by {kept.source}, which wins "
            f"({kept.scope} over {skill.scope}); this one is left out"
        )


def _skills_in(source: _Source, kind: str, problems: list[str]) -> list[Skill]:
    """The skills (or commands) of one folder; a repeated name keeps the first."""
    found: dict[str, Skill] = {}
    for path in _listing(source, kind, problems) or ():
        refused = _refused(path, source)
        if refused is None and kind == "skills" and path.is_dir():
            from .skills import SKILL_FILE

            refused = _refused(path / SKILL_FILE, source)
        if refused is not None:
            problems.append(refused)
            continue
        skill, problem = _read_skill(source, kind, path)
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


def _read_skill(source: _Source, kind: str, path: Path) -> tuple[Skill | None, str | None]:
    """One skill folder or command file, never raising (the last guard for a hostile file)."""
    from . import guard
    from .skills import read_command, read_skill

    try:
        if kind == "skills":
            return read_skill(path, scope=source.scope, plugin=source.plugin)
        prefix = path.parent.relative_to(source.path).parts if path != source.path else ()
        return read_command(path, scope=source.scope, plugin=source.plugin, prefix=prefix)
    except guard.PARSE_ERRORS as error:
        return None, _unreadable(path, error)


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
