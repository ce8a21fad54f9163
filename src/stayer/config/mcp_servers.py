"""The MCP servers a session may start: where each is configured, and whether it may start.

`load_mcp_servers` reads Claude Code's format (`{"mcpServers": {"name": {...}}}`) from the
`--mcp-config` values, from `mcpServers` in every settings document, from the project's
`.mcp.json`, and from Claude Code's own `~/.claude.json` (where `claude mcp add` writes: its
top-level servers are user scope, those under `projects[cwd]` local scope, and the approvals
there count as the user's), expands `${VAR}` and `${VAR:-default}`, and sorts every server into
those to start, those waiting for approval, those turned off and those that cannot be used
(each with one line saying why). One bad entry never costs the others. A name given in several
places takes the nearest: `--mcp-config`, then `--settings`, local settings, `~/.claude.json`'s
local scope, project settings, `.mcp.json`, the user's settings, and last `~/.claude.json`'s
user scope. A server name may not hold `__`, which separates server and tool in a tool's name.
A plugin's servers (its `.mcp.json`) come first, so any of those wins over them; each is named
`plugin_<plugin>_<server>`, as Claude Code names them.

A server a repository brings (`.mcp.json`, a project settings file, or a local settings file
git tracks, which the repository therefore ships) starts programs the moment a session opens
there, so it starts only once the user approved it: `enableAllProjectMcpServers` or
`enabledMcpjsonServers`, unless `disabledMcpjsonServers` names it. Those keys count only from
the user's own settings, `--settings`, and a local settings file git does not track; anywhere
else they are the repository approving itself, and are ignored with a warning. Until it is
approved, such a server's `${VAR}`s stay as written, so nothing of the user's environment
reaches it; once approved, it still never gets stayer's model credentials unless the user
names them in `STAYER_PASS_ENV`. `.mcp.json` is read only if it is a regular file of at most
1 MB, opened without blocking. This layer cannot run git, so the caller says which files git
tracks (`tracked`: the session passes `stayer.context.git.git_tracks`); without that, a local
file inside a git work tree is taken as tracked (fail closed). `~/.claude.json` is left unread
when `.claude/` files are (`STAYER_NO_CLAUDE_SETTINGS`, `"readClaudeSettings": false`), and when
a project's settings set the `CLAUDE_CONFIG_DIR` or `HOME` that would find it.

A server of `"type": "sdk"` lives inside the claude-agent-sdk program that runs stayer, which
names it in `--mcp-config` and carries its messages (`stayer.mcp.tunnel`). It is taken only from
`--mcp-config`, and only when such a program runs stayer (`sdk_servers`); anywhere else nothing
could reach it, and it is refused in one line naming it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from msgspec import Struct, field
from msgspec.structs import replace

from stayer.errors import ConfigError

from .dirs import claude_json_path
from .sources import claude_json_unread, home_moved

if TYPE_CHECKING:
    from .model import Settings
    from .sources import Loaded, Source

Transport = Literal["stdio", "http", "sse", "sdk"]
Scope = Literal["flag", "user", "project", "local", "mcpjson", "plugin"]


class McpServerConfig(Struct, frozen=True, kw_only=True):
    """One server as configured, its `${VAR}`s expanded."""

    name: str
    transport: Transport
    scope: Scope
    origin: str
    """The file it came from, or `--mcp-config`."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout_s: float | None = None
    """How long one tool call may take (the entry's `timeout`, in milliseconds there)."""
    always_load: bool = False
    """`alwaysLoad`: its tools are never deferred behind ToolSearch."""
    trusted: bool = False
    """The user configured or approved it: what it says of its tools (`readOnlyHint`) counts."""


class PluginServers(Struct, frozen=True):
    """A plugin's server file (its `.mcp.json`): the plugin's name and folder, which
    `${CLAUDE_PLUGIN_ROOT}` in its entries stands for."""

    plugin: str
    root: Path
    file: Path


