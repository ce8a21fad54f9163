"""A claude-agent-sdk program's side of its in-process MCP servers, for tests: a server made
with the SDK's public `create_sdk_mcp_server` and `@tool`, served over memory streams, and a
`send` that answers each raw JSON-RPC message as the SDK answers `mcp_message`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import mcp_types
from claude_agent_sdk import create_sdk_mcp_server, tool
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage


class Program:
    """The SDK program's side: one in-process server, served over memory streams, answering
    each raw JSON-RPC message with the raw reply (an empty one for a notification), as the
    SDK answers `mcp_message`."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server
        self.carried: list[dict[str, Any]] = []
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._write: Any = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Program]:
        async with create_client_server_memory_streams() as (client, server_side):
            read, self._write = client
            async with anyio.create_task_group() as group:
                options = self.server.create_initialization_options()
                group.start_soon(self.server.run, *server_side, options)
                group.start_soon(self._replies, read)
                yield self
                group.cancel_scope.cancel()

    async def _replies(self, read: Any) -> None:
        async for item in read:
            reply = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            waiting = self._waiting.pop(reply.get("id"), None)
            if "method" not in reply and waiting is not None:
                waiting.set_result(reply)

    async def send(self, name: str, message: Mapping[str, Any]) -> Mapping[str, Any]:
        self.carried.append(dict(message))
        if name != "calc":
            return {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32601}}
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(dict(message), by_name=False)
        if not isinstance(parsed, mcp_types.JSONRPCRequest):
            await self._write.send(SessionMessage(parsed))
            return {"jsonrpc": "2.0", "result": {}}
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[parsed.id] = answer
        await self._write.send(SessionMessage(parsed))
        return await answer


released = asyncio.Event()


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("wait", "Wait until released", {})
async def wait(args: dict[str, Any]) -> dict[str, Any]:
    await released.wait()
    return {"content": [{"type": "text", "text": "released"}]}


@tool("fail", "Always fails", {})
async def fail(args: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("the calculator broke")


def calculator() -> Server[Any]:
    instance: Server[Any] = create_sdk_mcp_server("calc", tools=[add, wait, fail])["instance"]
    return instance
