"""The Glob tool over a real directory tree, through ripgrep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.glob import GlobInput, GlobTool
from tests.unit.tools.helpers import run_tool, text_of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def _touch(path: Path, age_s: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    stamp = 1_700_000_000_000_000_000 - age_s * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    return path


async def test_matches_are_absolute_and_newest_first(ctx: ToolContext) -> None:
    old = _touch(ctx.cwd / "old.py", age_s=30)
    new = _touch(ctx.cwd / "pkg" / "new.py", age_s=10)
    middle = _touch(ctx.cwd / "pkg" / "sub" / "middle.py", age_s=20)
    _touch(ctx.cwd / "notes.md")
    output = await run_tool(GlobTool(), ctx, pattern="**/*.py")
    assert text_of(output) == f"{new}\n{middle}\n{old}"
    assert output.data == {
        "filenames": [str(new), str(middle), str(old)],
        "num_files": 3,
        "truncated": False,
    }


async def test_pattern_with_a_slash_is_taken_from_the_search_directory(
    ctx: ToolContext,
) -> None:
    top = _touch(ctx.cwd / "src" / "a.py")
    _touch(ctx.cwd / "src" / "deeper" / "b.py")
    output = await run_tool(GlobTool(), ctx, pattern="src/*.py")
    assert text_of(output) == str(top)


async def test_path_narrows_the_search(ctx: ToolContext) -> None:
    inside = _touch(ctx.cwd / "src" / "a.py")
    _touch(ctx.cwd / "other" / "b.py")
    output = await run_tool(GlobTool(), ctx, pattern="*.py", path="src")
    assert text_of(output) == str(inside)


async def test_absolute_pattern_brings_its_own_directory(ctx: ToolContext) -> None:
    wanted = _touch(ctx.cwd / "src" / "a.py")
    _touch(ctx.cwd / "src" / "deeper" / "a.py")
    output = await run_tool(GlobTool(), ctx, pattern=str(ctx.cwd / "src" / "*.py"))
    assert text_of(output) == str(wanted)


async def test_results_stop_at_100(ctx: ToolContext) -> None:
    for n in range(105):
        _touch(ctx.cwd / f"f{n:03}.txt", age_s=n)
    output = await run_tool(GlobTool(), ctx, pattern="*.txt")
    lines = text_of(output).splitlines()
    assert lines[:2] == [str(ctx.cwd / "f000.txt"), str(ctx.cwd / "f001.txt")]
    assert len(lines) == 101
    assert lines[-1] == (
        "(Showing the 100 most recently modified of 105 matching files. Use a more specific "
        "pattern or path to see the others.)"
    )
    assert output.data["num_files"] == 105
    assert output.data["truncated"] is True


async def test_no_match_says_so(ctx: ToolContext) -> None:
    _touch(ctx.cwd / "a.py")
    output = await run_tool(GlobTool(), ctx, pattern="*.rs")
    assert (text_of(output), output.is_error) == ("No files found", False)


async def test_gitignored_directories_and_hidden_files_are_skipped(ctx: ToolContext) -> None:
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".gitignore").write_text("build/\n")
    kept = _touch(ctx.cwd / "a.py")
    _touch(ctx.cwd / "build" / "gen.py")
    _touch(ctx.cwd / ".hidden.py")
    _touch(ctx.cwd / ".cache" / "c.py")
    output = await run_tool(GlobTool(), ctx, pattern="**/*.py")
    assert text_of(output) == str(kept)


async def test_hidden_paths_are_found_when_the_pattern_names_them(ctx: ToolContext) -> None:
    workflow = _touch(ctx.cwd / ".github" / "workflows" / "ci.yml")
    output = await run_tool(GlobTool(), ctx, pattern=".github/**/*.yml")
    assert text_of(output) == str(workflow)


async def test_missing_directory_is_a_failure(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="it does not exist"):
        await run_tool(GlobTool(), ctx, pattern="*", path="missing")


async def test_bad_glob_is_a_failure_with_rgs_message(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure, match="unclosed alternate group"):
        await run_tool(GlobTool(), ctx, pattern="*.{py")


def test_classification() -> None:
    tool = GlobTool()
    tool_input = GlobInput(pattern="*")
    assert tool.is_read_only(tool_input)
    assert tool.is_concurrency_safe(tool_input)
