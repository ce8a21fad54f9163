"""The Glob tool: find files by name pattern, newest first, through ``rg --files``.

Matching follows ripgrep's glob rules: a pattern without a slash matches file names at any
depth; one with a slash is taken from the search directory. Directories that .gitignore
excludes are not entered, and hidden files and directories are left out unless the pattern
itself names one (such as ``.github/**/*.yml``). Entries that vanish while the walk runs (a
process ending under /proc) or that are closed to us are skipped, not a failure of the search.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from stayer.tools import names
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import VCS_DIRECTORIES, ToolInput, newest_first, ripgrep
from stayer.tools.builtin.grep import excluded_globs

MAX_RESULTS = 100
LISTING_MAX_CHARS = 10_000_000
"""How much of rg's listing we hold in memory before dropping its middle."""

_GLOB_MAGIC = frozenset("*?[{")


class GlobInput(ToolInput):
    """Input of the Glob tool (Claude Code's field names)."""

    pattern: str = Field(
        description="The glob to match file paths against, e.g. '**/*.py', '*.md' or "
        "'src/**/*.{ts,tsx}'."
    )
    path: str | None = Field(
        default=None,
        description="The directory to search in. Leave it out to search the working "
        "directory; do not pass 'undefined' or 'null'.",
    )


class GlobTool(Tool[GlobInput]):
    """Lists files matching a glob, most recently modified first."""

    name = names.GLOB
    input_model = GlobInput
    subject_kind = "path"
    read_only = True
    description = (
        "Finds files by name with a glob pattern, such as '**/*.py' or 'src/**/*.{ts,tsx}', "
        "and lists their absolute paths, most recently modified first.\n\n"
        "- Fast on any size of codebase. Use it to locate files by name; use Grep to search "
        "their contents.\n"
        "- A pattern without '/' matches file names at any depth ('*.py' finds every Python "
        "file); a pattern with '/' is taken from the search directory.\n"
        "- Files in directories ignored by .gitignore, and hidden files, are skipped unless "
        "the pattern names a hidden path itself (e.g. '.github/**/*.yml').\n"
        f"- At most {MAX_RESULTS} paths are returned; narrow the pattern or path if the result "
        "says it was cut.\n"
        "- For open-ended searches that may take several rounds of globbing and grepping, "
        "run several searches in one turn."
    )

    def is_concurrency_safe(self, tool_input: GlobInput) -> bool:
        return True

    def permission_subject(self, tool_input: GlobInput) -> str | None:
        return tool_input.path

    # Searching a directory reads what is in it: a rule denying `Read(secrets/**)` stops a
    # search of `secrets/` too.
    reads_under = "Read"

    def read_paths(self, tool_input: GlobInput, cwd: Path) -> tuple[str, ...] | None:
        """The folder searched: the one an absolute pattern starts in, else `path`."""
        if Path(tool_input.pattern).is_absolute():
            return (str(_absolute_root(tool_input.pattern)[0]),)
        return (tool_input.path or ".",)

    async def call(self, tool_input: GlobInput, ctx: ToolContext) -> ToolOutput:
        root, pattern = _root_and_pattern(tool_input, ctx)
        if not root.is_dir():
            what = "is not a directory" if root.exists() else "does not exist"
            raise ToolFailure(f"Cannot search {root}: it {what}. Give a directory as path.")
        hidden = _names_hidden_path(pattern)
        args = ["--files", "--glob", pattern, *excluded_globs(ctx.denied_reads, root.resolve())]
        if hidden:
            args.append("--hidden")
            for name in VCS_DIRECTORIES:
                args += ["--glob", f"!{name}"]
        result = await ripgrep(
            args, cwd=root, ctx=ctx, max_output_chars=LISTING_MAX_CHARS, skip_unreadable=True
        )
        relative = [line for line in result.stdout.splitlines() if line]
        if not hidden:
            # rg lets a matching glob override its hidden-file rule; put that rule back.
            relative = [line for line in relative if not _is_hidden(line)]
        files = await asyncio.to_thread(newest_first, [root / line for line in relative])
        return _output(files, cut=result.truncated)


def _root_and_pattern(tool_input: GlobInput, ctx: ToolContext) -> tuple[Path, str]:
    """The directory to search and the pattern relative to it.

    An absolute pattern brings its own directory: its leading parts without glob
    characters become the root, and the rest is anchored there.
    """
    pattern = tool_input.pattern
    if not Path(pattern).is_absolute():
        root = ctx.resolve(tool_input.path) if tool_input.path else ctx.cwd
        return root, pattern.removeprefix("./")
    return _absolute_root(pattern)


def _absolute_root(pattern: str) -> tuple[Path, str]:
    """An absolute pattern's leading folders without glob characters, and the rest."""
    parts = Path(pattern).parts
    literal = 1  # the anchor ("/") is never a glob
    while literal < len(parts) - 1 and not _GLOB_MAGIC & set(parts[literal]):
        literal += 1
    return Path(*parts[:literal]), "/" + "/".join(parts[literal:])


def _names_hidden_path(pattern: str) -> bool:
    return any(part.startswith(".") and part not in (".", "..") for part in pattern.split("/"))


def _is_hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


def _output(files: list[Path], *, cut: bool) -> ToolOutput:
    shown = files[:MAX_RESULTS]
    data = {
        "filenames": [str(path) for path in shown],
        "num_files": len(files),
        "truncated": len(files) > MAX_RESULTS or cut,
    }
    if not files:
        return ToolOutput(content="No files found", data=data)
    text = "\n".join(str(path) for path in shown)
    if len(files) > MAX_RESULTS:
        text += (
            f"\n(Showing the {MAX_RESULTS} most recently modified of {len(files)} matching "
            "files. Use a more specific pattern or path to see the others.)"
        )
    if cut:
        text += "\n(The listing was too large to read in full; narrow the pattern or path.)"
    return ToolOutput(content=text, data=data)
