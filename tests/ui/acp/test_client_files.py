"""`ClientFiles` against the official `acp` package's client side: the agent's end of a real
connection asks a client that keeps buffers, over a socket pair in this process."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from acp import Agent, Client, RequestError
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.edit import EditTool
from stayer.tools.builtin.read import ReadTool
from stayer.ui.acp.files import ClientFiles, client_files
from tests.unit.tools.helpers import run_tool, text_of


class BufferClient:
    """An editor on the client side: buffers by path; every fs request recorded as
    (method, session id, path, content or None); `error` is raised by the next requests."""

    def __init__(self, buffers: dict[str, str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        self.requests: list[tuple[str, str, str, str | None]] = []
        self.error: RequestError | None = None

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.requests.append(("read", session_id, path, None))
        if self.error is not None:
            raise self.error
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.requests.append(("write", session_id, path, content))
        if self.error is not None:
            raise self.error
        self.buffers[path] = content
        return WriteTextFileResponse()


class NoAgent:
    """The agent's end needs an agent; these tests only send requests from it."""


@asynccontextmanager
async def connected(client: BufferClient) -> AsyncIterator[AgentSideConnection]:
    """The agent's end of a live connection to `client`."""
    ours, theirs = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=ours)
    client_reader, client_writer = await asyncio.open_connection(sock=theirs)
    # each end needs the whole other side; these tests use only the fs requests
    agent = AgentSideConnection(cast(Agent, NoAgent()), agent_writer, agent_reader)
    editor = ClientSideConnection(cast(Client, client), client_writer, client_reader)
    try:
        yield agent
    finally:
        await editor.close()
        await agent.close()
        for writer in (agent_writer, client_writer):
            writer.close()
            await writer.wait_closed()


async def test_reads_and_writes_go_to_the_client_with_the_session_and_path(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    client = BufferClient({str(path): "unsaved\n"})
    async with connected(client) as conn:
        files = ClientFiles(conn, "sess_1")
        assert await files.read_text(path) == "unsaved\n"
        await files.write_text(path, "new\n")
    assert client.requests == [
        ("read", "sess_1", str(path), None),
        ("write", "sess_1", str(path), "new\n"),
    ]
    assert not path.exists()


async def test_an_error_reply_is_one_line_with_what_the_client_said(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    client = BufferClient()
    async with connected(client) as conn:
        files = ClientFiles(conn, "s")
        with pytest.raises(ToolFailure) as missing:
            await files.read_text(path)
        client.error = RequestError.internal_error({"details": "buffer is\nread-only."})
        with pytest.raises(ToolFailure) as refused:
            await files.write_text(path, "x")
    assert str(missing.value) == f"The editor could not read {path}: Resource not found."
    assert str(refused.value) == (
        f"The editor could not write {path}: Internal error (buffer is read-only)."
    )
    assert not path.exists()


async def test_a_client_that_is_gone_is_an_error_and_nothing_reaches_the_disk(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.py"
    async with connected(BufferClient()) as conn:
        await conn.close()
        with pytest.raises(ToolFailure) as gone:
            await ClientFiles(conn, "s").write_text(path, "x")
    assert str(gone.value) == f"The editor could not write {path}: Connection closed."
    assert not path.exists()


def capabilities(*, read: bool, write: bool) -> ClientCapabilities:
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=read, write_text_file=write))


async def test_a_client_offering_neither_fs_method_gets_no_editor_files() -> None:
    async with connected(BufferClient()) as conn:
        assert client_files(conn, None) is None
        assert client_files(conn, ClientCapabilities()) is None
        assert client_files(conn, capabilities(read=False, write=False)) is None


async def test_each_fs_method_is_used_only_when_offered(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("disk\n")
    client = BufferClient({str(path): "buffer\n"})
    async with connected(client) as conn:
        reading = client_files(conn, capabilities(read=True, write=False))
        writing = client_files(conn, capabilities(read=False, write=True))
        assert reading is not None and writing is not None
        reading.session_id = writing.session_id = "s"
        assert await reading.read_text(path) == "buffer\n"
        await reading.write_text(path, "to disk\n")
        assert path.read_text() == "to disk\n"
        assert await writing.read_text(path) == "to disk\n"
        await writing.write_text(path, "to the editor\n")
    assert [request[0] for request in client.requests] == ["read", "write"]
    assert client.buffers[str(path)] == "to the editor\n"
    assert path.read_text() == "to disk\n"


async def test_the_tools_read_and_edit_the_clients_buffer(tmp_path: Path) -> None:
    path = tmp_path.resolve() / "app.py"
    path.write_text("x = 1\n")
    client = BufferClient({str(path): "x = 1  # unsaved\n"})
    async with connected(client) as conn:
        ctx = ToolContext(cwd=tmp_path.resolve(), editor=ClientFiles(conn, "s"))
        read = await run_tool(ReadTool(), ctx, file_path="app.py")
        await run_tool(EditTool(), ctx, file_path="app.py", old_string="1", new_string="2")
    assert text_of(read) == "     1\tx = 1  # unsaved"
    assert client.buffers[str(path)] == "x = 2  # unsaved\n"
    assert path.read_text() == "x = 1\n"


async def test_no_request_is_sent_before_the_session_is_known(tmp_path: Path) -> None:
    client = BufferClient({str(tmp_path / "a.txt"): "x"})
    async with connected(client) as conn:
        files = client_files(conn, capabilities(read=True, write=True))
        assert files is not None
        with pytest.raises(ToolFailure, match="session is not open yet"):
            await files.read_text(tmp_path / "a.txt")
    assert client.requests == []