class McpServers(Struct, frozen=True):
    """Every server configured for a session, sorted by what happens to it."""

    start: tuple[McpServerConfig, ...] = ()
    needs_approval: tuple[McpServerConfig, ...] = ()
    """A project's servers nobody approved: listed, never started."""
    disabled: tuple[McpServerConfig, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    """(server name, one line why) for entries that cannot be used."""
    warnings: tuple[str, ...] = ()


MCP_JSON = ".mcp.json"
"""The project's shared server file, in the working directory (where Claude Code reads it)."""
FLAG_ORIGIN = "--mcp-config"

TrackedCheck = Callable[[Path], bool]
"""Whether git tracks the file at this path (True too when git cannot tell)."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "sse": "sse",
    "sdk": "sdk",
}
_FLAG_EXAMPLE = """give a file, or JSON such as '{"mcpServers": {"name": {"command": "..."}}}'"""
_APPROVAL_KEYS = ("enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers")


class _Bad(Exception):
    """What is wrong with one server entry, as the phrase its `failed` line starts with."""


_SdkReach = Literal["served", "no-sdk", "file"]
"""`--mcp-config` with a claude-agent-sdk program running stayer, without one, or a file."""


class _Entry(Struct, frozen=True):
    """One server entry as written, where it came from, and whether the repository brought it
    (then it starts only once approved)."""

    name: str
    raw: Any
    scope: Scope
    origin: str
    from_repository: bool
    sdk: _SdkReach = "file"
    """Whether an in-process SDK server may be reached from here (see the module)."""


class _Approvals(Struct, frozen=True):
    """What the user's own sources say about the repository's servers."""

    every: bool = False
    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()


def load_mcp_servers(
    *,
    cwd: Path,
    env: Mapping[str, str],
    settings: Loaded,
    flag_configs: Sequence[str | Mapping[str, Any]] = (),
    strict: bool = False,
    tracked: TrackedCheck | None = None,
    plugins: Sequence[PluginServers] = (),
    sdk_servers: bool = False,
) -> McpServers:
    """Every server configured for a session in `cwd`, sorted by what happens to it; `env` is
    what `${VAR}` expands from; `sdk_servers`: a claude-agent-sdk program runs stayer, so the
    `"type": "sdk"` servers of `flag_configs` can be reached. Raises `ConfigError` in one line
    for a `--mcp-config` value that cannot be read as a server list; every other problem is a
    `failed` entry or a warning."""
    warnings: list[str] = []
    # The same name in several places: the last one below wins. The run's own word beats every
    # file (--mcp-config, then --settings), then the nearer a file, the more it says: local
    # settings, then the project's (`.claude/`, `.stayer/`), then its `.mcp.json`, then the user's.
    entries: list[_Entry] = []
    approvals = _Approvals()
    if not strict:
        read = _SettingsReader(cwd=cwd, env=env, tracked=tracked, warnings=warnings)
        entries, approvals = read.entries(settings)
    for given in flag_configs:
        entries += _flag_entries(given, cwd, "served" if sdk_servers else "no-sdk")
    if not strict:
        entries = _plugin_entries(plugins, {entry.name for entry in entries}, warnings) + entries
    winners = {entry.name: entry for entry in entries}
    return _sorted(
        [winners[name] for name in sorted(winners)], env, cwd, approvals, tuple(warnings)
    )


def _sorted(
    entries: Sequence[_Entry],
    env: Mapping[str, str],
    cwd: Path,
    approvals: _Approvals,
    warnings: tuple[str, ...],
) -> McpServers:
    groups: dict[_Fate, list[McpServerConfig]] = {"start": [], "wait": [], "off": []}
    failed: list[tuple[str, str]] = []
    for entry in entries:
        fate = _fate(entry, approvals)
        try:
            # a server that will not start keeps its `${VAR}`s as written: nothing of the
            # user's environment goes into what a repository asked for until it is approved
            config = _config(entry, env if fate == "start" else None, cwd, _withheld(entry, env))
        except _Bad as bad:
            failed.append((entry.name, f"{bad} (in {entry.origin})"))
            continue
        groups[fate].append(config if fate == "start" else _untrusted(config))
    return McpServers(
        tuple(groups["start"]), tuple(groups["wait"]), tuple(groups["off"]), tuple(failed),
        warnings,
    )  # fmt: skip


_Fate = Literal["start", "wait", "off"]


def _fate(entry: _Entry, approvals: _Approvals) -> _Fate:
    if not entry.from_repository:
        return "start"
    if entry.name in approvals.disabled:
        return "off"
    if approvals.every or entry.name in approvals.enabled:
        return "start"
    return "wait"


MODEL_CREDENTIALS = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY"}
)
"""The credentials `stayer.exec.child_env` keeps from every process stayer starts (its
`CREDENTIALS`: this layer cannot import exec; a test keeps the two equal)."""
PASS_ENV = "STAYER_PASS_ENV"
"""The credentials the user lets through anyway (as `child_env` reads it)."""


def _withheld(entry: _Entry, env: Mapping[str, str]) -> frozenset[str]:
    """The variables a server's entry may not expand: for one the repository brought, stayer's
    model credentials, less those the user passes on purpose (a project's settings cannot set
    `STAYER_PASS_ENV`: `sources` keeps it out of their `env`)."""
    if not entry.from_repository:
        return frozenset()
    passed = {name.strip() for name in env.get(PASS_ENV, "").split(",")}
    return MODEL_CREDENTIALS - passed


def _untrusted(config: McpServerConfig) -> McpServerConfig:
    return replace(config, trusted=False)


class _SettingsReader:
    """The entries and approvals of the settings documents and `.mcp.json`, with the warnings
    they give."""

    def __init__(
        self,
        *,
        cwd: Path,
        env: Mapping[str, str],
        tracked: TrackedCheck | None,
        warnings: list[str],
    ) -> None:
        self.cwd = cwd
        self.env = env
        self.tracked = tracked or _in_work_tree
        self.warnings = warnings

    def entries(self, loaded: Loaded) -> tuple[list[_Entry], _Approvals]:
        by_level: dict[str, list[_Entry]] = {"user": [], "project": [], "local": [], "flag": []}
        said: list[_Said] = []  # the approvals that count, in order
        claude = _claude_json(self.cwd, self.env, loaded, self.warnings)
        for source in loaded.sources:
            settings = source.settings
            if settings is None:
                continue
            if claude.approvals and source.level in ("local", "flag"):
                said.append(claude.approvals)  # Claude Code's word for this project: local
                claude = replace(claude, approvals=None)
            from_repository = self._from_repository(source, settings)
            if not from_repository and source.level != "project":
                said.append(_said_of(settings))
            scope: Scope = source.level
            by_level[source.level] += [
                _Entry(name, raw, scope, source.origin, from_repository)
                for name, raw in settings.mcp_servers.items()
            ]
        ordered = [
            *claude.user, *by_level["user"], *self._mcp_json(), *by_level["project"],
            *claude.local, *by_level["local"], *by_level["flag"],
        ]  # fmt: skip
        return ordered, _approvals([*said, *([claude.approvals] if claude.approvals else [])])

    def _from_repository(self, source: Source, settings: Settings) -> bool:
        """Whether the document came with the repository; its approvals, if any, are then
        ignored with a warning."""
        if source.level in ("user", "flag"):
            return False
        keys = _approval_keys(settings)
        if source.level == "local":
            if not (keys or settings.mcp_servers) or not self.tracked(Path(source.origin)):
                return False
            why = "git tracks this file, so it is the repository's word, not yours"
            fix = "untrack it (git rm --cached) and approve again"
        else:
            why = "a project's settings come with the repository, which cannot approve itself"
            fix = "approve with `stayer mcp approve NAME`, which writes .stayer/settings.local.json"
        if keys:
            self.warnings.append(f"{source.origin}: {', '.join(keys)} ignored: {why}; {fix}")
        return True

    def _mcp_json(self) -> list[_Entry]:
        path = self.cwd / MCP_JSON
        try:
            text = read_regular_file(path, limit=MAX_MCP_JSON_BYTES)
            if text is None:
                return []
            servers = _servers_of(json.loads(text))
        except json.JSONDecodeError as error:
            where = f"{path}:{error.lineno}:{error.colno}"
            self.warnings.append(f"{where}: not valid JSON ({error.msg}); {_NOT_STARTED}")
            return []
        except (_Bad, ValueError, RecursionError) as error:
            self.warnings.append(f"{path}: {error or 'not valid JSON'}; {_NOT_STARTED}")
            return []
        return [_Entry(name, raw, "mcpjson", str(path), True) for name, raw in servers.items()]


_NOT_STARTED = "none of its MCP servers were started"
MAX_MCP_JSON_BYTES = 1 << 20
"""The most of `.mcp.json` read: a server list is a few kilobytes; the repository chose it."""


def read_regular_file(path: Path, *, limit: int) -> str | None:
    """The text of the regular file at `path`, or None when there is none; raises `_Bad`
    saying why it cannot be used. A repository chooses what its files are: opened without
    waiting (a FIFO would block the start forever), and read no further than `limit` bytes (a
    link to /dev/zero would fill the memory)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise _Bad(f"cannot read it ({error.strerror or error})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a device, FIFO or socket"
            raise _Bad(f"cannot read it (it is {kind}, not a regular file)")
        with open(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _Bad(f"larger than {limit:,} bytes, so not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Bad("cannot read it (not UTF-8 text)") from None


def _approval_keys(settings: Settings) -> list[str]:
    given = (
        settings.enable_all_project_mcp_servers,
        settings.enabled_mcpjson_servers,
        settings.disabled_mcpjson_servers,
    )
    return [key for key, value in zip(_APPROVAL_KEYS, given, strict=True) if value is not None]


class _Said(Struct, frozen=True):
    """What one of the user's own documents says of the repository's servers."""

    every: bool | None = None
    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()


def _said_of(settings: Settings) -> _Said:
    return _Said(
        settings.enable_all_project_mcp_servers,
        frozenset(settings.enabled_mcpjson_servers or ()),
        frozenset(settings.disabled_mcpjson_servers or ()),
    )


def _approvals(said: Sequence[_Said]) -> _Approvals:
    """The approvals of the user's own documents: the last `enableAllProjectMcpServers` given
    counts; the lists add up; a name both enabled and disabled stays off."""
    every = False
    enabled: set[str] = set()
    disabled: set[str] = set()
    for one in said:
        if one.every is not None:
            every = one.every
        enabled |= one.enabled
        disabled |= one.disabled
    return _Approvals(every, frozenset(enabled), frozenset(disabled))


# --- plugins' servers ---


def _plugin_entries(
    plugins: Sequence[PluginServers], taken: set[str], warnings: list[str]
) -> list[_Entry]:
    """The servers of the plugins' files, each named `plugin_<plugin>_<server>` as Claude Code
    names them (its tools are `mcp__plugin_<plugin>_<server>__<tool>`), so a plugin's server
    cannot stand in for one of the user's; a name the user's configuration already has is
    left out with a warning. The user enabled or passed the plugin, so its servers are theirs:
    they start without an approval."""
    entries: list[_Entry] = []
    for given in plugins:
        try:
            text = read_regular_file(given.file, limit=MAX_MCP_JSON_BYTES)
            data = json.loads(text) if text is not None else {}
            servers = data.get("mcpServers", data) if isinstance(data, dict) else data
            if not isinstance(servers, dict):
                raise _Bad('must hold a JSON object of servers, or one with "mcpServers"')
        except json.JSONDecodeError as error:
            where = f"{given.file}:{error.lineno}:{error.colno}"
            warnings.append(f"{where}: not valid JSON ({error.msg}); {_NOT_STARTED}")
            continue
        except (_Bad, ValueError, RecursionError) as error:
            warnings.append(f"{given.file}: {error or 'not valid JSON'}; {_NOT_STARTED}")
            continue
        for server, raw in servers.items():
            name = f"plugin_{given.plugin}_{server}"
            if name in taken:
                warnings.append(
                    f"{given.file}: server {server} of plugin {given.plugin} is named {name}, "
                    "as a server of your own configuration is; yours is used"
                )
                continue
            placed = _rooted(raw, str(given.root))
            entries.append(_Entry(name, placed, "plugin", str(given.file), False))
    return entries


def _rooted(raw: Any, root: str) -> Any:
    """`raw` with `${CLAUDE_PLUGIN_ROOT}` in its strings made the plugin's folder."""
    if isinstance(raw, str):
        return raw.replace("${CLAUDE_PLUGIN_ROOT}", root)
    if isinstance(raw, list):
        return [_rooted(item, root) for item in raw]
    if isinstance(raw, dict):
        return {key: _rooted(value, root) for key, value in raw.items()}
    return raw


# --- Claude Code's own file -------------------------------------------------------------------

"""Where `claude mcp add` keeps servers: in the home folder, or in `CLAUDE_CONFIG_DIR`."""
MAX_CLAUDE_JSON_BYTES = 64 << 20
"""Claude Code keeps every project's history in the same file, so it grows far past 1 MB."""


class _ClaudeJson(Struct, frozen=True):
    """What Claude Code's own file says for a project: its user-scope servers, this project's
    local-scope ones, and its approvals of the project's `.mcp.json`."""

    user: tuple[_Entry, ...] = ()
    local: tuple[_Entry, ...] = ()
    approvals: _Said | None = None


def _claude_json(
    cwd: Path, env: Mapping[str, str], loaded: Loaded, warnings: list[str]
) -> _ClaudeJson:
    """Claude Code's own file, the user's and outside the project, so trusted as their
    settings are; skipped as `.claude/` files are (`STAYER_NO_CLAUDE_SETTINGS`, or
    `"readClaudeSettings": false` in the user's stayer settings or `--settings`)."""
    if _claude_unread(env, loaded, warnings):
        return _ClaudeJson()
    path = claude_json_path(env)
    try:
        text = read_regular_file(path, limit=MAX_CLAUDE_JSON_BYTES)
        data = json.loads(text) if text is not None else {}
    except json.JSONDecodeError as error:
        where = f"{path}:{error.lineno}:{error.colno}"
        warnings.append(f"{where}: not valid JSON ({error.msg}); {_CLAUDE_UNREAD}")
        return _ClaudeJson()
    except (_Bad, ValueError, RecursionError) as error:
        warnings.append(f"{path}: {error or 'not valid JSON'}; {_CLAUDE_UNREAD}")
        return _ClaudeJson()
    if not isinstance(data, dict):
        warnings.append(f"{path}: not a JSON object; {_CLAUDE_UNREAD}")
        return _ClaudeJson()
    origin = str(path)
    user = _claude_servers(data, origin, "user", warnings)
    projects = data.get("projects")
    project = None
    if isinstance(projects, dict):
        keys = (str(cwd), os.path.realpath(cwd))
        project = next((projects[k] for k in keys if isinstance(projects.get(k), dict)), None)
    if project is None:
        return _ClaudeJson(user)
    where = f"{origin} (projects[{json.dumps(str(cwd))}])"
    local = _claude_servers(project, where, "local", warnings)
    return _ClaudeJson(user, local, _claude_said(project, where, warnings))


_CLAUDE_UNREAD = "its MCP servers and approvals were not read"


def _claude_unread(env: Mapping[str, str], loaded: Loaded, warnings: list[str]) -> bool:
    """Whether Claude Code's own file is left unread: a project's settings moved the user's
    folders (said in a warning), or the user's `.claude/` files are unread (the switch, or
    `readClaudeSettings` false in the user's settings or `--settings`)."""
    why = claude_json_unread(env, loaded.sources)
    if why is not None and home_moved(loaded.sources) is not None:
        warnings.append(why)  # the person should know the project tried
    return why is not None


def _claude_servers(
    data: dict[str, Any], origin: str, scope: Scope, warnings: list[str]
) -> tuple[_Entry, ...]:
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        warnings.append(f'{origin}: "mcpServers" is not an object; its servers were not read')
        return ()
    return tuple(_Entry(name, raw, scope, origin, False) for name, raw in servers.items())


def _claude_said(project: dict[str, Any], origin: str, warnings: list[str]) -> _Said:
    """A project's approvals in Claude Code's file; a value of the wrong type is dropped with
    a warning (a bad disabled list drops them all: what it meant to keep off stays off)."""
    every = project.get("enableAllProjectMcpServers")
    lists: list[frozenset[str]] = []
    for key in _APPROVAL_KEYS[1:]:
        value = project.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            warnings.append(f"{origin}: {key} is not a list of names, so it was ignored")
            if key == "disabledMcpjsonServers":
                return _Said()
            value = []
        lists.append(frozenset(value))
    if every is not None and not isinstance(every, bool):
        warnings.append(f"{origin}: enableAllProjectMcpServers is not true or false, so ignored")
        every = None
    return _Said(every, *lists)


def _in_work_tree(path: Path) -> bool:
    """Without a way to ask git: a file inside a git work tree might be tracked, so it is taken
    as tracked (its approvals do not count); outside one, nothing can track it."""
    folder = Path(os.path.realpath(path)).parent
    return any((candidate / ".git").exists() for candidate in (folder, *folder.parents))


def _servers_of(data: Any) -> dict[str, Any]:
    """The `mcpServers` object of a decoded document."""
    if not isinstance(data, dict):
        what = "a list" if isinstance(data, list) else type(data).__name__
        raise _Bad(f'must hold a JSON object with "mcpServers", not {what}')
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        raise _Bad('has no "mcpServers" object')
    return servers


def _flag_entries(given: str | Mapping[str, Any], cwd: Path, sdk: _SdkReach) -> list[_Entry]:
    """The servers of one `--mcp-config` value (a mapping, JSON text, or a file's path)."""
    label, origin = FLAG_ORIGIN, FLAG_ORIGIN
    if isinstance(given, Mapping):
        data: Any = dict(given)
    else:
        text = given
        if not given.strip():
            raise ConfigError(f"{FLAG_ORIGIN}: an empty value; {_FLAG_EXAMPLE}")
        # JSON as it starts, never a path: a list meant as JSON should not be looked for as a file
        if not given.lstrip().startswith(("{", "[")):
            path = cwd / Path(given).expanduser()
            label, origin = f"{FLAG_ORIGIN} {given}", str(path)
            text = _read_flag_file(path, label)
        data = _decoded(text, label)
    try:
        servers = _servers_of(data)
    except _Bad as bad:
        raise ConfigError(f"{label}: {bad}; {_FLAG_EXAMPLE}") from None
    return [_Entry(name, raw, "flag", origin, False, sdk) for name, raw in servers.items()]


def _read_flag_file(path: Path, label: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise ConfigError(f"{label}: cannot read it ({why or error}); {_FLAG_EXAMPLE}") from None


def _decoded(text: str, label: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno} column {error.colno}"
        raise ConfigError(f"{label}: not valid JSON ({error.msg} at {at}); fix it") from None
    except (ValueError, RecursionError):
        raise ConfigError(f"{label}: not valid JSON; fix it") from None


def entry_problem(name: str, raw: Any) -> str | None:
    """What is wrong with one server entry as written (`stayer mcp add-json` checks it before
    saving), or None; a `${VAR}` need not be set yet."""
    try:
        _config(_Entry(name, raw, "local", "", False), None, Path.cwd())
    except _Bad as bad:
        return str(bad)
    return None


def _config(
    entry: _Entry, env: Mapping[str, str] | None, cwd: Path, withheld: frozenset[str] = frozenset()
) -> McpServerConfig:
    """The entry checked and expanded (None for `env`: each `${VAR}` left as written; a
    variable in `withheld` is refused); raises `_Bad` saying what is wrong with it."""
    raw = entry.raw
    if not _NAME.fullmatch(entry.name):
        raise _Bad("a server name may hold only letters, digits, _ and -")
    if "__" in entry.name:
        # `mcp__a__b` would be both tool b of server a and the server a__b
        raise _Bad(
            "a server name may not contain '__', which separates server and tool in a tool's "
            "name (mcp__server__tool); rename it"
        )
    if not isinstance(raw, dict):
        raise _Bad(f"a server must be a JSON object, not {type(raw).__name__}")
    transport = _transport(raw)
    common: dict[str, Any] = {
        "name": entry.name,
        "transport": transport,
        "scope": entry.scope,
        "origin": entry.origin,
        "timeout_s": _timeout(raw.get("timeout")),
        "always_load": _flag(raw, "alwaysLoad"),
        "trusted": True,
    }
    if transport == "sdk":
        _reachable(entry.sdk)
        return McpServerConfig(**common)
    if transport == "stdio":
        return McpServerConfig(**common, **_stdio(raw, _Expander(env, withheld), cwd))
    return McpServerConfig(**common, **_remote(raw, _Expander(env, withheld)))


def _transport(raw: dict[str, Any]) -> Transport:
    kind = raw.get("type")
    if kind is None:
        if "command" in raw:
            return "stdio"
        if "url" in raw:
            raise _Bad('a server with a "url" needs "type": "http" (or "sse")')
        raise _Bad('needs a "command" (stdio) or "type" and "url" (http, sse)')
    transport = _TRANSPORTS.get(kind) if isinstance(kind, str) else None
    if transport is None:
        raise _Bad(f'unknown "type" {json.dumps(kind)}; use "stdio", "http" or "sse"')
    return transport


def _reachable(reach: _SdkReach) -> None:
    """Raises `_Bad` saying why an in-process SDK server cannot be reached from here."""
    if reach == "no-sdk":
        raise _Bad(
            '"type": "sdk" names a server inside a claude-agent-sdk program, and none runs '
            'stayer here to reach it through; give it a "command" or a "url" instead'
        )
    if reach == "file":
        raise _Bad(
            '"type": "sdk" names a server inside a claude-agent-sdk program, which only that '
            "program's own --mcp-config can name; remove it from this file"
        )


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:  # JSON may say NaN, Infinity
        raise _Bad(f'"timeout" must be a number of milliseconds above 0 (got {json.dumps(value)})')
    return float(value) / 1000


def _flag(raw: dict[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise _Bad(f'"{key}" must be true or false (got {json.dumps(value)})')
    return value


def _stdio(raw: dict[str, Any], expand: _Expander, cwd: Path) -> dict[str, Any]:
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _Bad('needs a "command": the program to start, as a non-empty string')
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Bad('"args" must be a list of strings')
    folder = raw.get("cwd")
    if folder is not None and not isinstance(folder, str):
        raise _Bad('"cwd" must be a string')
    return {
        "command": expand(command),
        "args": tuple(expand(arg) for arg in args),
        "env": {k: expand(v) for k, v in _strings(raw, "env").items()},
        # the session's folder, or its own relative to it: never wherever stayer was started
        # from (an editor launches `stayer acp` in a folder of its own)
        "cwd": str(cwd if folder is None else cwd / Path(expand(folder)).expanduser()),
    }


def _remote(raw: dict[str, Any], expand: _Expander) -> dict[str, Any]:
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise _Bad('needs a "url", as a non-empty string')
    return {
        "url": expand(url),
        "headers": {k: expand(v) for k, v in _strings(raw, "headers").items()},
    }


def _strings(raw: dict[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f'"{key}" must be an object of strings')
    return value


class _Expander:
    """`${VAR}` and `${VAR:-default}` in one value, from the session's environment (None:
    left as written)."""

    def __init__(self, env: Mapping[str, str] | None, withheld: frozenset[str]) -> None:
        self.env = env
        self.withheld = withheld

    def __call__(self, text: str) -> str:
        return text if self.env is None else _VARIABLE.sub(self._value, text)

    def _value(self, match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        if name in self.withheld:
            raise _Bad(
                f"names {name}, a credential stayer reaches the model with, which a server the "
                f"repository brings does not get; to give it on purpose, set {PASS_ENV}={name} "
                "in the environment or your own settings"
            )
        value = self.env.get(name) if self.env is not None else None
        if value:  # as in a shell's `:-`, an empty value takes the default too
            return value
        if default is not None:
            return default
        if value is not None:
            return value
        raise _Bad(
            f"needs the environment variable {name}; set it or give a default as ${{{name}:-value}}"
        )
