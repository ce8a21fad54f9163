"""The ListMcpResources and ReadMcpResource tools (Claude Code's names): what MCP servers offer
to read besides their tools, and reading it.

Both only read, but a server's read is its own code: they count as read-only (asked less, run
beside others) only when every server they may reach is one the user configured or approved,
as `readOnlyHint` does for a server's tools; otherwise they fail closed. They are made over a
callable giving the servers now known, so a server that comes up later is listed from then on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from stayer.events import McpState
from stayer.messages import JSON, TextBlock, ToolResultContent
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput
from stayer.tools.names import LIST_MCP_RESOURCES, READ_MCP_RESOURCE

from .results import resource_text
from .server import McpUnavailable
from .tools import ServerHandle, one_line

if TYPE_CHECKING:
    from mcp.types import Resource

Servers = Callable[[], Sequence[ServerHandle]]

_STATE_WORDS: dict[McpState, str] = {
    "connected": "is connected",
    "failed": "failed",
    "pending": "is not connected yet",
    "needs-approval": "was not started: it needs approval",
    "disabled": "is disabled",
}


class ListInput(ToolInput):
    """Input of ListMcpResources."""

    server: str | None = Field(
        default=None, description="Only this server's resources (default: every server's)."
    )


class ReadInput(ToolInput):
    """Input of ReadMcpResource."""

    server: str = Field(description="The MCP server that offers the resource.")
    uri: str = Field(min_length=1, description="The resource's URI, as listed.")


def _offering(servers: Servers) -> list[ServerHandle]:
    return [server for server in servers() if server.offers_resources]


def _find(servers: Servers, name: str) -> ServerHandle:
    """The server named `name` that offers resources, or a one-line failure saying why not and
    naming those that do."""
    every = servers()
    offering = [server for server in every if server.offers_resources]
    for server in offering:
        if server.config.name == name:
            return server
    names = ", ".join(repr(server.config.name) for server in offering)
    known = f"servers that do: {names}" if names else "no connected server offers any"
    status = next((s.status for s in every if s.config.name == name), None)
    if status is None:
        raise ToolFailure(f"No MCP server named {name!r} offers resources; {known}.")
    if status.status != "connected":
        why = f" ({status.error})" if status.error else ""
        raise ToolFailure(f"MCP server {name!r} {_STATE_WORDS[status.status]}{why}; {known}.")
    raise ToolFailure(f"MCP server {name!r} offers no resources; {known}.")


def _refused(server: ServerHandle, exc: Exception) -> ToolFailure:
    """One line for a server that could not or would not answer."""
    from mcp import MCPError

    if isinstance(exc, MCPError):
        return ToolFailure(f"MCP server {server.config.name!r} refused: {one_line(exc.message)}")
    return ToolFailure(one_line(str(exc)))


def _failures() -> tuple[type[Exception], ...]:
    """What a server's request raises when the server cannot or will not answer (the SDK is
    loaded by the time a server answers anything, so importing its error here costs nothing)."""
    from mcp import MCPError

    return McpUnavailable, MCPError


class ListMcpResourcesTool(Tool[ListInput]):
    """Lists the resources of the connected MCP servers that offer them."""

    name = LIST_MCP_RESOURCES
    input_model = ListInput
    subject_kind = "none"
    description = (
        "Lists the resources (files, records, documents) that connected MCP servers offer to "
        "read, with each one's server, URI, name, type and description. Give `server` to list "
        f"only that server's. Read one with {READ_MCP_RESOURCE}."
    )

    def __init__(self, servers: Servers) -> None:
        self._servers = servers

    def is_read_only(self, tool_input: ListInput) -> bool:
        reached = [
            server
            for server in _offering(self._servers)
            if tool_input.server in (None, server.config.name)
        ]
        return bool(reached) and all(server.config.trusted for server in reached)

    def is_concurrency_safe(self, tool_input: ListInput) -> bool:
        return self.is_read_only(tool_input)

    async def call(self, tool_input: ListInput, ctx: ToolContext) -> ToolOutput:
        if tool_input.server is not None:
            chosen = [_find(self._servers, tool_input.server)]
        else:
            chosen = _offering(self._servers)
        if not chosen:
            return ToolOutput("No connected MCP server offers resources.")
        listed: list[dict[str, JSON]] = []
        problems: list[str] = []
        for server in chosen:
            try:
                found = await server.list_resources()
            except _failures() as exc:
                failure = _refused(server, exc)
                if tool_input.server is not None:
                    raise failure from None
                problems.append(str(failure))
                continue
            listed.extend(_entry(server.config.name, resource) for resource in found)
        text = json.dumps(listed, ensure_ascii=False, indent=1) if listed else "No resources found."
        notes = "".join(f"\n[{problem}]" for problem in problems)
        return ToolOutput(text + notes, data={"resources": listed})


def _entry(server: str, resource: Resource) -> dict[str, JSON]:
    entry: dict[str, JSON] = {"server": server, "uri": resource.uri, "name": resource.name}
    if resource.mime_type:
        entry["mimeType"] = resource.mime_type
    if resource.description:
        entry["description"] = resource.description
    return entry


class ReadMcpResourceTool(Tool[ReadInput]):
    """Reads one resource of an MCP server."""

    name = READ_MCP_RESOURCE
    input_model = ReadInput
    subject_kind = "none"
    description = (
        "Reads one resource of a connected MCP server, by its server and URI (as "
        f"{LIST_MCP_RESOURCES} lists them). Text comes back as text; binary contents are "
        "described, not shown."
    )

    def __init__(self, servers: Servers) -> None:
        self._servers = servers

    def is_read_only(self, tool_input: ReadInput) -> bool:
        named = [s for s in _offering(self._servers) if s.config.name == tool_input.server]
        return bool(named) and all(server.config.trusted for server in named)

    def is_concurrency_safe(self, tool_input: ReadInput) -> bool:
        return self.is_read_only(tool_input)

    async def call(self, tool_input: ReadInput, ctx: ToolContext) -> ToolOutput:
        server = _find(self._servers, tool_input.server)
        try:
            result = await server.read_resource(tool_input.uri)
        except _failures() as exc:
            raise _refused(server, exc) from None
        content: tuple[ToolResultContent, ...] = tuple(
            resource_text(part) for part in result.contents
        )
        if not content:
            content = (TextBlock(f"[resource {tool_input.uri} is empty]"),)
        return ToolOutput(content, data={"server": tool_input.server, "uri": tool_input.uri})
