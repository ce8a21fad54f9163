"""The SDK program's in-process MCP servers: their messages carried over the control channel.

A claude-agent-sdk program names the servers it serves itself in `--mcp-config` as
`{"type": "sdk", "name": ...}`; stayer is their MCP client, and each JSON-RPC message it sends
one travels as an `mcp_message` control request whose reply holds the server's answer in
`mcp_response` (reference: protocols.md §1.5). `wire_sdk_mcp` gives the session the callable
that does this (`QueryOptions.sdk_mcp`), so those servers start as any other does, their tools
offered as `mcp__<server>__<tool>`.

The SDK's requests about the session's MCP servers (every server, not only its own) are
answered here too: `mcp_status` (`ClaudeSDKClient.get_mcp_status()`), `mcp_reconnect` and
`mcp_toggle`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from stayer.driver import Driver
from stayer.errors import ConfigError
from stayer.session.mcp_link import McpServerDetail, McpToolInfo
from stayer.session.options import QueryOptions

from .control import ControlChannel, ControlError, Handler


def wire_sdk_mcp(
    options: QueryOptions, initialize: Mapping[str, Any], channel: ControlChannel
) -> tuple[QueryOptions, Mapping[str, Any]]:
    """`options` with `sdk_mcp` sending through `channel`; no reply fields."""

    async def send(server: str, message: Mapping[str, Any]) -> Mapping[str, Any]:
        reply = await channel.request(
            "mcp_message", {"server_name": server, "message": dict(message)}
        )
        answer = reply.get("mcp_response")
        if not isinstance(answer, Mapping):
            raise ControlError(
                f"the SDK's reply to an MCP message for {server} has no mcp_response"
            )
        return answer

    return replace(options, sdk_mcp=send), {}


def mcp_status(driver: Driver, channel: ControlChannel) -> Handler:
    """Every MCP server of the session (`McpStatusResponse`). A program that asks before its
    first prompt wants them up: those not started yet start now, in the background."""

    async def handle(request: Mapping[str, Any]) -> dict[str, Any]:
        driver.session.start_mcp()
        return {"mcpServers": [status_entry(d) for d in driver.session.mcp_details()]}

    return handle


def mcp_reconnect(driver: Driver, channel: ControlChannel) -> Handler:
    """Start a server again; the reply waits until it connected, and is an error saying why
    when it did not."""

    async def handle(request: Mapping[str, Any]) -> None:
        name = _server_name(request)
        status = await driver.session.reconnect_mcp(name)
        if status.status == "failed":
            raise ConfigError(f"MCP server {name} failed: {status.error or 'no reason given'}")
        if status.status != "connected":
            raise ConfigError(f"MCP server {name} has not connected yet; ask again later")

    return handle


def mcp_toggle(driver: Driver, channel: ControlChannel) -> Handler:
    """Turn a server off (its tools no longer offered) or on again."""

    async def handle(request: Mapping[str, Any]) -> None:
        enabled = request.get("enabled")
        if not isinstance(enabled, bool):
            raise ConfigError("mcp_toggle needs enabled: true or false")
        await driver.session.toggle_mcp(_server_name(request), enabled=enabled)

    return handle


def _server_name(request: Mapping[str, Any]) -> str:
    name = request.get("serverName")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{request.get('subtype')} needs serverName: the MCP server's name")
    return name


_SDK_STATES = {"needs-approval": "disabled"}
"""stayer's states the SDK has no word for: a server waiting for approval does not start."""


def status_entry(detail: McpServerDetail) -> dict[str, Any]:
    """One server as the SDK's `McpServerStatus` has it: name, status, serverInfo, error,
    scope, tools."""
    status = detail.status
    entry: dict[str, Any] = {
        "name": status.name,
        "status": _SDK_STATES.get(status.status, status.status),
    }
    if detail.server_info is not None:
        entry["serverInfo"] = {"name": detail.server_info[0], "version": detail.server_info[1]}
    if status.status == "needs-approval":
        entry["error"] = f"waits for approval: stayer mcp approve {status.name}"
    elif status.error is not None:
        entry["error"] = status.error
    if status.scope:
        entry["scope"] = status.scope
    if status.status == "connected":
        entry["tools"] = [_tool_entry(tool) for tool in detail.tools]
    return entry


def _tool_entry(tool: McpToolInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.description:
        entry["description"] = tool.description
    if tool.annotations:
        entry["annotations"] = dict(tool.annotations)
    return entry
