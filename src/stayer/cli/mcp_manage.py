"""`stayer mcp list|get|add|add-json|remove|approve`: the MCP servers of the settings, managed
from the command line as Claude Code's `claude mcp` does, without connecting to any of them.

Where each scope writes: `local` (the default, as in Claude Code) the project's
`.stayer/settings.local.json`, yours and not the repository's; `project` the project's
`.mcp.json`, shared with everyone who clones it (so its servers start only once approved);
`user` stayer's own `settings.json` (`STAYER_CONFIG_DIR`, else `~/.stayer`), for every project.
`approve` writes `enabledMcpjsonServers` or `enableAllProjectMcpServers` to the local file,
which counts only while git does not track it (`git_tracks`). Files are read and replaced with
`config.local_rules`' reader and atomic writer, and a project file that a link leads out of the
project is refused there. Usage errors are one line and exit status 2; a server that is not
there (or is there already) is one line and status 1.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import replace

from stayer.config import config_root, load_settings
from stayer.config.local_rules import (
    inside_project,
    local_settings_path,
    read_settings_json,
    write_settings_json,
)
from stayer.config.mcp_approvals import ApprovalRefused, approve_servers
from stayer.config.mcp_servers import (
    MCP_JSON,
    McpServerConfig,
    McpServers,
    entry_problem,
    load_mcp_servers,
)
from stayer.context.git import git_tracks
from stayer.errors import ConfigError

WriteScope = Literal["local", "project", "user"]
SCOPES: tuple[WriteScope, ...] = ("local", "project", "user")
_SCOPE_NAMED: dict[str, WriteScope] = {scope: scope for scope in SCOPES}
EXIT_MISSING = 1
_NAME = re.compile(r"[A-Za-z0-9_-]+")

USAGE = """usage: stayer mcp COMMAND [...]

