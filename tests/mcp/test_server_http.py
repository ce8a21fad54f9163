"""McpServer over streamable HTTP and SSE, against the test server listening on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp_types import TextContent

from stayer.config.mcp_servers import McpServerConfig
from stayer.mcp.server import McpServer, McpUnavailable
from tests.mcp.conftest import HttpServers, Recorder, appears, http_config


@asynccontextmanager
async def running(
    config: McpServerConfig, log_dir: Path, recorder: Recorder, *, delays: float = 0.01
) -> AsyncIterator[McpServer]:
    server = McpServer(
        config,
        env={},
        log_dir=log_dir,
        connect_timeout_s=20,
        on_change=recorder,
        restart_delays_s=(delays,) * 3,
    )
    server.start()
    try:
        yield server
    finally:
        await server.aclose()


def text_of(content: object) -> str:
    assert isinstance(content, TextContent)
    return content.text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_streamable_http(
    tmp_path: Path, recorder: Recorder, http_server: HttpServers
) -> None:
    url = http_server.start("--instructions", "over HTTP", "--token", "s3cret")
    config = http_config("web", url, Authorization="Bearer s3cret")
    async with running(config, tmp_path, recorder) as server:
        status = await recorder.until("connected")
        assert status.tools == len(server.tool_defs) > 0
        assert server.instructions == "over HTTP"
        added = await server.call_tool("add", {"a": 40, "b": 2}, timeout_s=10)
        assert text_of(added.content[0]) == "42"
        big = await server.call_tool("big", {}, timeout_s=30)
        assert len(text_of(big.content[0])) == 5 * 1024 * 1024


async def test_sse(tmp_path: Path, recorder: Recorder, http_server: HttpServers) -> None:
    url = http_server.start(transport="sse")
    async with running(http_config("old", url), tmp_path, recorder) as server:
        await recorder.until("connected")
        echoed = await server.call_tool("echo", {"text": "over SSE"}, timeout_s=10)
        assert text_of(echoed.content[0]) == "over SSE"


async def test_a_refused_token_is_said_with_its_status(
    tmp_path: Path, recorder: Recorder, http_server: HttpServers
) -> None:
    url = http_server.start("--token", "s3cret")
    async with running(http_config("locked", url), tmp_path, recorder):
        failed = await recorder.until("failed")
    assert failed.error == f"HTTP 401 from {url}"


async def test_nothing_listening(tmp_path: Path, recorder: Recorder) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with running(http_config("gone", url), tmp_path, recorder):
        failed = await recorder.until("failed")
    assert failed.error is not None
    assert failed.error.startswith(f"cannot connect to {url}")


async def test_cancel_reaches_an_http_server(
    tmp_path: Path, recorder: Recorder, http_server: HttpServers
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    url = http_server.start("--markers", str(markers))
    async with running(http_config("web", url), tmp_path, recorder) as server:
        await recorder.until("connected")
        call = asyncio.ensure_future(server.call_tool("wait", {}, timeout_s=None))
        await appears(markers / "started")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await appears(markers / "cancelled")


async def test_an_http_server_that_went_away_is_reconnected(
    tmp_path: Path, recorder: Recorder, http_server: HttpServers
) -> None:
    port = free_port()
    first = http_server.start("--port", str(port))
    async with running(http_config("web", first), tmp_path, recorder, delays=0.3) as server:
        await recorder.until("connected")
        http_server.stop(first)
        with pytest.raises(McpUnavailable):
            await server.call_tool("echo", {"text": "anyone?"}, timeout_s=10)
        await recorder.until("pending")
        # (start() waits for the port, blocking the loop: no reconnection is tried before.)
        http_server.start("--port", str(port))
        await recorder.until("connected")
        echoed = await server.call_tool("echo", {"text": "back"}, timeout_s=10)
        assert text_of(echoed.content[0]) == "back"
