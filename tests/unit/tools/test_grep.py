"""The Grep tool over real files, through the bundled ripgrep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stayer.tools.base import MAX_RESULT_CHARS, ToolContext, ToolFailure
from stayer.tools.builtin.grep import PAGE_MAX_CHARS, GrepInput, GrepTool, split_globs
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def _write(path: Path, text: str, age_s: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = 1_700_000_000_000_000_000 - age_s * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    return path


@pytest.fixture
def tree(ctx: ToolContext) -> dict[str, Path]:
    return {
        "app": _write(ctx.cwd / "app.py", "import os\n\ndef main():\n    TODO = 1\n", age_s=20),
        "lib": _write(ctx.cwd / "lib" / "util.py", "# todo: tidy\nx = 1\n# TODO again\n", 10),
        "readme": _write(ctx.cwd / "README.md", "Nothing to do here.\n", age_s=30),
    }


async def test_files_with_matches_is_the_default_newest_first(
    ctx: ToolContext, tree: dict[str, Path]
) -> None:
    output = await run_tool(GrepTool(), ctx, pattern="TODO")
    assert text_of(output) == f"Found 2 files\n{tree['lib']}\n{tree['app']}"
    assert output.data["num_files"] == 2


async def test_content_mode_shows_numbered_lines(ctx: ToolContext, tree: dict[str, Path]) -> None:
    output = await run_tool(GrepTool(), ctx, pattern="TODO", output_mode="content")
    assert text_of(output) == (f"{tree['app']}:4:    TODO = 1\n{tree['lib']}:3:# TODO again")


async def test_line_numbers_can_be_turned_off(ctx: ToolContext, tree: dict[str, Path]) -> None:
    output = await run_tool(
        GrepTool(), ctx, pattern="TODO", output_mode="content", path="lib", **{"-n": False}
    )
    assert text_of(output) == f"{tree['lib']}:# TODO again"


async def test_case_insensitive(ctx: ToolContext, tree: dict[str, Path]) -> None:
    output = await run_tool(
        GrepTool(), ctx, pattern="todo", path="lib", output_mode="content", **{"-i": True}
    )
    assert text_of(output) == f"{tree['lib']}:1:# todo: tidy\n{tree['lib']}:3:# TODO again"


async def test_context_lines(ctx: ToolContext, tree: dict[str, Path]) -> None:
    single = str(tree["app"])
    after = await run_tool(
        GrepTool(), ctx, pattern="def", path=single, output_mode="content", **{"-A": 1}
    )
    assert text_of(after) == "3:def main():\n4-    TODO = 1"
    before = await run_tool(
        GrepTool(), ctx, pattern="def", path=single, output_mode="content", **{"-B": 1}
    )
    assert text_of(before) == "2-\n3:def main():"
    around = await run_tool(
        GrepTool(), ctx, pattern="def", path=single, output_mode="content", **{"-C": 1}
    )
    assert text_of(around) == "2-\n3:def main():\n4-    TODO = 1"


async def test_count_mode_lists_counts_and_a_total(ctx: ToolContext, tree: dict[str, Path]) -> None:
    output = await run_tool(GrepTool(), ctx, pattern="(?i)todo", output_mode="count")
    assert text_of(output) == (
        f"{tree['app']}:1\n{tree['lib']}:2\n\nFound 3 matching lines across 2 files."
    )
    assert output.data == {"mode": "count", "num_files": 2, "num_matches": 3}


async def test_glob_and_type_filter_files(ctx: ToolContext, tree: dict[str, Path]) -> None:
    by_glob = await run_tool(GrepTool(), ctx, pattern="(?i)to ?do", glob="*.md")
    assert text_of(by_glob) == f"Found 1 file\n{tree['readme']}"
    by_type = await run_tool(GrepTool(), ctx, pattern="(?i)to ?do", type="md")
    assert text_of(by_type) == f"Found 1 file\n{tree['readme']}"


async def test_head_limit_and_offset_page_through_results(ctx: ToolContext) -> None:
    path = _write(ctx.cwd / "many.txt", "".join(f"hit {n}\n" for n in range(1, 8)))
    first = await run_tool(
        GrepTool(), ctx, pattern="hit", output_mode="content", path=str(path), head_limit=3
    )
    assert text_of(first) == (
        "1:hit 1\n2:hit 2\n3:hit 3\n(Showing lines 1-3 of 7. Pass offset=3 to see more.)"
    )
    last = await run_tool(
        GrepTool(),
        ctx,
        pattern="hit",
        output_mode="content",
        path=str(path),
        head_limit=3,
        offset=6,
    )
    assert text_of(last) == "7:hit 7"
    past = await run_tool(
        GrepTool(), ctx, pattern="hit", output_mode="content", path=str(path), offset=9
    )
    assert text_of(past) == "No results at offset 9: there are only 7 lines. Use a smaller offset."


async def test_a_page_of_long_lines_fits_the_result_cap_and_says_where_to_go_on(
    ctx: ToolContext,
) -> None:
    lines = [f"hit {n:03d} " + "z" * 470 for n in range(1, 301)]
    path = _write(ctx.cwd / "wide.txt", "".join(line + "\n" for line in lines))
    numbered = [f"{n}:{line}" for n, line in enumerate(lines, start=1)]
    shown: list[str] = []
    offset = 0
    for _ in range(3):
        page = text_of(
            await run_tool(
                GrepTool(),
                ctx,
                pattern="hit",
                output_mode="content",
                path=str(path),
                head_limit=0,
                offset=offset,
            )
        )
        assert len(page) <= MAX_RESULT_CHARS
        body, _, note = page.rpartition("\n")
        if not note.startswith("(Showing"):
            shown += page.split("\n")
            break
        shown += body.split("\n")
        assert note == (
            f"(Showing lines {offset + 1}-{len(shown)} of 300, as many as fit in "
            f"{PAGE_MAX_CHARS} characters. Pass offset={len(shown)} to see more.)"
        )
        offset = len(shown)
    assert shown == numbered


async def test_multiline_matches_across_lines(ctx: ToolContext, tree: dict[str, Path]) -> None:
    plain = await run_tool(GrepTool(), ctx, pattern="main.*TODO")
    assert text_of(plain) == "No matches found"
    spanning = await run_tool(GrepTool(), ctx, pattern="main.*TODO", multiline=True)
    assert text_of(spanning) == f"Found 1 file\n{tree['app']}"


async def test_pattern_may_start_with_a_dash(ctx: ToolContext) -> None:
    path = _write(ctx.cwd / "flags.txt", "use --force here\n")
    output = await run_tool(GrepTool(), ctx, pattern="--force")
    assert text_of(output) == f"Found 1 file\n{path}"


async def test_hidden_files_are_searched_but_not_git(ctx: ToolContext) -> None:
    hidden = _write(ctx.cwd / ".env.example", "SECRET_NAME=x\n")
    _write(ctx.cwd / ".git" / "config", "SECRET_NAME=y\n")
    output = await run_tool(GrepTool(), ctx, pattern="SECRET_NAME")
    assert text_of(output) == f"Found 1 file\n{hidden}"


async def test_no_match_is_not_an_error(ctx: ToolContext, tree: dict[str, Path]) -> None:
    output = await run_tool(GrepTool(), ctx, pattern="absent-everywhere")
    assert (text_of(output), output.is_error) == ("No matches found", False)


async def test_bad_regex_is_a_failure_with_rgs_message(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure) as failure:
        await run_tool(GrepTool(), ctx, pattern="foo(")
    message = str(failure.value)
    assert message.startswith("ripgrep failed: regex parse error:")
    assert "unclosed group" in message
    assert message.endswith("escape literal characters such as ( ) [ ] { } with a backslash.")


async def test_unknown_type_is_a_failure(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="unrecognized file type: nosuchtype"):
        await run_tool(GrepTool(), ctx, pattern="x", type="nosuchtype")


async def test_missing_path_is_a_failure(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="Path does not exist"):
        await run_tool(GrepTool(), ctx, pattern="x", path="missing")


def test_globs_split_on_spaces_and_commas_but_keep_braces() -> None:
    assert split_globs("*.py *.md,*.txt src/*.{ts,tsx}") == [
        "*.py",
        "*.md",
        "*.txt",
        "src/*.{ts,tsx}",
    ]


def test_classification() -> None:
    tool = GrepTool()
    tool_input = GrepInput(pattern="x")
    assert tool.is_read_only(tool_input)
    assert tool.is_concurrency_safe(tool_input)