Manage the MCP servers stayer starts (Claude Code's format). Nothing here connects to a server.

commands:
  list                        every configured server: scope, transport, command or URL, and
                              whether it starts
  get NAME                    one server in full
  add [options] NAME COMMAND_OR_URL [ARGS...]
                              add a server: a command and its arguments (stdio), or a URL
                              (http, sse)
  add-json [-s SCOPE] NAME JSON
                              add a server written as a JSON entry of "mcpServers"
  remove [-s SCOPE] NAME      remove a server
  approve NAME... | --all     let servers of the project's .mcp.json start
  serve                       offer stayer's own tools as an MCP server over stdio

scopes (-s, --scope):
  local    .stayer/settings.local.json in this project, yours alone (the default)
  project  .mcp.json in this project, shared with the repository; starts once approved
  user     stayer's settings.json (~/.stayer, or STAYER_CONFIG_DIR), for every project

`stayer mcp COMMAND --help` says more about each.
"""

HELP = {
    "list": """usage: stayer mcp list

Every MCP server configured for this folder: its name, command line or URL, transport and
scope, and `needs approval`, `disabled` or `failed` where so. Nothing is started.
""",
    "get": """usage: stayer mcp get NAME

One MCP server in full: where it is configured, whether it starts, and its settings (the names
of its env variables and headers, not their values).
""",
    "add": """usage: stayer mcp add [-s SCOPE] [-t TRANSPORT] [-e KEY=VALUE]...
                      [-H "Name: value"]... NAME COMMAND_OR_URL [ARGS...]

Add an MCP server. Options come before the command; everything after the command is its own
arguments (or put them after `--`).

options:
  -s, --scope SCOPE          local (default), project or user
  -t, --transport TRANSPORT  stdio (default), http or sse
  -e, --env KEY=VALUE        an environment variable for a stdio server (repeatable)
  -H, --header "Name: value" a header for an http or sse server (repeatable)

examples:
  stayer mcp add time -- uvx mcp-server-time
  stayer mcp add -t http -H "Authorization: Bearer ${TOKEN}" docs https://example.com/mcp
""",
    "add-json": """usage: stayer mcp add-json [-s SCOPE] NAME JSON

Add an MCP server given as one entry of "mcpServers", for example
  stayer mcp add-json time '{"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}'
""",
    "remove": """usage: stayer mcp remove [-s SCOPE] NAME

Remove an MCP server. Without -s, from the one scope that has it.
""",
    "approve": """usage: stayer mcp approve NAME... | stayer mcp approve --all

Let servers of the project's .mcp.json (or its project settings) start: NAME... adds them to
enabledMcpjsonServers, --all sets enableAllProjectMcpServers, both in
.stayer/settings.local.json. That file must not be tracked by git: a file the repository ships
would be the repository approving its own servers.
""",
}


class _Usage(ConfigError):
    """A command line `stayer mcp` cannot take (exit status 2)."""


class _Help(Exception):
    """`-h` or `--help` among a command's options."""


class _Missing(Exception):
    """The server is not where it was looked for, or is there already (exit status 1)."""


def run_manage(argv: Sequence[str]) -> int:
    """Manage the MCP servers of the settings; the exit status."""
    if not argv:
        print(USAGE, end="", file=sys.stderr)
        return 2
    word, rest = argv[0], list(argv[1:])
    if word in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    command = _COMMANDS.get(word)
    if command is None:
        raise _Usage(
            f"mcp: {word!r} is not one of its commands (list, get, add, add-json, remove, "
            "approve, serve); see stayer mcp --help"
        )
    # `add`, `add-json` and `remove` see -h among their options: after the command of `add`,
    # a `--help` belongs to that command
    if word not in _WITH_OPTIONS and ("-h" in rest or "--help" in rest):
        print(HELP[word], end="")
        return 0
    try:
        return command(rest, Path.cwd())
    except _Help:
        print(HELP[word], end="")
        return 0
    except _Missing as missing:
        print(f"stayer: mcp {word}: {missing}", file=sys.stderr)
        return EXIT_MISSING


# --- reading ----------------------------------------------------------------------------------


def configured(cwd: Path) -> McpServers:
    """Every server the settings of `cwd` configure, as a session there would sort them, with
    the settings' own warnings first (a dropped approval list, say)."""
    env = dict(os.environ)
    loaded = load_settings(cwd, env)
    servers = load_mcp_servers(
        cwd=cwd, env={**env, **loaded.settings.env}, settings=loaded, tracked=git_tracks
    )
    return replace(servers, warnings=(*loaded.warnings, *servers.warnings))


def _list(argv: list[str], cwd: Path) -> int:
    if argv:
        raise _Usage(f"mcp list: takes no arguments (got {argv[0]!r}); usage: stayer mcp list")
    servers = configured(cwd)
    for line in servers.warnings:
        print(f"stayer: {line}", file=sys.stderr)
    lines = [
        *(_line(config, "") for config in servers.start),
        *(_line(config, f" - needs approval: stayer mcp approve {config.name}")
          for config in servers.needs_approval),
        *(_line(config, " - disabled (disabledMcpjsonServers)") for config in servers.disabled),
        *(f"{name}: failed: {why}" for name, why in servers.failed),
    ]  # fmt: skip
    if not lines:
        print("No MCP servers configured. Add one with `stayer mcp add`.")
    for line in sorted(lines):
        print(line)
    return 0


def _scope_word(config: McpServerConfig) -> str:
    return {"mcpjson": "project", "project": "project settings", "flag": "--settings"}.get(
        config.scope, config.scope
    )


def _target(config: McpServerConfig) -> str:
    return shlex.join((config.command, *config.args)) if config.transport == "stdio" else config.url


def _line(config: McpServerConfig, status: str) -> str:
    where = f"{config.transport}, {_scope_word(config)}"
    return f"{config.name}: {_target(config)} ({where}){status}"


def _get(argv: list[str], cwd: Path) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        raise _Usage("mcp get: give one server name; usage: stayer mcp get NAME")
    name = argv[0]
    servers = configured(cwd)
    failed = dict(servers.failed)
    if name in failed:
        print(f"{name}:\n  status: failed: {failed[name]}")
        return 0
    states = {
        "starts with the session": servers.start,
        f"needs approval: stayer mcp approve {name}": servers.needs_approval,
        "disabled (disabledMcpjsonServers)": servers.disabled,
    }
    for status, group in states.items():
        for config in group:
            if config.name == name:
                print("\n".join(_details(config, status, cwd)))
                return 0
    raise _Missing(f"no MCP server named {name} is configured here; stayer mcp list shows them")


def _details(config: McpServerConfig, status: str, cwd: Path) -> list[str]:
    shown: list[tuple[str, object]] = [
        ("scope", f"{_scope_word(config)} ({config.origin})"),
        ("status", status),
        ("type", config.transport),
        ("command", config.command),
        ("args", shlex.join(config.args)),
        ("cwd", "" if config.cwd in (None, str(cwd)) else config.cwd),  # its own folder only
        ("env", ", ".join(sorted(config.env))),  # names only: values are often secrets
        ("url", config.url),
        ("headers", ", ".join(sorted(config.headers))),
        ("timeout", "" if config.timeout_s is None else f"{config.timeout_s:g} s"),
        ("alwaysLoad", "true" if config.always_load else ""),
    ]
    return [f"{config.name}:", *(f"  {key}: {value}" for key, value in shown if value)]


# --- writing ----------------------------------------------------------------------------------


class _File(Struct, frozen=True):
    """A file `stayer mcp` edits, and the words that name it."""

    scope: WriteScope
    path: Path
    label: str


def _file(scope: WriteScope, cwd: Path) -> _File:
    if scope == "local":
        return _File(scope, inside_project(local_settings_path(cwd), cwd), "local settings")
    if scope == "project":
        return _File(scope, inside_project(cwd / MCP_JSON, cwd), "the project's .mcp.json")
    return _File(scope, config_root(os.environ) / "settings.json", "user settings")


def _servers(data: dict[str, Any], file: _File) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'"mcpServers" in {file.path} is not an object; fix the file first')
    return servers


