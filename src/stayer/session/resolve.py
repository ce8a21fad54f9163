"""Resolving a session: everything its start-up reads from disk, the environment and the
machine, done once, off the event loop (`Session.open` runs it in a worker thread).

`resolve(options)` checks the options, reads the settings files (`settings`), the agents,
skills, commands and plugins (`stayer.agents`; `--agent` folds its agent into the options,
`agent_options`), the plugins' hooks and MCP servers, the memory files and the git snapshot
(`system_prompt`), probes the sandbox, makes the model client, and loads the tools deny rules
need to see; it raises `ConfigError` with one line when something is
unusable. What it returns, `Resolved`, is all `assemble` needs to build the loop's parameters
without further I/O, and all `Session.derive` needs to make a child session without any.
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field
from msgspec.structs import replace

from stayer.agents.catalog import load_catalog
from stayer.agents.model import Catalog, Plugin
from stayer.config.dirs import claude_json_path
from stayer.config.sources import claude_json_unread
from stayer.context.memory import project_root
from stayer.errors import ConfigError
from stayer.exec import Sandbox
from stayer.loop.state import CompactPolicy, FallbackModel
from stayer.messages import ContentBlock, TextBlock
from stayer.permissions import PermissionPolicy, Rule, parse_mode, parse_rules
from stayer.providers.base import Provider
from stayer.providers.select import ModelChoice
from stayer.switches import env_flag
from stayer.tools.base import Tool, Toolbox
from stayer.tools.names import READS_UNDER, WEB_FETCH

from .compaction import compact_policy
from .fallback import fallback_models
from .limits import output_budget
from .options import QueryOptions
from .sandboxing import check_sandbox, session_sandbox
from .settings import Settled, settle
from .system_prompt import SystemPrompt, system_prompt
from .toolset import run_toolbox

if TYPE_CHECKING:
    from stayer.config.mcp_servers import McpServers
    from stayer.config.model import HookMatcher
    from stayer.hooks.runner import AnyMatcher

NO_MEMORY = "CLAUDE_CODE_DISABLE_CLAUDE_MDS"
"""The switch that leaves the memory files out (an agent without `memory` runs so)."""


class Resolved(Struct, frozen=True, kw_only=True):
    """What a session's start-up found: the options with the settings folded in and the rest
    of what `assemble` turns into the loop's parameters."""

    settled: Settled
    cwd: Path
    policy: PermissionPolicy
    """The starting policy: the mode, the flags' and settings' rules, the directories."""
    session_id: str
    compaction: CompactPolicy
    tools: Toolbox
    token_budget: int | None
    provider: Provider
    choice: ModelChoice
    owns_provider: bool
    """Whether the session made the client (and closes it), or the caller gave it."""
    fallbacks: tuple[FallbackModel, ...]
    system: SystemPrompt
    sandbox: Sandbox | None
    mcp: McpServers | None = None
    """The MCP servers configured (None: none anywhere, and nothing of MCP loads)."""
    catalog: Catalog = field(default_factory=Catalog)
    """The agents, skills, commands and plugins found (`stayer.agents`)."""
    plugin_hooks: Mapping[str, tuple[HookMatcher, ...]] = field(default_factory=dict)
    """The loaded plugins' hooks, event name → matchers (`plugin_hooks`)."""

    @property
    def hooks(self) -> Mapping[str, tuple[AnyMatcher, ...]]:
        """Every hook of the session: the settings', the plugins', then the caller's own
        (`QueryOptions.hooks`), event by event."""
        hooks: Mapping[str, tuple[AnyMatcher, ...]] = self.settled.loaded.hooks
        if self.plugin_hooks:
            from .plugin_hooks import with_plugin_hooks

            hooks = with_plugin_hooks(self.settled.loaded.hooks, self.plugin_hooks)
        own = self.options.hooks
        if own:
            events = dict.fromkeys((*hooks, *own))
            hooks = {event: (*hooks.get(event, ()), *own.get(event, ())) for event in events}
        return hooks

    @property
    def options(self) -> QueryOptions:
        return self.settled.options

    @property
    def env(self) -> Mapping[str, str]:
        return self.settled.env


