"""An MCP transport through claude-agent-sdk's control channel, for its in-process servers.

A program built on claude-agent-sdk may serve MCP tools from its own process
(`create_sdk_mcp_server`); the SDK names them in `--mcp-config` as `{"type": "sdk"}` and
answers each JSON-RPC message stayer sends it in an `mcp_message` control request with the
server's reply (reference: protocols.md §1.5). `tunnel_transport` gives the official `mcp`
client a pair of memory streams, as any transport does, and a pump that sends each message the
client writes through `send` (a callable the SDK front end passes down: this layer does not
know the control channel) and hands a request's reply back to the client. Each message travels
in a task of its own, so a slow tool call never holds up a listing. A notification needs no
reply (the SDK acknowledges it with an empty one, which is dropped). A reply that is not the
answer to its request, or a request the SDK could not carry, reaches the client as a JSON-RPC
error for that request, so no call waits forever.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

if TYPE_CHECKING:
    import mcp_types
    from mcp.client import Transport
    from mcp.client._transport import TransportStreams
    from mcp.shared.message import SessionMessage

McpTunnel = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Sends one JSON-RPC message to the SDK's in-process server of that name and returns its
reply (the `mcp_response` of the `mcp_message` request); raises when the SDK cannot carry it."""


def tunnel_transport(name: str, send: McpTunnel) -> Transport:
    """A transport to the SDK's in-process server `name`, every message sent through `send`."""

    @contextlib.asynccontextmanager
    async def tunnel() -> AsyncIterator[TransportStreams]:
        from mcp.shared.message import SessionMessage

        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](16)
        pump = _Pump(name, send, to_client)
        async with anyio.create_task_group() as group:
            group.start_soon(pump.run, from_client, group)
            try:
                yield client_reads, client_writes
            finally:
                group.cancel_scope.cancel()
                for stream in (to_client, client_reads, client_writes, from_client):
                    stream.close()

    return tunnel()


class _Pump:
    """Carries the client's messages to the SDK and the replies back."""

    def __init__(
        self,
        name: str,
        send: McpTunnel,
        to_client: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    ) -> None:
        self._name = name
        self._send = send
        self._to_client = to_client

    async def run(
        self,
        from_client: anyio.abc.ObjectReceiveStream[SessionMessage],
        group: anyio.abc.TaskGroup,
    ) -> None:
        async with from_client:
            async for item in from_client:
                message = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                group.start_soon(self._carry, message)

    async def _carry(self, message: dict[str, Any]) -> None:
        request_id = message.get("id") if "method" in message else None
        try:
            reply = await self._send(self._name, message)
        except Exception as error:  # the SDK refused it, or the channel is gone
            if request_id is not None:
                await self._deliver(_error(request_id, f"the SDK could not carry it: {error}"))
            return
        if request_id is not None:
            await self._deliver(_answer(request_id, reply))

    async def _deliver(self, message: mcp_types.JSONRPCMessage) -> None:
        from mcp.shared.message import SessionMessage

        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._to_client.send(SessionMessage(message))


def _answer(request_id: Any, reply: Mapping[str, Any]) -> mcp_types.JSONRPCMessage:
    """The reply as the client reads it, or an error for the request when it is no answer to
    it (the client matches answers by id: one with another id would leave the call waiting)."""
    import mcp_types
    from pydantic import ValidationError

    try:
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(dict(reply), by_name=False)
    except ValidationError:
        return _error(request_id, "its reply is not a JSON-RPC message")
    if not isinstance(parsed, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
        return _error(request_id, "its reply is not a JSON-RPC response")
    if parsed.id != request_id:
        return _error(request_id, f"its reply answers request {parsed.id!r}, not {request_id!r}")
    return parsed


def _error(request_id: Any, text: str) -> mcp_types.JSONRPCError:
    import mcp_types

    data = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=text)
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=data)