def _save(file: _File, name: str, entry: dict[str, Any]) -> int:
    data = read_settings_json(file.path)
    servers = _servers(data, file)
    if name in servers:
        raise _Missing(
            f"{name} is already in {file.path}; remove it first "
            f"(stayer mcp remove -s {file.scope} {name})"
        )
    servers[name] = entry
    write_settings_json(file.path, data)
    kind = entry.get("type", "stdio")
    print(f"Added {kind} MCP server {name} to {file.label}: {file.path}")
    if file.scope == "project":
        print(f"It starts once approved: stayer mcp approve {name}")
    return 0


class _Options:
    """The options of `add`, `add-json` and `remove`, and their other words in order."""

    def __init__(self) -> None:
        self.scope: WriteScope | None = None
        self.transport = "stdio"
        self.env: dict[str, str] = {}
        self.headers: dict[str, str] = {}
        self.words: list[str] = []


_TAKES_VALUE = {"-s": "scope", "--scope": "scope", "-t": "transport", "--transport": "transport",
                "-e": "env", "--env": "env", "-H": "header", "--header": "header"}  # fmt: skip


def _options(argv: list[str], command: str, allowed: set[str], *, stop_after: int) -> _Options:
    """Parse the options; after `stop_after` plain words (or `--`) the rest is taken as is."""
    found = _Options()
    index = 0
    while index < len(argv):
        word = argv[index]
        if len(found.words) >= stop_after:  # the command's own arguments, verbatim
            found.words += argv[index:]
            break
        if word == "--":
            found.words += argv[index + 1 :]
            break
        if not word.startswith("-") or word == "-":
            found.words.append(word)
            index += 1
            continue
        if word in ("-h", "--help"):
            raise _Help
        option, joined, value = word.partition("=")
        kind = _TAKES_VALUE.get(option)
        if kind is None or kind not in allowed:
            raise _Usage(f"mcp {command}: unknown option {option}; see stayer mcp {command} --help")
        if not joined:
            if index + 1 >= len(argv):
                raise _Usage(f"mcp {command}: {option} needs a value")
            index += 1
            value = argv[index]
        _set(found, kind, value, command)
        index += 1
    return found


def _set(found: _Options, kind: str, value: str, command: str) -> None:
    if kind == "scope":
        if value not in _SCOPE_NAMED:
            raise _Usage(f"mcp {command}: unknown scope {value!r}; use local, project or user")
        found.scope = _SCOPE_NAMED[value]
    elif kind == "transport":
        if value not in ("stdio", "http", "sse", "streamable-http"):
            raise _Usage(f"mcp {command}: unknown transport {value!r}; use stdio, http or sse")
        found.transport = "http" if value == "streamable-http" else value
    elif kind == "env":
        key, equals, text = value.partition("=")
        if not equals or not key:
            raise _Usage(f"mcp {command}: -e takes KEY=VALUE (got {value!r})")
        found.env[key] = text
    else:
        key, colon, text = value.partition(":")
        if not colon or not key.strip():
            raise _Usage(f'mcp {command}: -H takes "Name: value" (got {value!r})')
        found.headers[key.strip()] = text.strip()


