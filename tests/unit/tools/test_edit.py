"""The Edit tool: exact replacements, uniqueness, staleness, line endings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.edit import EditInput, EditTool
from stayer.tools.builtin.read import ReadTool
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def _read_file(ctx: ToolContext, name: str, content: str | bytes) -> Path:
    path = ctx.cwd / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    await run_tool(ReadTool(), ctx, file_path=name)
    return path


async def test_replaces_a_unique_string_and_shows_the_region(ctx: ToolContext) -> None:
    lines = "".join(f"line {n}\n" for n in range(1, 21))
    path = await _read_file(ctx, "a.txt", lines)
    output = await run_tool(
        EditTool(), ctx, file_path="a.txt", old_string="line 10\n", new_string="ten\nTEN\n"
    )
    assert path.read_text() == lines.replace("line 10\n", "ten\nTEN\n")
    assert text_of(output) == (
        f"Edited {path}: replaced 1 occurrence. The region now reads:\n"
        "     6\tline 6\n     7\tline 7\n     8\tline 8\n     9\tline 9\n"
        "    10\tten\n    11\tTEN\n"
        "    12\tline 11\n    13\tline 12\n    14\tline 13\n    15\tline 14"
    )
    assert output.data == {"file_path": str(path), "replacements": 1}


async def test_several_matches_without_replace_all_fail(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "a.py", "x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(EditTool(), ctx, file_path="a.py", old_string="x = 1", new_string="x = 2")
    assert str(failure.value) == (
        f"old_string occurs 3 times in {path}, but replace_all is false. Include more of the "
        "surrounding lines in old_string so it matches exactly one place, or set replace_all "
        "to true to change every occurrence."
    )
    assert path.read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_replace_all_changes_every_occurrence(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "a.py", "foo()\nbar()\nfoo()\n")
    output = await run_tool(
        EditTool(), ctx, file_path="a.py", old_string="foo", new_string="baz", replace_all=True
    )
    assert path.read_text() == "baz()\nbar()\nbaz()\n"
    assert text_of(output).startswith(
        f"Edited {path}: replaced 2 occurrences (the first is shown)."
    )


async def test_missing_string_fails_with_guidance(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "a.py", "def f():\n    return 1\n")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(EditTool(), ctx, file_path="a.py", old_string="return 2", new_string="x")
    assert str(failure.value) == (
        f"old_string was not found in {path}. It must match the file exactly, including "
        "whitespace and indentation; Read the file again and copy the current text."
    )


async def test_whitespace_near_miss_is_pointed_out(ctx: ToolContext) -> None:
    await _read_file(ctx, "a.py", "def f():\n    return 1\n")
    with pytest.raises(ToolFailure, match="does occur if leading and trailing whitespace"):
        await run_tool(EditTool(), ctx, file_path="a.py", old_string="  return 1  ", new_string="x")


async def test_unread_file_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("hello")
    with pytest.raises(ToolFailure, match="has not been read yet"):
        await run_tool(EditTool(), ctx, file_path="a.txt", old_string="hello", new_string="bye")


async def test_file_changed_since_read_is_refused(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "a.txt", "hello")
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ToolFailure, match="has changed on disk since it was last read"):
        await run_tool(EditTool(), ctx, file_path="a.txt", old_string="hello", new_string="bye")


async def test_consecutive_edits_need_no_new_read(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "a.txt", "one two")
    await run_tool(EditTool(), ctx, file_path="a.txt", old_string="one", new_string="1")
    await run_tool(EditTool(), ctx, file_path="a.txt", old_string="two", new_string="2")
    assert path.read_text() == "1 2"


async def test_crlf_line_endings_are_preserved(ctx: ToolContext) -> None:
    path = await _read_file(ctx, "win.txt", b"a\r\nb\r\nc\r\n")
    await run_tool(EditTool(), ctx, file_path="win.txt", old_string="a\nb", new_string="x\ny\nz")
    assert path.read_bytes() == b"x\r\ny\r\nz\r\nc\r\n"


async def test_identical_strings_are_refused(ctx: ToolContext) -> None:
    await _read_file(ctx, "a.txt", "same")
    with pytest.raises(ToolFailure, match="identical"):
        await run_tool(EditTool(), ctx, file_path="a.txt", old_string="same", new_string="same")


async def test_empty_old_string_creates_a_missing_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "new" / "file.txt"
    output = await run_tool(EditTool(), ctx, file_path=str(path), old_string="", new_string="hi\n")
    assert text_of(output) == f"Created {path} (1 line)."
    assert path.read_text() == "hi\n"


async def test_empty_old_string_on_a_file_with_content_fails(ctx: ToolContext) -> None:
    await _read_file(ctx, "a.txt", "content")
    with pytest.raises(ToolFailure, match="already has content"):
        await run_tool(EditTool(), ctx, file_path="a.txt", old_string="", new_string="x")


async def test_missing_file_with_old_string_fails(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="File does not exist"):
        await run_tool(EditTool(), ctx, file_path="nope.txt", old_string="a", new_string="b")


def test_classification_and_permission_subject() -> None:
    tool = EditTool()
    tool_input = EditInput(file_path="a.py", old_string="a", new_string="b")
    assert not tool.is_read_only(tool_input)
    assert not tool.is_concurrency_safe(tool_input)
    assert tool.permission_subject(tool_input) == "a.py"