def resolve(options: QueryOptions, prompt: str | Sequence[ContentBlock] = "") -> Resolved:
    """Read and probe everything a session needs; raises `ConfigError` with one line if
    something is off. Blocking: async code runs it in a worker thread."""
    cwd = working_directory(options)
    settled = settle(options, cwd, os.environ if options.env is None else options.env)
    catalog = _catalog(settled, cwd)
    hooks = _plugin_hooks(catalog)
    mcp = mcp_servers(settled.options, settled.env, cwd, settled, catalog.plugins)
    settled, memory = _as_agent(settled, catalog, mcp, flags=options)
    options, env = settled.options, settled.env
    policy = starting_policy(options, settled.ask, cwd)
    check_limits(options)
    if options.hooks:  # the hooks package loads only for a session that has some
        from stayer.hooks.callbacks import check_callbacks

        check_callbacks(options.hooks)
    check_sandbox(options, env, cwd=cwd, directories=policy.directories)
    session_id = _session_id(options)
    compaction = compact_policy(options, env, cwd, session_id)
    extra = (*options.extra_tools, *_answer_tools(options))
    tools = run_toolbox(None if options.tools is None else listed(options.tools), extra, policy)
    budget = token_budget(options, prompt)
    provider, choice, owns = _provider(options, env)
    system = system_prompt(
        options,
        env if memory else {**env, NO_MEMORY: "1"},
        cwd=cwd,
        model=choice.model,
        tool_names=tools.names,
        token_budget=budget,
        pins=compaction.pins,
    )
    fallbacks = fallback_models(
        options.fallback_models,
        env,
        main=choice,
        provider=provider,
        injected=not owns,
        betas=betas(options.betas),
        max_tokens=lambda ceiling: output_budget(options, env, ceiling),
    )
    return Resolved(
        mcp=mcp,
        catalog=catalog,
        plugin_hooks=hooks,
        settled=settled,
        cwd=cwd,
        policy=policy,
        session_id=session_id,
        compaction=compaction,
        tools=tools,
        token_budget=budget,
        provider=provider,
        choice=choice,
        owns_provider=owns,
        fallbacks=fallbacks,
        system=system,
        # last: nothing after it may fail and leave its private /tmp behind
        sandbox=session_sandbox(options, env, cwd=cwd, directories=policy.directories),
    )


def _catalog(settled: Settled, cwd: Path) -> Catalog:
    """The agents, skills, commands and plugins for the session; raises `ConfigError` for a
    `--plugin-dir` that is not a plugin, or a bad `--agents`."""
    options = settled.options
    folders = tuple(cwd / Path(folder).expanduser() for folder in options.plugin_dirs)
    for folder in folders:
        _check_plugin_dir(folder)
    merged = settled.loaded.merged
    catalog = load_catalog(
        cwd,
        project_root=project_root(cwd),
        env=settled.env,
        agents_json=options.agents,
        plugin_dirs=folders,
        enabled_plugins=None if merged is None else merged.enabled_plugins,
    )
    roots = {plugin.root.resolve() for plugin in catalog.plugins}
    for folder in folders:
        said = [line for line in catalog.problems if str(folder) in line]
        if folder.resolve() not in roots and said:
            raise ConfigError(f"--plugin-dir: {said[0]}")
    return catalog


def _check_plugin_dir(folder: Path) -> None:
    if not folder.is_dir():
        raise ConfigError(f"--plugin-dir {folder}: no such folder; give a plugin's folder")
    if not (folder / ".claude-plugin" / "plugin.json").is_file():
        raise ConfigError(
            f"--plugin-dir {folder}: not a plugin (it has no .claude-plugin/plugin.json); give "
            "the folder that holds .claude-plugin/"
        )


def _as_agent(
    settled: Settled, catalog: Catalog, mcp: McpServers | None, *, flags: QueryOptions
) -> tuple[Settled, bool]:
    """The settled options for a session run as the agent `--agent` (or the settings) names,
    with the catalog's problems added to the warnings; and whether the memory files are read.
    `mcp` are the session's servers, whose tools the agent's `tools` pick among too."""
    warnings = (*settled.warnings, *catalog.problems)
    name = settled.options.agent
    if name is None:
        return replace(settled, warnings=warnings), True
    from stayer.tools.registry import BUILTIN_NAMES

    from .agent_options import as_agent, chosen_agent

    # from the settings, a name that is no agent still stops the run: the agent may have been
    # meant to narrow what the session may do, and running without it would not
    said_by = "--agent" if flags.agent is not None else 'settings\' "agent":'
    agent = chosen_agent(catalog, name, said_by=said_by)
    servers = () if mcp is None else (*mcp.start, *mcp.needs_approval, *mcp.disabled)
    options, notes = as_agent(
        agent,
        settled.options,
        flags=flags,
        builtins=BUILTIN_NAMES,
        servers=[server.name for server in servers],
    )
    return replace(settled, options=options, warnings=(*warnings, *notes)), agent.memory


def _plugin_hooks(catalog: Catalog) -> Mapping[str, tuple[HookMatcher, ...]]:
    """The loaded plugins' hooks; raises `ConfigError` for a hooks file that cannot be used."""
    if not any(plugin.hooks_file for plugin in catalog.plugins):
        return {}
    from .plugin_hooks import plugin_hooks

    return plugin_hooks(catalog.plugins)