def _checked_name(name: str, command: str) -> str:
    if not _NAME.fullmatch(name):
        raise _Usage(
            f"mcp {command}: {name!r} is not a server name: use letters, digits, _ and - only"
        )
    if "__" in name:  # `mcp__a__b__c` could not say which server a rule means
        raise _Usage(
            f"mcp {command}: {name!r} is not a server name: it may not contain '__', which "
            "separates server and tool in a tool's name"
        )
    return name


def _add(argv: list[str], cwd: Path) -> int:
    found = _options(argv, "add", {"scope", "transport", "env", "header"}, stop_after=2)
    if len(found.words) < 2:
        raise _Usage("mcp add: give a NAME and a COMMAND (or URL); see stayer mcp add --help")
    name, target, *args = found.words
    _checked_name(name, "add")
    entry: dict[str, Any]
    if found.transport == "stdio":
        if found.headers:
            raise _Usage("mcp add: -H is for http and sse servers; use -e for a stdio one")
        entry = {"type": "stdio", "command": target, "args": args, "env": found.env}
    else:
        if found.env or args:
            what = "-e" if found.env else f"the words after the URL ({args[0]!r}, ...)"
            raise _Usage(f"mcp add: {what} cannot go to an {found.transport} server")
        if not re.match(r"https?://", target):
            raise _Usage(f"mcp add: {target!r} is not an http:// or https:// URL")
        entry = {"type": found.transport, "url": target}
        if found.headers:
            entry["headers"] = found.headers
    return _save(_file(found.scope or "local", cwd), name, entry)


def _add_json(argv: list[str], cwd: Path) -> int:
    found = _options(argv, "add-json", {"scope"}, stop_after=2)
    if len(found.words) != 2:
        raise _Usage("mcp add-json: give a NAME and its JSON; usage: stayer mcp add-json NAME JSON")
    name, text = found.words
    _checked_name(name, "add-json")
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        raise _Usage(f"mcp add-json: {text!r} is not valid JSON") from None
    problem = entry_problem(name, entry)
    if problem is not None:
        raise _Usage(f"mcp add-json: {problem}")
    return _save(_file(found.scope or "local", cwd), name, entry)


def _remove(argv: list[str], cwd: Path) -> int:
    found = _options(argv, "remove", {"scope"}, stop_after=1)
    if len(found.words) != 1:
        raise _Usage("mcp remove: give one server name; usage: stayer mcp remove [-s SCOPE] NAME")
    name = found.words[0]
    scopes = (found.scope,) if found.scope else SCOPES
    holding = [
        (file, data)
        for file in (_file(scope, cwd) for scope in scopes)
        if name in _servers(data := read_settings_json(file.path), file)
    ]
    if len(holding) > 1:
        where = " and ".join(file.scope for file, _ in holding)
        raise _Usage(f"mcp remove: {name} is in {where}; choose one with -s")
    if not holding:
        files = ", ".join(str(_file(scope, cwd).path) for scope in scopes)
        raise _Missing(f"no MCP server named {name} in {files} (the files stayer mcp edits)")
    file, data = holding[0]
    del data["mcpServers"][name]
    write_settings_json(file.path, data)
    print(f"Removed MCP server {name} from {file.label}: {file.path}")
    return 0


def _approve(argv: list[str], cwd: Path) -> int:
    every = argv == ["--all"]
    if not argv or (not every and any(word.startswith("-") for word in argv)):
        raise _Usage("mcp approve: give server names, or --all; usage: stayer mcp approve NAME...")
    names = [] if every else [_checked_name(name, "approve") for name in argv]
    try:
        path = approve_servers(cwd, names, every=every, tracked=git_tracks)
    except ApprovalRefused as refused:
        raise _Missing(str(refused)) from None
    _say_approved(names, cwd, path)
    return 0


def _say_approved(names: list[str], cwd: Path, path: Path) -> None:
    if not names:
        print(f"Approved every server of this project's .mcp.json, in {path}")
        return
    servers = configured(cwd)
    known = {c.name for c in (*servers.start, *servers.needs_approval, *servers.disabled)}
    print(f"Approved {', '.join(names)} in {path}")
    for name in names:
        if name not in known:
            print(
                f"stayer: note: no MCP server named {name} is configured here yet", file=sys.stderr
            )


_WITH_OPTIONS = ("add", "add-json", "remove")
_COMMANDS: dict[str, Callable[[list[str], Path], int]] = {
    "list": _list,
    "get": _get,
    "add": _add,
    "add-json": _add_json,
    "remove": _remove,
    "approve": _approve,
}
