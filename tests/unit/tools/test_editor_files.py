"""Read, Write and Edit through an editor's buffers (`ToolContext.editor`): the buffer is what
the model reads and changes, the disk is left alone, and every check a disk file gets comes
first."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.edit import EditTool
from stayer.tools.builtin.editor_text import DiskFiles
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.write import WriteTool
from tests.fakes.editor import FakeEditor
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def editor() -> FakeEditor:
    return FakeEditor()


@pytest.fixture
def ctx(tmp_path: Path, editor: FakeEditor) -> ToolContext:
    return ToolContext(cwd=tmp_path.resolve(), editor=editor)


def on_disk_and_open(
    ctx: ToolContext, editor: FakeEditor, name: str, disk: str, buffer: str
) -> Path:
    path = ctx.cwd / name
    path.write_text(disk)
    editor.buffers[path] = buffer
    return path


async def test_read_shows_the_unsaved_buffer_not_the_disk(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "app.py", "saved = 1\n", "unsaved = 2\nmore = 3\n")
    output = await run_tool(ReadTool(), ctx, file_path="app.py")
    assert text_of(output) == "     1\tunsaved = 2\n     2\tmore = 3"
    assert output.data == {"type": "text", "file_path": str(path), "start_line": 1, "num_lines": 2}
    assert editor.reads == [path]


async def test_read_pages_the_buffer_with_offset_and_limit_and_any_line_ends(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    on_disk_and_open(ctx, editor, "a.txt", "", "one\r\ntwo\rthree\nfour\n")
    output = await run_tool(ReadTool(), ctx, file_path="a.txt", offset=2, limit=2)
    assert text_of(output) == (
        "     2\ttwo\n     3\tthree\n\n(Showing lines 2-3; the file goes on. Read again with "
        "offset=4 to continue.)"
    )


async def test_the_editor_is_asked_about_the_file_a_link_names(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    real = on_disk_and_open(ctx, editor, "real.txt", "disk\n", "buffer\n")
    (ctx.cwd / "link.txt").symlink_to(real)
    output = await run_tool(ReadTool(), ctx, file_path="link.txt")
    assert text_of(output) == "     1\tbuffer"
    assert editor.reads == [real]


@pytest.mark.parametrize("name", ["missing.txt", "folder"])
async def test_what_read_refuses_on_the_disk_it_refuses_before_asking_the_editor(
    ctx: ToolContext, editor: FakeEditor, name: str
) -> None:
    (ctx.cwd / "folder").mkdir()
    editor.buffers[ctx.cwd / name] = "a buffer the disk does not back\n"
    with pytest.raises(ToolFailure) as failure:
        await run_tool(ReadTool(), ctx, file_path=name)
    assert str(failure.value).startswith(
        f"File does not exist: {ctx.cwd / name}."
        if name != "folder"
        else f"{ctx.cwd / name} is a directory"
    )
    assert editor.reads == []


async def test_a_binary_file_is_refused_from_its_disk_bytes_without_asking_the_editor(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = ctx.cwd / "blob.txt"
    path.write_bytes(b"abc\0def")
    with pytest.raises(ToolFailure, match="looks like a binary file"):
        await run_tool(ReadTool(), ctx, file_path="blob.txt")
    assert editor.reads == []


async def test_a_buffer_holding_nul_characters_is_refused_as_binary(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    on_disk_and_open(ctx, editor, "a.txt", "text\n", "te\0xt\n")
    with pytest.raises(ToolFailure, match="contains NUL bytes"):
        await run_tool(ReadTool(), ctx, file_path="a.txt")
    with pytest.raises(ToolFailure, match="has not been read yet"):  # nothing was recorded
        await run_tool(WriteTool(), ctx, file_path="a.txt", content="x")


async def test_pages_is_refused_for_a_text_file_before_asking_the_editor(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    on_disk_and_open(ctx, editor, "a.txt", "text\n", "text\n")
    with pytest.raises(ToolFailure, match="pages is only for PDF files"):
        await run_tool(ReadTool(), ctx, file_path="a.txt", pages="1")
    assert editor.reads == []


async def test_notebooks_are_read_and_written_on_the_disk(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    notebook = '{"cells": [{"cell_type": "code", "source": ["x = 1"], "outputs": []}]}'
    on_disk_and_open(ctx, editor, "n.ipynb", notebook, "not what the disk holds")
    output = await run_tool(ReadTool(), ctx, file_path="n.ipynb")
    assert output.data["type"] == "notebook" and output.data["num_cells"] == 1
    await run_tool(WriteTool(), ctx, file_path="n.ipynb", content="{}")
    assert (ctx.cwd / "n.ipynb").read_text() == "{}"
    assert editor.reads == [] and editor.writes == []


async def test_edit_changes_the_buffer_as_read_and_leaves_the_disk_alone(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "app.py", "x = 1\n", "x = 1\ny = 2\n")
    await run_tool(ReadTool(), ctx, file_path="app.py")
    output = await run_tool(
        EditTool(), ctx, file_path="app.py", old_string="y = 2", new_string="y = 3"
    )
    assert text_of(output) == (
        f"Edited {path}: replaced 1 occurrence. The region now reads:\n     1\tx = 1\n     2\ty = 3"
    )
    assert editor.writes == [(path, "x = 1\ny = 3\n")]
    assert path.read_text() == "x = 1\n"
    # its own result counts as read: a second edit needs no Read
    await run_tool(EditTool(), ctx, file_path="app.py", old_string="x = 1", new_string="x = 0")
    assert editor.buffers[path] == "x = 0\ny = 3\n"


async def test_edit_keeps_a_buffers_crlf_line_ends(ctx: ToolContext, editor: FakeEditor) -> None:
    path = on_disk_and_open(ctx, editor, "w.txt", "", "a\r\nb\r\n")
    await run_tool(ReadTool(), ctx, file_path="w.txt")
    await run_tool(EditTool(), ctx, file_path="w.txt", old_string="a\nb", new_string="a\nc")
    assert editor.buffers[path] == "a\r\nc\r\n"


async def test_edit_and_write_refuse_a_file_never_read(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "a.txt", "a\n", "a\n")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(EditTool(), ctx, file_path="a.txt", old_string="a", new_string="b")
    assert str(failure.value) == (
        f"{path} has not been read yet. Read it with the Read tool first, then edit it, so the "
        "change is based on its current contents."
    )
    with pytest.raises(ToolFailure, match="has not been read yet"):
        await run_tool(WriteTool(), ctx, file_path="a.txt", content="b")
    assert editor.writes == []


async def test_a_buffer_changed_since_the_read_is_not_overwritten(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "a.txt", "a\n", "a\n")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    editor.buffers[path] = "a\nthe person typed this\n"
    for tool, raw in (
        (EditTool(), {"old_string": "a", "new_string": "b"}),
        (WriteTool(), {"content": "b\n"}),
    ):
        with pytest.raises(ToolFailure) as failure:
            await run_tool(tool, ctx, file_path="a.txt", **raw)
        assert str(failure.value).startswith(
            f"{path} has changed in the editor since it was last read"
        )
    assert editor.writes == []
    assert editor.buffers[path] == "a\nthe person typed this\n"


async def test_a_changed_disk_under_an_unchanged_buffer_does_not_matter(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "a.txt", "a\n", "buffer\n")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    path.write_text("the disk moved on\n")
    await run_tool(WriteTool(), ctx, file_path="a.txt", content="new\n")
    assert editor.buffers[path] == "new\n"
    assert path.read_text() == "the disk moved on\n"


async def test_write_creates_a_new_file_through_the_editor(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    output = await run_tool(WriteTool(), ctx, file_path="sub/new.txt", content="hello\n")
    path = ctx.cwd / "sub" / "new.txt"
    assert text_of(output) == f"Created {path} (1 line)."
    assert editor.writes == [(path, "hello\n")]
    assert not path.exists()
    await run_tool(EditTool(), ctx, file_path="other.txt", old_string="", new_string="made\n")
    assert editor.buffers[ctx.cwd / "other.txt"] == "made\n"
    assert not (ctx.cwd / "other.txt").exists()


async def test_write_overwrites_a_read_buffer_through_the_editor(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "a.txt", "disk\n", "\ufeffbuffer\n")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    output = await run_tool(WriteTool(), ctx, file_path="a.txt", content="new\n")
    assert text_of(output) == f"Updated {path} (1 line)."
    assert editor.writes == [(path, "new\n")]
    assert path.read_text() == "disk\n"


async def test_an_editor_that_fails_is_a_one_line_error_and_the_disk_is_untouched(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    path = on_disk_and_open(ctx, editor, "a.txt", "disk\n", "buffer\n")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    editor.failure = RuntimeError("connection lost\nwhile writing.")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WriteTool(), ctx, file_path="a.txt", content="new\n")
    assert str(failure.value) == f"The editor could not read {path}: connection lost while writing."
    editor.failure = ToolFailure("The editor refused.")
    with pytest.raises(ToolFailure, match=r"^The editor refused\.$"):
        await run_tool(ReadTool(), ctx, file_path="a.txt")
    assert path.read_text() == "disk\n"


async def test_a_failed_write_is_an_error_and_not_remembered(
    ctx: ToolContext, editor: FakeEditor
) -> None:
    editor.failure = OSError()
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WriteTool(), ctx, file_path="new.txt", content="x\n")
    assert str(failure.value) == f"The editor could not write {ctx.cwd / 'new.txt'}: OSError."
    assert not (ctx.cwd / "new.txt").exists()
    assert ctx.session_state.buffer_reads == {}


async def test_without_an_editor_the_disk_is_read_and_written(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    (tmp_path / "a.txt").write_text("disk\n")
    assert text_of(await run_tool(ReadTool(), ctx, file_path="a.txt")) == "     1\tdisk"
    await run_tool(EditTool(), ctx, file_path="a.txt", old_string="disk", new_string="new")
    assert (tmp_path / "a.txt").read_text() == "new\n"
    assert ctx.session_state.buffer_reads == {}


async def test_disk_files_keep_an_existing_files_encoding_and_make_new_ones_utf8(
    tmp_path: Path,
) -> None:
    disk = DiskFiles()
    old = tmp_path / "old.txt"
    old.write_bytes("café\n".encode("cp1252"))
    assert await disk.read_text(old) == "café\n"
    await disk.write_text(old, "crème\n")
    assert old.read_bytes() == "crème\n".encode("cp1252")
    await disk.write_text(tmp_path / "sub" / "new.txt", "naïve\n")
    assert (tmp_path / "sub" / "new.txt").read_bytes() == "naïve\n".encode()
    with pytest.raises(ToolFailure, match="cannot be stored in windows-1252"):
        await disk.write_text(old, "→\n")
    assert old.read_bytes() == "crème\n".encode("cp1252")
