"""Turning a running server off and starting it again (the SDK's `mcp_toggle` and
`mcp_reconnect`): off, its tools are gone; started again, they are back; a server the session
does not run is refused in one line saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.config.mcp_servers import McpServerConfig
from stayer.errors import ConfigError
from stayer.events import McpServerStatus
from stayer.mcp.hub import McpHub
from tests.mcp.sdk_program import Program, calculator

CALC = McpServerConfig(name="calc", transport="sdk", scope="flag", origin="--mcp-config")


async def test_a_server_turned_off_offers_nothing_until_started_again(tmp_path: Path) -> None:
    async with Program(calculator()).running() as program:
        hub = McpHub([CALC], env={}, log_dir=tmp_path, tunnel=program.send)
        try:
            hub.start()
            await hub.wait_started(30)
            assert [s.config.name for s in hub.connected()] == ["calc"]
            before = hub.generation

            await hub.disable("calc")
            [server] = hub.servers()
            assert (server.status.status, server.tool_defs) == ("disabled", ())
            assert hub.generation > before  # the tools are made again without it

            restarted = await hub.restart("calc")
            await hub.wait_started(30)
            assert hub.servers() == (restarted,)
            assert restarted.status.status == "connected"
            assert [t.name for t in restarted.tool_defs] == ["add", "wait", "fail"]
        finally:
            await hub.aclose()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (
            "repo",
            "MCP server repo cannot be started from here: it waits for your approval "
            "(`stayer mcp approve repo`)",
        ),
        ("off", "MCP server off cannot be started from here: your settings turn it off"),
        ("nope", "no MCP server named nope in this session"),
    ],
)
async def test_a_server_the_session_does_not_run_is_refused(
    tmp_path: Path, name: str, said: str
) -> None:
    initial = [
        McpServerStatus("repo", "needs-approval", scope="mcpjson"),
        McpServerStatus("off", "disabled", scope="project"),
    ]
    hub = McpHub([], env={}, log_dir=tmp_path, initial=initial)
    with pytest.raises(ConfigError) as raised:
        await hub.restart(name)
    assert str(raised.value) == said
    with pytest.raises(ConfigError):
        await hub.disable(name)
