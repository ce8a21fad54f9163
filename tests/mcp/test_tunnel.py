"""An SDK server reached through the tunnel (`"type": "sdk"`): stayer's MCP client connects,
lists and calls through a callable that carries raw JSON-RPC, as the SDK's `mcp_message`
does; calls travel side by side; a message the SDK cannot carry, or a reply that answers
something else, fails that request in one line and never leaves it waiting."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from stayer.config.mcp_servers import McpServerConfig
from stayer.errors import StayerError
from stayer.mcp.server import McpRequestError, McpServer
from stayer.mcp.tunnel import McpTunnel
from tests.mcp.conftest import Recorder
from tests.mcp.sdk_program import Program, calculator, released

CONFIG = McpServerConfig(name="calc", transport="sdk", scope="flag", origin="--mcp-config")


@contextlib.asynccontextmanager
async def connected(
    tunnel: McpTunnel | None, recorder: Recorder, tmp_path: Path
) -> AsyncIterator[McpServer]:
    server = McpServer(
        CONFIG, env={}, log_dir=tmp_path, connect_timeout_s=30, on_change=recorder, tunnel=tunnel
    )
    server.start()
    try:
        yield server
    finally:
        await server.aclose()


@contextlib.asynccontextmanager
async def served(recorder: Recorder, tmp_path: Path) -> AsyncIterator[tuple[Program, McpServer]]:
    """The calculator in its program, and stayer's client connecting to it through the tunnel."""
    async with contextlib.AsyncExitStack() as stack:
        program = await stack.enter_async_context(Program(calculator()).running())
        server = await stack.enter_async_context(connected(program.send, recorder, tmp_path))
        yield program, server


async def test_an_sdk_server_is_listed_and_called_through_the_tunnel(
    recorder: Recorder, tmp_path: Path
) -> None:
    async with served(recorder, tmp_path) as (program, server):
        status = await recorder.until("connected")
        assert (status.name, status.tools) == ("calc", 3)
        assert [t.name for t in server.tool_defs] == ["add", "wait", "fail"]
        result = await server.call_tool("add", {"a": 1, "b": 2}, timeout_s=30)
        assert ([c.text for c in result.content], result.is_error) == (["3"], False)  # type: ignore[union-attr]
    # the handshake Claude Code sends, then the listing and the call, one message each
    methods = [message.get("method") for message in program.carried]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert program.carried[3]["params"] == {"name": "add", "arguments": {"a": 1, "b": 2}}


async def test_a_slow_call_holds_up_no_other(recorder: Recorder, tmp_path: Path) -> None:
    released.clear()
    async with served(recorder, tmp_path) as (_, server):
        await recorder.until("connected")
        slow = asyncio.ensure_future(server.call_tool("wait", {}, timeout_s=30))
        quick = await server.call_tool("add", {"a": 2, "b": 2}, timeout_s=30)
        assert [c.text for c in quick.content] == ["4"]  # type: ignore[union-attr]
        assert not slow.done()
        released.set()
        done = await slow
        assert [c.text for c in done.content] == ["released"]  # type: ignore[union-attr]


async def test_a_message_the_sdk_cannot_carry_fails_the_server_in_one_line(
    recorder: Recorder, tmp_path: Path
) -> None:
    async def refused(name: str, message: Mapping[str, Any]) -> Mapping[str, Any]:
        raise StayerError("the SDK did not answer: standard input ended")

    async with connected(refused, recorder, tmp_path):
        status = await _failed(recorder)
    assert (
        status.error == "the SDK could not carry it: the SDK did not answer: standard input ended"
    )


async def test_without_a_tunnel_an_sdk_server_fails_closed(
    recorder: Recorder, tmp_path: Path
) -> None:
    async with connected(None, recorder, tmp_path):
        status = await _failed(recorder)
    assert status.error == "no claude-agent-sdk program to reach it through"


Mangle = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.mark.parametrize(
    ("mangle", "said"),
    [
        (lambda reply: {**reply, "id": 999}, "its reply answers request 999, not 3"),
        (lambda reply: {"jsonrpc": "2.0", "result": {}}, "its reply is not a JSON-RPC message"),
        (lambda reply: {"mcp": "?"}, "its reply is not a JSON-RPC message"),
        (
            lambda reply: {"jsonrpc": "2.0", "method": "ping", "id": 3},
            "its reply is not a JSON-RPC response",
        ),
    ],
)
async def test_a_reply_that_answers_something_else_fails_that_call_only(
    recorder: Recorder, tmp_path: Path, mangle: Mangle, said: str
) -> None:
    async with Program(calculator()).running() as program:
        calls: list[Mapping[str, Any]] = []

        async def garbled(name: str, message: Mapping[str, Any]) -> Mapping[str, Any]:
            reply = await program.send(name, message)
            if message.get("method") != "tools/call":
                return reply
            calls.append(message)
            return mangle(dict(reply)) if len(calls) == 1 else reply  # only the first call

        async with connected(garbled, recorder, tmp_path) as server:
            await recorder.until("connected")
            with pytest.raises(McpRequestError) as raised:
                await server.call_tool("add", {"a": 1, "b": 2}, timeout_s=30)
            assert str(raised.value) == f"MCP server 'calc': {said}"
            assert server.status.status == "connected"
            again = await server.call_tool("add", {"a": 1, "b": 1}, timeout_s=30)
            assert again.is_error is False


async def _failed(recorder: Recorder) -> Any:
    async with asyncio.timeout(30):
        while True:
            failed = [status for status in recorder.seen if status.status == "failed"]
            if failed:
                return failed[0]
            await asyncio.sleep(0.01)
