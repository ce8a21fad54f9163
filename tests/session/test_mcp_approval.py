"""A person approves a project's MCP servers from inside a session: the approval is written
where `stayer mcp approve` writes it and the server starts at once, its tools in the session's
next request; refused, with nothing written or started, when git tracks the local settings."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stayer.errors import ConfigError
from stayer.session.mcp_approval import McpChanged
from stayer.session.session import Session
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import opened

KITCHEN = Path(__file__).resolve().parents[1] / "mcp_servers" / "kitchen.py"


def project(path: Path) -> Path:
    """A git repository whose .mcp.json asks for the test server."""
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    entry = {"command": sys.executable, "args": [str(KITCHEN)]}
    (path / ".mcp.json").write_text(json.dumps({"mcpServers": {"kitchen": entry}}))
    return path


def tracked_local_settings(cwd: Path) -> Path:
    """The project's local settings file, empty and added to git (the repository ships it)."""
    local = cwd / ".stayer" / "settings.local.json"
    local.parent.mkdir()
    local.write_text("{}\n")
    subprocess.run(["git", "-C", str(cwd), "add", str(local)], check=True)
    return local


async def until_connected(session: Session, name: str) -> None:
    """Until the session says `name` is connected (told by the session, no polling)."""
    up = asyncio.Event()

    def look() -> None:
        if any(s.name == name and s.status == "connected" for s in session.mcp_servers()):
            up.set()

    session.watch_mcp(look)
    look()
    await asyncio.wait_for(up.wait(), 30)


def states(session: Session) -> dict[str, str]:
    return {status.name: status.status for status in session.mcp_servers()}


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


async def test_approving_writes_the_local_settings_and_starts_the_server(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cwd = project(tmp_path / "repo")
    async with opened(server, cwd) as session:
        assert states(session) == {"kitchen": "needs-approval"}
        assert "mcp__kitchen__echo" not in session.setup.params.tools.names
        assert await session.approve_mcp(["kitchen"]) == ("kitchen",)
        written = json.loads((cwd / ".stayer" / "settings.local.json").read_text())
        assert written["enabledMcpjsonServers"] == ["kitchen"]
        await until_connected(session, "kitchen")
        assert states(session) == {"kitchen": "connected"}
        assert "mcp__kitchen__echo" in session.setup.params.tools.names


async def test_a_local_settings_file_git_tracks_is_refused(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cwd = project(tmp_path / "repo")
    local = tracked_local_settings(cwd)
    async with opened(server, cwd) as session:
        with pytest.raises(ConfigError, match=r"git tracks .*untrack it"):
            await session.approve_mcp(["kitchen"])
        assert local.read_text() == "{}\n"
        assert states(session) == {"kitchen": "needs-approval"}


async def test_only_a_waiting_server_is_approved(server: FakeModelServer, tmp_path: Path) -> None:
    cwd = project(tmp_path / "repo")
    async with opened(server, cwd) as session:
        with pytest.raises(ConfigError, match="no MCP server named elsewhere waits"):
            await session.approve_mcp(["elsewhere"])
        assert not (cwd / ".stayer" / "settings.local.json").exists()


async def test_a_tracked_local_settings_file_deleted_from_the_work_tree_is_refused(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cwd = project(tmp_path / "repo")
    local = tracked_local_settings(cwd)
    local.unlink()  # gone from the work tree, still in git's index: a write there is ignored
    async with opened(server, cwd) as session:
        with pytest.raises(ConfigError, match=r"git tracks .*untrack it"):
            await session.approve_mcp(["kitchen"])
        assert not local.exists()
        assert states(session) == {"kitchen": "needs-approval"}


async def test_a_server_is_started_as_it_was_shown_its_variables_expanded(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cwd = project(tmp_path / "repo")
    entry = {
        "command": sys.executable,
        "args": [str(KITCHEN), "--tools", "${KITCHEN_TOOLS:-2}"],
        "env": {"SEEN": "${STAYER_CONFIG_DIR}"},
    }
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"kitchen": entry}}))
    async with opened(server, cwd) as session:
        resolved = session.setup.resolved
        assert resolved is not None and resolved.mcp is not None
        (shown,) = resolved.mcp.needs_approval
        assert shown.args[-1] == "${KITCHEN_TOOLS:-2}"  # shown as written
        assert await session.approve_mcp(["kitchen"]) == ("kitchen",)
        await until_connected(session, "kitchen")
        assert "mcp__kitchen__echo" in session.setup.params.tools.names


async def test_a_server_edited_after_the_question_is_neither_approved_nor_started(
    server: FakeModelServer, tmp_path: Path
) -> None:
    cwd = project(tmp_path / "repo")
    async with opened(server, cwd) as session:
        edited = {"command": sys.executable, "args": [str(KITCHEN), "--stderr", "edited"]}
        (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"kitchen": edited}}))
        with pytest.raises(McpChanged, match="kitchen changed since it was shown") as raised:
            await session.approve_mcp(["kitchen"])
        assert raised.value.started == ()
        assert not (cwd / ".stayer" / "settings.local.json").exists()
        assert states(session) == {"kitchen": "needs-approval"}
