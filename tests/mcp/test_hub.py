"""McpHub: every server starts at once and the hub returns at once; a slow or broken server
holds up nothing; statuses, changes and the generation say what happened."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.mcp.hub import McpHub, connect_timeout_from
from stayer.mcp.server import McpUnavailable
from tests.mcp.conftest import FAST, stdio_config


def _env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"]}


async def until_status(hub: McpHub, name: str, state: str) -> McpServerStatus:
    """Until server `name` is in `state`, by the hub's own changes."""
    deadline = time.monotonic() + 30
    while True:
        status = next(s for s in hub.statuses() if s.name == name)
        if status.status == state:
            return status
        assert time.monotonic() < deadline, f"{name} never became {state}: {status}"
        await asyncio.sleep(0.01)


async def test_a_slow_server_does_not_hold_up_the_start(tmp_path: Path) -> None:
    go = tmp_path / "go"
    needs_approval = McpServerStatus("repo", "needs-approval", scope="mcpjson")
    hub = McpHub(
        [stdio_config("slow", "--wait-file", str(go)), stdio_config("quick")],
        env=_env(),
        log_dir=tmp_path,
        initial=[needs_approval],
    )
    try:
        began = time.monotonic()
        hub.start()
        assert time.monotonic() - began < 0.1  # start() returns at once
        assert [(s.name, s.status) for s in hub.statuses()] == [
            ("repo", "needs-approval"),
            ("slow", "pending"),
            ("quick", "pending"),
        ]
        await until_status(hub, "quick", "connected")
        assert hub.statuses()[1].status == "pending"
        assert [s.config.name for s in hub.connected()] == ["quick"]

        go.touch()
        await hub.wait_started(timeout_s=30)
        assert [(s.name, s.status) for s in hub.statuses()] == [
            ("repo", "needs-approval"),
            ("slow", "connected"),
            ("quick", "connected"),
        ]
        assert [s.config.name for s in hub.connected()] == ["slow", "quick"]
        changes = hub.drain()
        assert sorted((c.name, c.status) for c in changes) == [
            ("quick", "connected"),
            ("slow", "connected"),
        ]
        assert hub.drain() == []
    finally:
        await hub.aclose()


async def test_one_broken_server_leaves_the_others_alone(tmp_path: Path) -> None:
    hub = McpHub(
        [stdio_config("ok"), stdio_config("dies", "--exit", "2")],
        env=_env(),
        log_dir=tmp_path,
        restart_delays_s=FAST,
    )
    hub.start()
    try:
        await hub.wait_started()
        ok, dies = hub.servers()
        assert ok.status.status == "connected"
        assert dies.status.status == "failed"
        result = await ok.call_tool("echo", {"text": "fine"}, timeout_s=10)
        assert not result.is_error
    finally:
        await hub.aclose()
        await hub.aclose()


async def test_the_generation_moves_with_every_change(tmp_path: Path) -> None:
    hub = McpHub([stdio_config("g")], env=_env(), log_dir=tmp_path, restart_delays_s=FAST)
    assert hub.generation == 0
    hub.start()
    try:
        await hub.wait_started()
        connected = hub.generation
        assert connected > 0
        (server,) = hub.servers()
        with pytest.raises(McpUnavailable):
            await server.call_tool("crash", {}, timeout_s=10)
        await until_status(hub, "g", "pending")
        assert hub.generation > connected
        await until_status(hub, "g", "connected")
        assert [c.status for c in hub.drain()] == ["connected", "pending", "connected"]
    finally:
        await hub.aclose()


async def test_wait_started_gives_up_at_its_timeout(tmp_path: Path) -> None:
    hub = McpHub(
        [stdio_config("never", "--wait-file", str(tmp_path / "never"))],
        env=_env(),
        log_dir=tmp_path,
    )
    hub.start()
    try:
        await hub.wait_started(timeout_s=0.2)
        assert hub.statuses()[0].status == "pending"
    finally:
        await hub.aclose()


async def test_no_servers(tmp_path: Path) -> None:
    hub = McpHub([], env={}, log_dir=tmp_path)
    hub.start()
    await hub.wait_started()
    assert hub.statuses() == ()
    await hub.aclose()


def test_mcp_timeout_is_read_in_milliseconds() -> None:
    assert connect_timeout_from({"MCP_TIMEOUT": "5000"}) == 5.0
    assert connect_timeout_from({}) == 30.0
    for bad in ("soon", "-1", "0", "nan", "inf"):
        with pytest.raises(
            ConfigError, match=r"^MCP_TIMEOUT=.* is not a number of milliseconds above 0; "
        ):
            connect_timeout_from({"MCP_TIMEOUT": bad})


async def test_the_hub_takes_mcp_timeout_from_the_environment(tmp_path: Path) -> None:
    config = stdio_config("slow", "--wait-file", str(tmp_path / "never"))
    hub = McpHub([config], env={**_env(), "MCP_TIMEOUT": "300"}, log_dir=tmp_path)
    hub.start()
    try:
        await hub.wait_started()
        assert hub.statuses()[0].error == "timed out after 0.3 s connecting"
    finally:
        await hub.aclose()
