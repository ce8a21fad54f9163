"""The person approves a project's MCP servers from inside a session (the REPL asks as it
opens): the approval is written where `stayer mcp approve` writes it
(`config.mcp_approvals`), the configuration is read again as a new session would read it, and
the servers that may start now join the running hub at once; their status events follow as
the others' do. A headless run never asks, so nothing here runs there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.errors import ConfigError

from .options import QueryOptions

if TYPE_CHECKING:
    from stayer.config.mcp_servers import McpServerConfig

    from .assemble import Setup
    from .mcp_link import McpLink


async def approve_mcp(
    link: McpLink | None, options: QueryOptions, setup: Setup, names: Sequence[str]
) -> tuple[str, ...]:
    """Approve `names` (servers waiting for approval) for the session's project and start those
    the configuration now lets start; their names. Raises `ConfigError` in one line when a name
    waits for no approval, git tracks the local settings file, or the settings cannot be read
    or written."""
    if link is None:
        raise ConfigError("no MCP server is configured in this session")
    strangers = [name for name in names if name not in link.waiting]
    if strangers:
        raise ConfigError(
            f"no MCP server named {', '.join(strangers)} waits for approval; /mcp lists them"
        )
    resolved = setup.resolved
    cwd = resolved.cwd if resolved is not None else Path(setup.started.cwd)
    startable = await asyncio.to_thread(_approved, options, cwd, tuple(names))
    running = link.running()
    fresh = [config for config in startable if config.name not in running]
    link.add(fresh)
    return tuple(config.name for config in fresh)


def _approved(
    options: QueryOptions, cwd: Path, names: tuple[str, ...]
) -> tuple[McpServerConfig, ...]:
    """Write the approval and read the servers again (blocking: git and files); those of
    `names` that may start now."""
    from stayer.config.mcp_approvals import approve_servers
    from stayer.context.git import git_tracks

    from .resolve import mcp_servers
    from .settings import settle

    approve_servers(cwd, names, tracked=git_tracks)
    settled = settle(options, cwd, os.environ if options.env is None else options.env)
    found = mcp_servers(settled.options, settled.env, cwd, settled)
    if found is None:
        return ()
    return tuple(config for config in found.start if config.name in names)