def mcp_servers(
    options: QueryOptions,
    env: Mapping[str, str],
    cwd: Path,
    settled: Settled,
    plugins: Sequence[Plugin] = (),
) -> McpServers | None:
    """The MCP servers configured for the session (`--mcp-config`, the settings, the project's
    `.mcp.json`, the plugins'), sorted by whether they may start; None when there are none
    anywhere (and then nothing of MCP is imported)."""
    served = [plugin for plugin in plugins if plugin.mcp_file is not None]
    if not served and not _mcp_anywhere(options, cwd, settled):
        return None
    from stayer.config.mcp_servers import PluginServers, load_mcp_servers
    from stayer.context.git import git_tracks

    found = load_mcp_servers(
        cwd=cwd,
        env=env,
        settings=settled.loaded,
        flag_configs=tuple(options.mcp_config),
        strict=options.strict_mcp_config,
        tracked=git_tracks,
        plugins=[PluginServers(p.name, p.root, p.mcp_file) for p in served if p.mcp_file],
        sdk_servers=options.sdk_mcp is not None,
    )
    if not (found.start or found.needs_approval or found.disabled or found.failed):
        if found.warnings:
            return found  # nothing to start, but what is wrong with a file must be told
        return None
    return found


def _mcp_anywhere(options: QueryOptions, cwd: Path, settled: Settled) -> bool:
    """Whether any place names an MCP server, looked at without reading them."""
    if options.mcp_config:
        return True
    if options.strict_mcp_config:
        return False
    if (cwd / ".mcp.json").exists():
        return True
    sources = settled.loaded.sources
    if any(source.settings and source.settings.mcp_servers for source in sources):
        return True
    if claude_json_unread(settled.env, sources) is not None:
        return False  # the file is not read then (`mcp_servers`), so neither looked into
    return _claude_json_names_servers(claude_json_path(settled.env))


_SERVERS_NAMED = re.compile(rb'"mcpServers"\s*:\s*\{\s*"')
"""A non-empty `mcpServers` object: Claude Code writes an empty one for every project."""


def _claude_json_names_servers(path: Path) -> bool:
    """Whether Claude Code's own file (often megabytes of project history) names any MCP
    server, looked for in its bytes: parsing it whole would cost every run's start-up."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False  # a folder, a device: not the file Claude Code writes
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return _SERVERS_NAMED.search(file.read(64 << 20)) is not None
    except OSError:
        return False
    finally:
        os.close(descriptor)


def model_client(resolved: Resolved, model: str) -> tuple[Provider, ModelChoice]:
    """The client and choice for `model` in a resolved session: its own client when the same
    provider serves the model (or the caller gave the client), else a new one. May read the
    cached model list: async code runs it in a worker thread."""
    options = replace(resolved.options, model=model)
    if options.provider is not None:
        provider, choice, _ = _provider(options, resolved.env)
        return provider, choice
    from stayer.providers.select import choose_model

    choice = choose_model(model, resolved.env)
    if choice.provider == resolved.choice.provider:
        return resolved.provider, choice
    provider, choice, _ = _provider(options, resolved.env)
    return provider, choice


def _provider(options: QueryOptions, env: Mapping[str, str]) -> tuple[Provider, ModelChoice, bool]:
    if options.provider is not None:
        from stayer.providers.profiles import profile_for

        name = options.model or options.provider.name
        profile = profile_for(name)
        choice = ModelChoice(
            options.provider.name, name, profile.context_window, profile.max_output_tokens
        )
        return options.provider, choice, False
    from stayer.providers.model_list import refresh_if_stale
    from stayer.providers.select import select_provider

    provider, choice = select_provider(options.model, env)
    refresh_if_stale(choice.provider, env)  # for the next run; this one never waits on it
    return provider, choice, True


def listed(value: str | Sequence[str]) -> Sequence[str]:
    """A lone string is one entry, not a sequence of characters."""
    return (value,) if isinstance(value, str) else value


def betas(given: Sequence[str]) -> tuple[str, ...]:
    return tuple(beta.strip() for item in listed(given) for beta in item.split(",") if beta.strip())


def _directories(given: Sequence[Path | str], cwd: Path) -> tuple[Path, ...]:
    """The extra working directories, resolved; each must exist."""
    found: list[Path] = []
    for item in given:
        try:
            path = (cwd / Path(item).expanduser()).resolve()
        except RuntimeError:  # `~name` for a user that does not exist
            raise ConfigError(f"--add-dir {item}: no such home directory; give a path") from None
        if not path.is_dir():
            raise ConfigError(f"--add-dir {item}: {path} is not a directory; give one that exists")
        found.append(path)
    return tuple(dict.fromkeys(found))


def token_budget(options: QueryOptions, prompt: str | Sequence[ContentBlock]) -> int | None:
    """The option's budget, else one typed in the prompt (`+500k`, "use 2M tokens")."""
    from stayer.loop.budget import budget_in_prompt

    if options.token_budget is not None:
        if options.token_budget < 1:
            raise ConfigError(f"the token budget must be at least 1, not {options.token_budget}")
        return options.token_budget
    text = (
        prompt
        if isinstance(prompt, str)
        else " ".join(block.text for block in prompt if isinstance(block, TextBlock))
    )
    return budget_in_prompt(text)


