"""The Glob tool over a real directory tree, through ripgrep."""

from __future__ import annotations

import asyncio
import os
import threading
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


class HeldWalk:
    """A folder of `count` subfolders, each with a FIFO as its `.ignore`: rg opens a folder's
    ignore files before it lists the folder, so each walker thread stops at the first it
    enters. Once one has, the folders no thread has entered yet are moved away, so rg listed
    them and finds them gone: an entry vanishing mid-walk, on cue rather than by a race."""

    def __init__(self, root: Path, count: int = 16) -> None:
        self.root, self.moved = root, root.parent / "moved"
        self.moved.mkdir()
        self.names = [f"run-{index:02}" for index in range(count)]
        for name in self.names:
            (root / name).mkdir(parents=True)
            os.mkfifo(root / name / ".ignore")
        self.entered: dict[str, int] = {}
        self.release = threading.Event()
        self.first = asyncio.Event()
        loop = asyncio.get_running_loop()
        self.threads = [
            threading.Thread(target=self._hold, args=(name, loop), daemon=True)
            for name in self.names
        ]
        for thread in self.threads:
            thread.start()

    def _hold(self, name: str, loop: asyncio.AbstractEventLoop) -> None:
        # opening the write end returns once a reader (rg, or `finish` below) has opened it
        fd = os.open(self._fifo(name), os.O_WRONLY)
        self.entered[name] = fd
        loop.call_soon_threadsafe(self.first.set)
        self.release.wait()
        os.close(fd)

    def _fifo(self, name: str) -> Path:
        where = self.moved if (self.moved / name).exists() else self.root
        return where / name / ".ignore"

    def vanish_the_rest(self) -> list[str]:
        """Move away the folders no walker has entered; let the walk go on."""
        gone = [name for name in self.names if name not in self.entered]
        for name in gone:
            os.rename(self.root / name, self.moved / name)
        self.release.set()
        return gone

    def finish(self) -> None:
        """Unblock the holders rg never reached, and wait for every holder to end."""
        self.release.set()
        for name in self.names:
            if name not in self.entered:
                reader = os.open(self._fifo(name), os.O_RDONLY | os.O_NONBLOCK)
                os.close(reader)
        for thread in self.threads:
            thread.join()


@pytest.mark.parametrize("pattern", ["*/status", "*/nothing-here"])
async def test_entries_that_vanish_during_the_walk_are_skipped(
    tmp_path: Path, pattern: str
) -> None:
    root = tmp_path / "proc"
    kept = _touch(root / "keep" / "status")
    walk = HeldWalk(root)
    try:
        search = asyncio.ensure_future(
            run_tool(GlobTool(), ToolContext(cwd=tmp_path), pattern=pattern, path=str(root))
        )
        await walk.first.wait()
        gone = walk.vanish_the_rest()
        output = await search
    finally:
        walk.finish()
    assert gone  # more folders than rg has walker threads, so some were never entered
    expected = str(kept) if pattern == "*/status" else "No files found"
    assert text_of(output) == expected


async def test_a_glob_of_proc_from_the_root_lists_what_it_can() -> None:
    if not Path("/proc/self/status").is_file():
        pytest.skip("no /proc here")
    ctx = ToolContext(cwd=Path("/"))
    found = await run_tool(GlobTool(), ctx, pattern="/proc/*/status")
    assert f"/proc/{os.getpid()}/status" in text_of(found).splitlines()
    nothing = await run_tool(GlobTool(), ctx, pattern="*/no-such-entry", path="/proc")
    assert text_of(nothing) == "No files found"
