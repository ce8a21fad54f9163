"""The Write tool: creating files, and refusing to overwrite what was not read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.write import WriteInput, WriteTool
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_creates_a_file_and_its_directories(ctx: ToolContext) -> None:
    path = ctx.cwd / "deep" / "er" / "new.txt"
    output = await run_tool(WriteTool(), ctx, file_path=str(path), content="a\nb\n")
    assert text_of(output) == f"Created {path} (2 lines)."
    assert output.data == {"type": "create", "file_path": str(path)}
    assert path.read_bytes() == b"a\nb\n"
    assert ctx.read_files[path.resolve()] == path.stat().st_mtime_ns


async def test_content_is_written_exactly(ctx: ToolContext) -> None:
    await run_tool(WriteTool(), ctx, file_path="x.txt", content="é\r\nno newline")
    assert (ctx.cwd / "x.txt").read_bytes() == "é\r\nno newline".encode()


async def test_refuses_to_overwrite_an_unread_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("keep me")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WriteTool(), ctx, file_path="a.txt", content="lost")
    assert str(failure.value) == (
        f"{path} has not been read yet. Read it with the Read tool first, then overwrite it, "
        "so the change is based on its current contents."
    )
    assert path.read_text() == "keep me"


async def test_refuses_to_overwrite_a_file_changed_since_it_was_read(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("v1")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    path.write_text("v2 from someone else")
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ToolFailure, match="has changed on disk since it was last read"):
        await run_tool(WriteTool(), ctx, file_path="a.txt", content="v3")
    assert path.read_text() == "v2 from someone else"


async def test_overwrites_a_file_that_was_read(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("old")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    output = await run_tool(WriteTool(), ctx, file_path="a.txt", content="new")
    assert text_of(output) == f"Updated {path} (1 line)."
    assert path.read_text() == "new"
    # Its own write counts as seen: a second write needs no new Read.
    await run_tool(WriteTool(), ctx, file_path="a.txt", content="newer")
    assert path.read_text() == "newer"


async def test_refuses_a_directory(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    with pytest.raises(ToolFailure, match="is a directory"):
        await run_tool(WriteTool(), ctx, file_path="d", content="x")


def test_classification_and_permission_subject() -> None:
    tool = WriteTool()
    tool_input = WriteInput(file_path="/tmp/x", content="")
    assert not tool.is_read_only(tool_input)
    assert not tool.is_concurrency_safe(tool_input)
    assert tool.permission_subject(tool_input) == "/tmp/x"
