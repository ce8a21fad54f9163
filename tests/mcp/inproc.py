"""A server handle over the `mcp` SDK's in-process client, for testing the MCP tools.

It has the shape of `stayer.mcp.tools.ServerHandle` (the client's `McpServer`), talking to a
real SDK server (`MCPServer` or the low-level `Server`) through the SDK's own client, so the
tools under test meet real protocol objects. It is the test's stand-in for the connection, not
the thing under test; `down` makes it answer as a server that is not connected would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ReadResourceResult, Resource, Tool

from stayer.config.mcp_servers import McpServerConfig
from stayer.events import McpServerStatus
from stayer.mcp.server import McpUnavailable


class InProcessServer:
    """One connected in-process server, as the MCP tools see a server."""

    def __init__(self, client: Client, config: McpServerConfig, tools: tuple[Tool, ...]) -> None:
        self._client = client
        self._config = config
        self._tools = tools
        self.down: str | None = None
        self.gone_during_next: str | None = None
        """Set: the next request fails with this line, as a server that died during it."""
        self.calls: list[tuple[str, dict[str, Any], float | None]] = []

    @property
    def config(self) -> McpServerConfig:
        return self._config

    @property
    def status(self) -> McpServerStatus:
        if self.down is not None:
            return McpServerStatus(self._config.name, "failed", error=self.down)
        return McpServerStatus(self._config.name, "connected", tools=len(self._tools))

    @property
    def tool_defs(self) -> tuple[Tool, ...]:
        return () if self.down is not None else self._tools

    @property
    def offers_resources(self) -> bool:
        return self.down is None and self._client.server_capabilities.resources is not None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout_s: float | None
    ) -> CallToolResult:
        self._check()
        self.calls.append((name, arguments, timeout_s))
        return await self._client.call_tool(name, arguments, read_timeout_seconds=timeout_s)

    async def list_resources(self) -> list[Resource]:
        self._check()
        return list((await self._client.list_resources()).resources)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        self._check()
        return await self._client.read_resource(uri)

    def _check(self) -> None:
        if self.down is not None:
            raise McpUnavailable(self.down)
        if self.gone_during_next is not None:
            line, self.gone_during_next = self.gone_during_next, None
            raise McpUnavailable(line)


def config(name: str = "demo", **options: Any) -> McpServerConfig:
    """A stdio server's configuration (never started here: the server runs in-process)."""
    return McpServerConfig(
        name=name, transport="stdio", scope="user", origin="test", command="unused", **options
    )


@asynccontextmanager
async def connected(
    server: MCPServer | Server[Any], name: str = "demo", **options: Any
) -> AsyncIterator[InProcessServer]:
    """`server` connected in-process, as a handle configured with `options`."""
    async with Client(server) as client:
        tools = tuple((await client.list_tools()).tools)
        yield InProcessServer(client, config(name, **options), tools)
