"""The SDK front end gives the session a way to its in-process MCP servers: each message goes
out as an `mcp_message` control request, and the reply's `mcp_response` comes back."""

from __future__ import annotations

import asyncio

import pytest

from stayer.session.options import QueryOptions
from stayer.ui.sdk.control import ControlChannel, ControlError
from stayer.ui.sdk.mcp import wire_sdk_mcp
from stayer.ui.sdk.wiring import WIRINGS
from tests.ui.sdk.wire import Wire

LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


async def test_a_message_travels_as_mcp_message_and_its_mcp_response_returns() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    assert wire_sdk_mcp in WIRINGS
    options, reply_fields = wire_sdk_mcp(QueryOptions(), {"subtype": "initialize"}, channel)
    assert reply_fields == {}
    send = options.sdk_mcp
    assert send is not None
    asking = asyncio.ensure_future(send("calc", LISTING))
    frame = await wire.next()
    assert frame["request"] == {"subtype": "mcp_message", "server_name": "calc", "message": LISTING}
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}
    response = {"subtype": "success", "request_id": frame["request_id"]}
    channel.dispatch(
        {"type": "control_response", "response": {**response, "response": {"mcp_response": answer}}}
    )
    assert await asking == answer

    asking = asyncio.ensure_future(send("calc", LISTING))
    frame = await wire.next()
    empty = {"subtype": "success", "request_id": frame["request_id"], "response": {}}
    channel.dispatch({"type": "control_response", "response": empty})
    with pytest.raises(ControlError, match="has no mcp_response"):
        await asking
