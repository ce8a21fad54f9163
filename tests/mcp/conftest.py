"""What the MCP client's tests share: the test server's command line, a recorder of status
changes to wait on, HTTP servers started as subprocesses on 127.0.0.1."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stayer.config.mcp_servers import McpServerConfig, Transport
from stayer.events import McpServerStatus, McpState

KITCHEN = Path(__file__).resolve().parent.parent / "mcp_servers" / "kitchen.py"
FAST = (0.01, 0.01, 0.01)
"""Restart delays for tests: the back-off's shape, without its wait."""


def stdio_config(name: str, *args: str, env: dict[str, str] | None = None) -> McpServerConfig:
    """The test server over stdio, with its behaviour chosen by `args`."""
    return McpServerConfig(
        name=name,
        transport="stdio",
        scope="flag",
        origin="--mcp-config",
        command=sys.executable,
        args=(str(KITCHEN), *args),
        env=env or {},
    )


def http_config(name: str, url: str, **headers: str) -> McpServerConfig:
    """A server over streamable HTTP, or SSE when `url` ends in /sse."""
    transport: Transport = "sse" if url.endswith("/sse") else "http"
    return McpServerConfig(
        name=name, transport=transport, scope="user", origin="test", url=url, headers=headers
    )


class Recorder:
    """The statuses a server (or hub) reported, with a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[McpServerStatus] = []
        self._next = 0
        self._changed = asyncio.Event()

    def __call__(self, status: McpServerStatus) -> None:
        self.seen.append(status)
        self._changed.set()

    async def until(self, state: McpState, name: str | None = None) -> McpServerStatus:
        """The next status in `state` (of server `name`), past those already waited for."""
        async with asyncio.timeout(30):
            while True:
                while self._next < len(self.seen):
                    status = self.seen[self._next]
                    self._next += 1
                    if name not in (None, status.name):
                        continue
                    if status.status == state:
                        return status
                    # A failed server stays failed: waiting for anything else is in vain.
                    assert status.status != "failed", status
                self._changed.clear()
                await self._changed.wait()


async def appears(path: Path) -> None:
    """Until a marker file exists (the server writes it; we cannot be told otherwise)."""
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.01)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


class HttpServers:
    """Test servers over HTTP (or SSE), each a subprocess listening on 127.0.0.1."""

    def __init__(self) -> None:
        self._running: dict[str, subprocess.Popen[str]] = {}

    def start(self, *args: str, transport: str = "http") -> str:
        """Start one and give its URL once it listens."""
        process = subprocess.Popen(
            [sys.executable, str(KITCHEN), "--transport", transport, *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        port = process.stdout.readline().strip()  # printed once the socket listens
        path = "/sse" if transport == "sse" else "/mcp"
        url = f"http://127.0.0.1:{port}{path}"
        self._running[url] = process
        assert port, "the test server did not start"
        return url

    def stop(self, url: str) -> None:
        """Kill the server at `url` and wait for it to be gone."""
        process = self._running.pop(url)
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def stop_all(self) -> None:
        for url in list(self._running):
            self.stop(url)


@pytest.fixture
def http_server() -> Iterator[HttpServers]:
    servers = HttpServers()
    yield servers
    servers.stop_all()
