"""The editor's files over ACP, end to end: `stayer acp` driven by the official `acp` package's
client over a real subprocess, against the fake model server. A client that offers
`fs/read_text_file` and `fs/write_text_file` has its unsaved buffer read and its buffer
edited, the disk left alone; one that offers neither gets the disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    TextContentBlock,
    WriteTextFileResponse,
)

from tests.e2e.acp_client import Editor, stayer_acp
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


class BufferEditor(Editor):
    """An editor with open buffers (by absolute path) that answers the fs methods; `fs` records
    each request as (method, session id, path)."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = dict(buffers)
        self.fs: list[tuple[str, str, str]] = []
        self.refusal: acp.RequestError | None = None
        """Answers every write while set."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.fs.append(("read", session_id, path))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.fs.append(("write", session_id, path))
        if self.refusal is not None:
            raise self.refusal
        self.buffers[path] = content
        return WriteTextFileResponse()


def fs(*, read: bool, write: bool) -> ClientCapabilities:
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=read, write_text_file=write))


def read_then_edit(server: FakeModelServer, path: Path, old: str, new: str) -> None:
    server.enqueue(
        reply(ToolCall("toolu_read", "Read", {"file_path": str(path)})),
        reply(
            ToolCall(
                "toolu_edit", "Edit", {"file_path": str(path), "old_string": old, "new_string": new}
            )
        ),
        reply("Done."),
    )


def result_block(server: FakeModelServer, request: int) -> dict[str, Any]:
    """The tool result block the model was sent in request `request`."""
    last = server.requests[request].messages[-1]
    assert isinstance(last, dict) and isinstance(last["content"], list)
    (block,) = [b for b in last["content"] if isinstance(b, dict) and b["type"] == "tool_result"]
    return block


def tool_result(server: FakeModelServer, request: int) -> str:
    """The content of the tool result the model was sent in request `request`, as JSON text."""
    return json.dumps(result_block(server, request)["content"])


async def prompt(
    server: FakeModelServer, cwd: Path, editor: Editor, capabilities: ClientCapabilities | None
) -> str:
    """Initialise with `capabilities`, open a session in `cwd`, prompt once; the session id."""
    async with stayer_acp(server, cwd, "--permission-mode", "acceptEdits", editor=editor) as (
        conn,
        _,
        _,
    ):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities
        )
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="make x 2")]
        )
    assert response.stop_reason == "end_turn"
    return session.session_id


async def test_the_model_reads_and_edits_the_editors_unsaved_buffer(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = tmp_path.resolve() / "app.py"
    path.write_text("x = 1\n")
    editor = BufferEditor({str(path): "x = 1  # unsaved\n"})
    read_then_edit(server, path, "x = 1", "x = 2")

    session_id = await prompt(server, tmp_path, editor, fs(read=True, write=True))

    assert "x = 1  # unsaved" in tool_result(server, 1)
    assert "Edited" in tool_result(server, 2)
    assert editor.buffers[str(path)] == "x = 2  # unsaved\n"
    assert path.read_text() == "x = 1\n"
    assert editor.fs == [
        ("read", session_id, str(path)),  # Read
        ("read", session_id, str(path)),  # Edit: the buffer is still as read
        ("write", session_id, str(path)),
    ]


async def test_a_client_offering_no_fs_methods_gets_the_disk(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = tmp_path.resolve() / "app.py"
    path.write_text("x = 1  # on disk\n")
    editor = BufferEditor({str(path): "x = 1  # unsaved\n"})
    read_then_edit(server, path, "x = 1", "x = 2")

    await prompt(server, tmp_path, editor, None)

    assert "x = 1  # on disk" in tool_result(server, 1)
    assert path.read_text() == "x = 2  # on disk\n"
    assert editor.fs == []
    assert editor.buffers[str(path)] == "x = 1  # unsaved\n"


async def test_a_client_offering_only_reads_has_its_buffer_read_and_the_disk_written(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = tmp_path.resolve() / "app.py"
    path.write_text("x = 1\n")
    editor = BufferEditor({str(path): "x = 1  # unsaved\n"})
    read_then_edit(server, path, "x = 1", "x = 2")

    await prompt(server, tmp_path, editor, fs(read=True, write=False))

    assert "x = 1  # unsaved" in tool_result(server, 1)
    assert path.read_text() == "x = 2  # unsaved\n"
    assert [method for method, _, _ in editor.fs] == ["read", "read"]


async def test_an_editor_refusing_the_write_is_the_models_error_and_the_disk_is_untouched(
    server: FakeModelServer, tmp_path: Path
) -> None:
    path = tmp_path.resolve() / "app.py"
    path.write_text("x = 1\n")
    editor = BufferEditor({str(path): "x = 1\n"})
    editor.refusal = acp.RequestError.internal_error({"details": "the buffer is read-only"})
    read_then_edit(server, path, "x = 1", "x = 2")

    await prompt(server, tmp_path, editor, fs(read=True, write=True))

    assert tool_result(server, 2) == json.dumps(
        [
            {
                "type": "text",
                "text": f"The editor could not write {path}: Internal error (the buffer is "
                "read-only).",
            }
        ]
    )
    assert result_block(server, 2)["is_error"] is True
    assert path.read_text() == "x = 1\n"
    assert editor.buffers[str(path)] == "x = 1\n"