def denied_reads(
    policy: PermissionPolicy, tools: Toolbox, cwd: Path, extra: Sequence[Tool[Any]] = ()
) -> tuple[str, ...]:
    """The path patterns the deny rules forbid reading (those of each tool's `reads_under`),
    which searches leave out. The built-ins' are known without loading them (`READS_UNDER`);
    the caller's own tools (`extra`) are at hand already."""
    if not any(rule.specifier for rule in policy.deny):
        return ()
    judges = {READS_UNDER[name] for name in tools.names if name in READS_UNDER}
    judges |= {tool.reads_under for tool in extra if tool.reads_under}
    return tuple(
        rule.path_pattern(cwd) for rule in policy.deny if rule.specifier and rule.tool in judges
    )


def working_directory(options: QueryOptions) -> Path:
    try:
        cwd = Path(options.cwd or Path.cwd()).resolve()
    except FileNotFoundError:
        raise ConfigError("the current directory no longer exists; cd somewhere real") from None
    if not cwd.is_dir():
        raise ConfigError(f"working directory {cwd} does not exist")
    return cwd


def check_limits(options: QueryOptions) -> None:
    if options.max_turns is not None and options.max_turns < 1:
        raise ConfigError(f"max turns must be at least 1, not {options.max_turns}")
    if options.max_budget_usd is not None and not options.max_budget_usd > 0:
        raise ConfigError(f"the budget must be more than $0, not {options.max_budget_usd}")
    if options.done_when is not None and not options.done_when.strip():
        raise ConfigError("--done-when needs a command, such as --done-when 'pytest -q'")
    nudge, stop = options.repeat_nudge_after, options.repeat_stop_after
    if not 1 <= nudge < stop:
        raise ConfigError(
            f"repeated failures must be nudged after 1 or more rounds and end the run later, "
            f"so the model sees the nudge (got nudge after {nudge}, stop after {stop})"
        )


def _session_id(options: QueryOptions) -> str:
    """The session's id: the one given, which names its files, so it must be a UUID; kept in
    lower case, the form `--resume` looks for."""
    if options.session_id is None:
        return str(uuid.uuid4())
    try:
        canonical = str(uuid.UUID(options.session_id))
    except ValueError:
        canonical = ""
    if canonical != options.session_id.lower():
        raise ConfigError(f"the session id must be a UUID, not {options.session_id!r}")
    return canonical


def starting_policy(options: QueryOptions, ask: tuple[Rule, ...], cwd: Path) -> PermissionPolicy:
    """The permission policy the run starts with: the mode, the flags' rules with the
    settings' folded in, and the working directories (`stayer permissions check` replays
    under the same)."""
    return PermissionPolicy(
        mode=parse_mode(options.permission_mode or "default"),
        allow=parse_rules(listed(options.allowed_tools)),
        deny=parse_rules(listed(options.disallowed_tools)),
        ask=ask,
        directories=_directories(options.add_dirs, cwd),
    )


def with_preapproved(policy: PermissionPolicy, env: Mapping[str, str]) -> PermissionPolicy:
    """The policy with allow rules for the documentation sites WebFetch may reach without
    asking, unless ``STAYER_NO_PREAPPROVED_HOSTS`` turns them off."""
    if env_flag(env, "STAYER_NO_PREAPPROVED_HOSTS"):
        return policy
    from stayer.tools.preapproved import PREAPPROVED_HOSTS

    hosts = tuple(Rule(WEB_FETCH, f"domain:{host}") for host in sorted(PREAPPROVED_HOSTS))
    return replace(policy, allow=(*policy.allow, *hosts))


def _answer_tools(options: QueryOptions) -> tuple[Tool[Any], ...]:
    """The StructuredOutput tool `--json-schema` asks for (loaded only then)."""
    if options.json_schema is None:
        return ()
    from .structured import answer_tools

    return answer_tools(options)
