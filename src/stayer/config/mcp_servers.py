"""The MCP servers a session may start: where each is configured, and whether it may start.

(The reading of `--mcp-config`, settings and `.mcp.json` is being built: issue 18.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from msgspec import Struct, field

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["flag", "user", "project", "local", "mcpjson"]


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


class McpServers(Struct, frozen=True):
    """Every server configured for a session, sorted by what happens to it."""

    start: tuple[McpServerConfig, ...] = ()
    needs_approval: tuple[McpServerConfig, ...] = ()
    """A project's servers nobody approved: listed, never started."""
    disabled: tuple[McpServerConfig, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    """(server name, one line why) for entries that cannot be used."""
    warnings: tuple[str, ...] = ()
