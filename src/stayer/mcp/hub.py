"""All of a session's MCP servers: started together, watched, reported, stopped together.

The hub starts every server at once and returns; each then lives in its own task (see
`stayer.mcp.server`), so a slow or broken one never holds up the others or the session. It
keeps the changes in the order they happened for whoever reports them (`drain`), and a
`generation` that moves whenever any server's state or tools change, so callers may cache
what they build from the servers until it moves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.config.mcp_servers import McpServerConfig
from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.mcp.server import RESTART_DELAYS_S, McpServer

from .limits import connect_timeout_from as connect_timeout_from

if TYPE_CHECKING:
    from .tunnel import McpTunnel


class McpHub:
    """Every MCP server of a session (see the module docstring). With no `connect_timeout_s`
    it takes `MCP_TIMEOUT` from `env`; `tunnel` reaches the in-process servers of the
    claude-agent-sdk program that runs stayer, if one does."""

    def __init__(
        self,
        configs: Sequence[McpServerConfig],
        *,
        env: Mapping[str, str],
        log_dir: Path,
        connect_timeout_s: float | None = None,
        initial: Sequence[McpServerStatus] = (),
        restart_delays_s: Sequence[float] = RESTART_DELAYS_S,
        tunnel: McpTunnel | None = None,
    ) -> None:
        self._tunnel = tunnel
        self._initial = tuple(initial)
        self._changes: list[McpServerStatus] = []
        self.generation = 0
        self._listeners: list[Callable[[], None]] = []
        self._closed = False
        self._started = False
        if connect_timeout_s is None:
            connect_timeout_s = connect_timeout_from(env)
        self._env, self._log_dir = env, log_dir
        self._timeout_s, self._delays_s = connect_timeout_s, tuple(restart_delays_s)
        self._servers = tuple(self._made(config) for config in configs)

    def _made(self, config: McpServerConfig) -> McpServer:
        return McpServer(
            config,
            env=self._env,
            log_dir=self._log_dir,
            connect_timeout_s=self._timeout_s,
            on_change=self._changed,
            restart_delays_s=self._delays_s,
            tunnel=self._tunnel,
        )

    def _changed(self, status: McpServerStatus) -> None:
        self._changes.append(status)
        self.generation += 1
        for listener in self._listeners:
            listener()

    def watch(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on the event loop) after each change a server reports."""
        self._listeners.append(listener)

    def start(self, only: Callable[[McpServer], bool] | None = None) -> None:
        """Start every server (or those `only` picks) on the running loop; returns at once.
        Starting one again does nothing."""
        self._started = self._started or only is None
        for server in self._servers:
            if only is None or only(server):
                server.start()

    def add(self, config: McpServerConfig) -> McpServer:
        """Take on a server the session may start now (one just approved, say): it replaces
        an entry of the same name passed in as `initial`, and starts at once when the others
        have; its status changes follow as the others' do. Raises `ConfigError` when a server
        of that name is running already, or the hub is closed."""
        if self._closed:
            raise ConfigError(f"cannot start MCP server {config.name}: the session is ending")
        if any(server.config.name == config.name for server in self._servers):
            raise ConfigError(f"MCP server {config.name} is running already")
        server = self._made(config)
        self._initial = tuple(s for s in self._initial if s.name != config.name)
        self._servers = (*self._servers, server)
        self._changed(server.status)  # pending: the entry waiting for approval is gone
        if self._started:
            server.start()
        return server

    async def restart(self, name: str) -> McpServer:
        """Stop server `name` and start it again from its configuration (one that failed, or
        was turned off); its status changes follow as the others' do. Raises `ConfigError`
        for a name the hub does not run (not configured, or not approved)."""
        old = self._running(name)
        await old.aclose()
        server = self._made(old.config)
        self._servers = tuple(server if s is old else s for s in self._servers)
        self._changed(server.status)
        server.start()
        return server

    async def disable(self, name: str) -> None:
        """Stop server `name` and leave it off until `restart`; `ConfigError` as `restart`."""
        await self._running(name).disable()

    def _running(self, name: str) -> McpServer:
        if self._closed:
            raise ConfigError(f"cannot change MCP server {name}: the session is ending")
        found = next((s for s in self._servers if s.config.name == name), None)
        if found is not None:
            return found
        waiting = next((s for s in self._initial if s.name == name), None)
        if waiting is not None:
            raise ConfigError(f"MCP server {name} cannot be started from here: {_why(waiting)}")
        raise ConfigError(f"no MCP server named {name} in this session")

    async def wait_started(
        self, timeout_s: float | None = None, *, only: Callable[[McpServer], bool] | None = None
    ) -> None:
        """Until every server (or each of those `only` picks) has connected or failed, or
        `timeout_s` has passed."""
        picked = [s for s in self._servers if only is None or only(s)]
        waits = [server.wait_settled() for server in picked]
        if not waits:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await asyncio.gather(*waits)

    def statuses(self) -> tuple[McpServerStatus, ...]:
        """The entries the session passed in, then every server as it stands now."""
        return self._initial + tuple(server.status for server in self._servers)

    def drain(self) -> list[McpServerStatus]:
        """The changes since the last drain, oldest first."""
        changes, self._changes = self._changes, []
        return changes

    def servers(self) -> tuple[McpServer, ...]:
        """Every server, in the configured order."""
        return self._servers

    def connected(self) -> tuple[McpServer, ...]:
        """The servers that are connected now."""
        return tuple(s for s in self._servers if s.status.status == "connected")

    async def aclose(self) -> None:
        """Stop every server (processes ended, connections closed); idempotent."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(server.aclose() for server in self._servers))


def _why(status: McpServerStatus) -> str:
    """Why a server the session was given is not running, for a request to start it."""
    if status.status == "needs-approval":
        return f"it waits for your approval (`stayer mcp approve {status.name}`)"
    if status.status == "disabled":
        return "your settings turn it off"
    return f"its configuration cannot be used ({status.error or status.status})"
