"""The SDK program's in-process MCP servers: their messages carried over the control channel.

A claude-agent-sdk program names the servers it serves itself in `--mcp-config` as
`{"type": "sdk", "name": ...}`; stayer is their MCP client, and each JSON-RPC message it sends
one travels as an `mcp_message` control request whose reply holds the server's answer in
`mcp_response` (reference: protocols.md §1.5). `wire_sdk_mcp` gives the session the callable
that does this (`QueryOptions.sdk_mcp`), so those servers start as any other does, their tools
offered as `mcp__<server>__<tool>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from stayer.session.options import QueryOptions

from .control import ControlChannel, ControlError


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
