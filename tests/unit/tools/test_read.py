"""The Read tool on real files: numbering, paging, edge cases, images, read tracking."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from stayer.messages import ImageBlock
from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.read import ReadInput, ReadTool
from tests.unit.tools.helpers import run_tool, text_of

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_lines_are_numbered_like_cat_n(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("alpha\n\tbeta\n")
    output = await run_tool(ReadTool(), ctx, file_path=str(ctx.cwd / "a.txt"))
    assert text_of(output) == "     1\talpha\n     2\t\tbeta"
    assert not output.is_error


async def test_relative_paths_resolve_against_the_working_directory(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("x")
    output = await run_tool(ReadTool(), ctx, file_path="a.txt")
    assert text_of(output) == "     1\tx"


async def test_offset_and_limit_select_a_page(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    output = await run_tool(ReadTool(), ctx, file_path="a.txt", offset=3, limit=2)
    assert text_of(output) == (
        "     3\tline 3\n     4\tline 4\n\n"
        "(Showing lines 3-4; the file goes on. Read again with offset=5 to continue.)"
    )


async def test_last_page_has_no_continuation_note(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("a\nb\nc\n")
    output = await run_tool(ReadTool(), ctx, file_path="a.txt", offset=2)
    assert text_of(output) == "     2\tb\n     3\tc"


async def test_default_page_is_2000_lines(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("x\n" * 2500)
    text = text_of(await run_tool(ReadTool(), ctx, file_path="a.txt"))
    assert "  2000\tx\n\n(Showing lines 1-2000;" in text
    assert "2001\t" not in text


async def test_a_page_fits_the_result_cap_when_line_numbers_grow_past_six_digits(
    ctx: ToolContext,
) -> None:
    # Lines 999,000-999,999 take 6 columns for their number, the rest 7; all are empty.
    (ctx.cwd / "a.txt").write_bytes(b"\n" * 1_040_000)
    tool = ReadTool()
    text = text_of(await run_tool(tool, ctx, file_path="a.txt", offset=999_000, limit=50_000))
    body, note = text.split("\n\n")
    last = int(body.rsplit("\n", 1)[1].split("\t")[0])
    assert body.split("\n") == [f"{n:>6}\t" for n in range(999_000, last + 1)]
    assert note == (
        f"(Stopped after line {last} to keep this under {tool.max_result_chars} characters; the "
        f"file goes on. Read again with offset={last + 1} to continue.)"
    )
    assert len(text) <= tool.max_result_chars < len(text) + len(f"\n{last + 1}\t")


async def test_long_lines_are_cut(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("y" * 5000 + "\nshort\n")
    text = text_of(await run_tool(ReadTool(), ctx, file_path="a.txt"))
    first, second = text.split("\n")
    assert first == "     1\t" + "y" * 2000 + " [... line cut, 3000 more characters]"
    assert second == "     2\tshort"


async def test_crlf_is_shown_without_carriage_returns(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    assert text_of(await run_tool(ReadTool(), ctx, file_path="a.txt")) == "     1\tone\n     2\ttwo"


async def test_empty_file_says_so(ctx: ToolContext) -> None:
    (ctx.cwd / "empty.txt").write_text("")
    output = await run_tool(ReadTool(), ctx, file_path="empty.txt")
    assert text_of(output) == f"The file {ctx.cwd / 'empty.txt'} exists but is empty."
    assert not output.is_error


async def test_offset_past_the_end_says_how_long_the_file_is(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("a\nb\nc\n")
    output = await run_tool(ReadTool(), ctx, file_path="a.txt", offset=10)
    assert text_of(output) == (
        f"The file {ctx.cwd / 'a.txt'} has only 3 lines, so there is nothing at offset 10. "
        "Use a smaller offset."
    )


async def test_missing_file_suggests_similar_names(ctx: ToolContext) -> None:
    (ctx.cwd / "config.yaml").write_text("")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(ReadTool(), ctx, file_path="config.yml")
    assert str(failure.value) == (
        f"File does not exist: {ctx.cwd / 'config.yml'}. Did you mean "
        f"{ctx.cwd / 'config.yaml'}? The working directory is {ctx.cwd}."
    )


async def test_missing_directory_is_named(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match=r"Its directory .*nowhere does not exist either"):
        await run_tool(ReadTool(), ctx, file_path="nowhere/a.txt")


async def test_directory_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "src").mkdir()
    with pytest.raises(ToolFailure, match="is a directory, not a file"):
        await run_tool(ReadTool(), ctx, file_path="src")


async def test_binary_file_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "blob").write_bytes(b"abc\x00def")
    with pytest.raises(ToolFailure, match="looks like a binary file \\(it contains NUL bytes\\)"):
        await run_tool(ReadTool(), ctx, file_path="blob")


async def test_binary_extension_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "a.zip").write_bytes(b"PK")
    with pytest.raises(ToolFailure, match=r"its extension is \.zip"):
        await run_tool(ReadTool(), ctx, file_path="a.zip")


async def test_image_becomes_an_image_block(ctx: ToolContext) -> None:
    (ctx.cwd / "dot.png").write_bytes(PNG_1X1)
    output = await run_tool(ReadTool(), ctx, file_path="dot.png")
    assert output.content == (
        ImageBlock(media_type="image/png", data=base64.b64encode(PNG_1X1).decode()),
    )


async def test_image_type_comes_from_its_bytes(ctx: ToolContext) -> None:
    (ctx.cwd / "really-a-png.jpg").write_bytes(PNG_1X1)
    output = await run_tool(ReadTool(), ctx, file_path="really-a-png.jpg")
    assert isinstance(output.content, tuple)
    block = output.content[0]
    assert isinstance(block, ImageBlock)
    assert block.media_type == "image/png"


async def test_reading_records_the_modification_time(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("x")
    await run_tool(ReadTool(), ctx, file_path="a.txt")
    assert ctx.read_files == {path.resolve(): path.stat().st_mtime_ns}


def test_classification_and_permission_subject() -> None:
    tool = ReadTool()
    tool_input = ReadInput(file_path="/etc/hosts")
    assert tool.is_read_only(tool_input)
    assert tool.is_concurrency_safe(tool_input)
    assert tool.permission_subject(tool_input) == "/etc/hosts"
