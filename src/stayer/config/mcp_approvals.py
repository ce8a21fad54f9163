"""Approving a project's MCP servers: `enabledMcpjsonServers` (or `enableAllProjectMcpServers`)
written to the project's `.stayer/settings.local.json`, for `stayer mcp approve` and for the
REPL's approval question alike.

The local file counts only while git does not track it (a file the repository ships would be
the repository approving its own servers: `mcp_servers` ignores it), so an approval there is
refused with one line instead of written where it would not count. This layer cannot run git:
the caller says which files git tracks (`tracked`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from stayer.errors import ConfigError

from .local_rules import (
    inside_project,
    local_settings_path,
    read_settings_json,
    write_settings_json,
)
from .mcp_servers import McpServerConfig, _Bad, _Expander

APPROVE_ALL = "enableAllProjectMcpServers"
ENABLED = "enabledMcpjsonServers"
DISABLED = "disabledMcpjsonServers"


class ApprovalRefused(ConfigError):
    """Git tracks the local settings file, so an approval written there would not count."""


def approval_file(project: Path) -> Path:
    """The file approvals go to (it may not exist yet); a link out of the project is refused."""
    return inside_project(local_settings_path(project), project)


def approve_servers(
    project: Path,
    names: Sequence[str],
    *,
    every: bool = False,
    tracked: Callable[[Path], bool],
) -> Path:
    """Let `names` (or, with `every`, every server) of the project's `.mcp.json` start, and
    turn them back on when `disabledMcpjsonServers` named them; the file written. Raises
    `ApprovalRefused` when git tracks that file, `ConfigError` in one line when it cannot be
    read, understood or written."""
    path = approval_file(project)
    # Asked even when the file is gone from the work tree: git still tracks it, so whatever is
    # written there next is the repository's file again and would be ignored.
    if tracked(path):
        raise ApprovalRefused(
            f"git tracks {path}, so an approval there would be the repository's word and "
            "does not count; untrack it (git rm --cached) and try again"
        )
    data = read_settings_json(path)
    if every:
        data[APPROVE_ALL] = True
    else:
        enabled = _names(data, ENABLED, path)
        data[ENABLED] = list(dict.fromkeys([*enabled, *names]))
        if DISABLED in data:  # approving a server turns it back on
            data[DISABLED] = [n for n in _names(data, DISABLED, path) if n not in names]
    write_settings_json(path, data)
    return path


def _names(data: dict[str, Any], key: str, path: Path) -> list[str]:
    listed = data.get(key, [])
    if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed):
        raise ConfigError(f'"{key}" in {path} is not a list of names; fix the file first')
    return listed


def as_started(shown: McpServerConfig, env: Mapping[str, str]) -> McpServerConfig | None:
    """`shown`, a waiting server as the person was shown it (its `${VAR}`s as written), as it
    starts once approved: expanded from `env` and trusted; None when it cannot be expanded.
    A server read again after the approval starts only when it equals this: the entry may have
    changed since the question showed it."""
    expand = _Expander(env, frozenset())  # what the fresh read refused never reaches here
    try:
        return replace(
            shown,
            command=expand(shown.command),
            args=tuple(expand(arg) for arg in shown.args),
            env={name: expand(value) for name, value in shown.env.items()},
            cwd=None if shown.cwd is None else expand(shown.cwd),
            url=expand(shown.url),
            headers={name: expand(value) for name, value in shown.headers.items()},
            trusted=True,
        )
    except _Bad:
        return None
