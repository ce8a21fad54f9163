"""McpServer against the reference server `mcp-server-time` (protocols.md §5.4), which
`scripts/bootstrap.py` installs into a virtual environment of its own."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from mcp_types import TextContent

from stayer.config.mcp_servers import McpServerConfig
from stayer.events import McpServerStatus
from stayer.mcp.server import McpServer
from tests.mcp_servers.reference import time_server


async def test_lists_and_calls_get_current_time(tmp_path: Path) -> None:
    changes: list[McpServerStatus] = []
    config = McpServerConfig(
        name="time",
        transport="stdio",
        scope="flag",
        origin="--mcp-config",
        command=str(time_server()),
        args=("--local-timezone", "UTC"),
    )
    server = McpServer(
        config,
        env={"PATH": os.environ["PATH"]},
        log_dir=tmp_path,
        connect_timeout_s=30,
        on_change=changes.append,
    )
    server.start()
    try:
        async with asyncio.timeout(30):
            await server.wait_settled()
        assert changes == [McpServerStatus("time", "connected", None, 2, "flag")]
        assert sorted(t.name for t in server.tool_defs) == ["convert_time", "get_current_time"]

        result = await server.call_tool("get_current_time", {"timezone": "UTC"}, timeout_s=10)
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["timezone"] == "UTC"
        text = result.content[0]
        assert isinstance(text, TextContent)
        assert json.loads(text.text)["timezone"] == "UTC"

        wrong = await server.call_tool("get_current_time", {"timezone": "Mars/Base"}, timeout_s=10)
        assert wrong.is_error
    finally:
        await server.aclose()
