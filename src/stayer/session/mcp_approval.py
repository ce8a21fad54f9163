"""The person approves a project's MCP servers from inside a session (the REPL asks as it
opens): the approval is written where `stayer mcp approve` writes it
(`config.mcp_approvals`), the configuration is read again as a new session would read it, and
the servers that may start now join the running hub at once; their status events follow as
the others' do. A headless run never asks, so nothing here runs there.

Only what the person was shown starts: the configuration read again is compared with the
session's snapshot of the waiting servers (what the question showed), before the approval is
written and again before a server starts, since the model may edit `.mcp.json` while the
question waits. A server that changed is not started (`McpChanged`), nor approved when the
change is seen before the approval is written.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.errors import ConfigError

from .options import QueryOptions

if TYPE_CHECKING:
    from stayer.config.mcp_servers import McpServerConfig, McpServers

    from .assemble import Setup
    from .mcp_link import McpLink


class McpChanged(ConfigError):
    """Some servers' entries changed since they were shown; `started` are the others, started."""

    def __init__(self, changed: Sequence[str], started: tuple[str, ...]) -> None:
        super().__init__(
            f"MCP server {', '.join(changed)} changed since it was shown, so it was not "
            "started; run /mcp again to see it as it is now (or restart stayer)"
        )
        self.started = started


async def approve_mcp(
    link: McpLink | None, options: QueryOptions, setup: Setup, names: Sequence[str]
) -> tuple[str, ...]:
    """Approve `names` (servers waiting for approval) for the session's project and start those
    the configuration now lets start; their names. Raises `ConfigError` in one line when a name
    waits for no approval, git tracks the local settings file, or the settings cannot be read
    or written; `McpChanged` (after starting the others) when a server's entry is no longer
    what the session showed."""
    if link is None:
        raise ConfigError("no MCP server is configured in this session")
    strangers = [name for name in names if name not in link.waiting]
    if strangers:
        raise ConfigError(
            f"no MCP server named {', '.join(strangers)} waits for approval; /mcp lists them"
        )
    resolved = setup.resolved
    cwd = resolved.cwd if resolved is not None else Path(setup.started.cwd)
    shown = () if resolved is None or resolved.mcp is None else resolved.mcp.needs_approval
    asked = {config.name: config for config in shown if config.name in names}
    startable, changed = await asyncio.to_thread(_approved, options, cwd, asked)
    running = link.running()
    fresh = [config for config in startable if config.name not in running]
    link.add(fresh)
    started = tuple(config.name for config in fresh)
    changed += [name for name in names if name not in asked]  # never shown: not started
    if changed:
        raise McpChanged(changed, started)
    return started


def _approved(
    options: QueryOptions, cwd: Path, asked: Mapping[str, McpServerConfig]
) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """Approve the servers of `asked` still as shown, then read the servers again (blocking:
    git and files); those that may start now and are still what was shown, and the names of
    those that changed."""
    from stayer.config.mcp_approvals import approve_servers, as_started
    from stayer.context.git import git_tracks

    before, _ = _read(options, cwd)
    waiting = {config.name: config for config in before.needs_approval} if before else {}
    same = [name for name, config in asked.items() if waiting.get(name) == config]
    changed = [name for name in asked if name not in same]
    if not same:
        return (), changed
    approve_servers(cwd, same, tracked=git_tracks)
    after, env = _read(options, cwd)
    startable: list[McpServerConfig] = []
    for config in after.start if after else ():
        if config.name not in same:
            continue
        if config == as_started(asked[config.name], env):
            startable.append(config)
        else:  # edited between the two reads
            changed.append(config.name)
    return tuple(startable), changed


def _read(options: QueryOptions, cwd: Path) -> tuple[McpServers | None, Mapping[str, str]]:
    """The servers as a new session in `cwd` would read them, and the environment their
    `${VAR}`s expand from."""
    from .resolve import mcp_servers
    from .settings import settle

    settled = settle(options, cwd, os.environ if options.env is None else options.env)
    return mcp_servers(settled.options, settled.env, cwd, settled), settled.env
