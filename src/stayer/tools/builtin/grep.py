"""The Grep tool: search file contents with ripgrep, in Claude Code's three output modes.

Hidden files are searched (version-control directories are not), .gitignore is respected,
lines are previewed at 500 columns, and every mode pages with ``head_limit`` and ``offset``.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Literal

from msgspec import Struct
from pydantic import Field

from stayer.exec import CommandResult
from stayer.exec.globs import glob_literal
from stayer.tools import names
from stayer.tools.base import MAX_RESULT_CHARS, Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import (
    VCS_DIRECTORIES,
    ToolInput,
    newest_first,
    plural,
    ripgrep,
)

OutputMode = Literal["content", "files_with_matches", "count"]

DEFAULT_HEAD_LIMIT = 250
MAX_COLUMNS = 500
PAGE_MAX_CHARS = MAX_RESULT_CHARS - 2_000
"""A page of results stops early at this size; the rest of the cap is room for its notes."""
RG_OUTPUT_MAX_CHARS = 10_000_000
_WARNING_MAX_CHARS = 500

_REGEX_HELP = (
    " The pattern is a Rust regular expression: escape literal characters such as ( ) [ ] "
    "{ } with a backslash."
)


class GrepInput(ToolInput):
    """Input of the Grep tool (Claude Code's field names, flags spelled like rg's)."""

    pattern: str = Field(
        description="The regular expression to search for (ripgrep syntax), e.g. "
        "'log.*Error' or 'def\\s+\\w+'."
    )
    path: str | None = Field(
        default=None,
        description="File or directory to search in. Defaults to the working directory.",
    )
    glob: str | None = Field(
        default=None,
        description="Only search files whose paths match this glob, e.g. '*.js' or "
        "'*.{ts,tsx}' (rg --glob). Several globs may be separated by spaces.",
    )
    type: str | None = Field(
        default=None,
        description="Only search files of this type, e.g. 'py', 'js', 'rust', 'go' "
        "(rg --type). Faster than glob for standard file types.",
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="'files_with_matches' lists matching files (the default); 'content' "
        "shows matching lines (and supports -A/-B/-C/-n); 'count' shows match counts per "
        "file.",
    )
    case_insensitive: bool | None = Field(
        default=None, alias="-i", description="Search case-insensitively (rg -i)."
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description="Show line numbers (rg -n). Content mode only; defaults to true.",
    )
    after: int | None = Field(
        default=None,
        ge=0,
        alias="-A",
        description="Lines to show after each match (rg -A). Content mode only.",
    )
    before: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description="Lines to show before each match (rg -B). Content mode only.",
    )
    context: int | None = Field(
        default=None,
        ge=0,
        alias="-C",
        description="Lines to show before and after each match (rg -C). Content mode only.",
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Return at most this many lines (content), files (files_with_matches) "
        f"or entries (count), after skipping `offset`. Defaults to {DEFAULT_HEAD_LIMIT}; 0 "
        "means no limit (use sparingly: large results flood the context).",
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="Skip this many lines/files/entries before applying head_limit, to page "
        "through large results. Defaults to 0.",
    )
    multiline: bool | None = Field(
        default=None,
        description="Let a match span lines, with '.' matching newlines "
        "(rg -U --multiline-dotall). Defaults to false.",
    )


class _Window(Struct, frozen=True):
    items: list[str]
    total: int
    first: int  # 0-based index of items[0] among all results
    full: bool = False  # stopped at PAGE_MAX_CHARS before head_limit

    @property
    def next_offset(self) -> int | None:
        end = self.first + len(self.items)
        return end if end < self.total else None


class GrepTool(Tool[GrepInput]):
    """Searches file contents with ripgrep."""

    name = names.GREP
    input_model = GrepInput
    subject_kind = "path"
    read_only = True
    # Pages stop at PAGE_MAX_CHARS and say which offset continues them (see `_window`).
    bounds_own_results = True
    max_result_chars = MAX_RESULT_CHARS
    description = (
        "Searches file contents with ripgrep (regular expressions), respecting .gitignore.\n\n"
        "- Always use this tool for content search instead of running grep or rg through "
        "Bash: it is tuned for this harness and its output is paged.\n"
        "- The pattern uses ripgrep's (Rust) regex syntax: 'log.*Error', 'function\\s+\\w+'. "
        "Literal braces need escaping: 'interface\\{\\}' finds 'interface{}'.\n"
        "- Narrow the search with `path`, `glob` (e.g. '*.py', '**/*.{ts,tsx}') or `type` "
        "(e.g. 'py', 'js').\n"
        "- output_mode: 'files_with_matches' (default) lists matching files, newest first; "
        "'content' shows the matching lines (with -n line numbers, -A/-B/-C context); "
        "'count' shows how many lines match in each file.\n"
        "- Patterns match within one line unless multiline is true.\n"
        f"- Results are paged: at most {DEFAULT_HEAD_LIMIT} lines or entries unless "
        "head_limit says otherwise; the result says which offset continues it.\n"
        f"- Lines longer than {MAX_COLUMNS} characters are shortened; Read the file to see "
        "them whole.\n"
        "- For open-ended searches, run several Grep and Glob calls in one turn."
    )

    def is_concurrency_safe(self, tool_input: GrepInput) -> bool:
        return True

    def permission_subject(self, tool_input: GrepInput) -> str | None:
        return tool_input.path

    # Searching a directory reads what is in it: a rule denying `Read(secrets/**)` stops a
    # search of `secrets/` too.
    reads_under = "Read"

    def read_paths(self, tool_input: GrepInput, cwd: Path) -> tuple[str, ...] | None:
        return (tool_input.path or ".",)

    async def call(self, tool_input: GrepInput, ctx: ToolContext) -> ToolOutput:
        root = ctx.resolve(tool_input.path) if tool_input.path else ctx.cwd
        if not root.exists():
            raise ToolFailure(f"Path does not exist: {root}. Give an existing file or directory.")
        try:
            result = await ripgrep(
                _rg_args(tool_input, root, ctx.denied_reads),
                cwd=root if root.is_dir() else root.parent,
                ctx=ctx,
                max_output_chars=RG_OUTPUT_MAX_CHARS,
            )
        except ToolFailure as failure:
            if "regex parse error" in str(failure):
                raise ToolFailure(f"{failure}\n{_REGEX_HELP.strip()}") from None
            raise
        if result.exit_code == 1 or not result.stdout.strip():
            return ToolOutput(
                content="No matches found",
                data={"mode": tool_input.output_mode, "num_files": 0, "filenames": []},
            )
        output = await _render(tool_input, result)
        return _with_warnings(output, result)


def _rg_args(tool_input: GrepInput, root: Path, denied: tuple[str, ...]) -> list[str]:
    args = ["--hidden", "--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
    for name in VCS_DIRECTORIES:
        args += ["--glob", f"!{name}"]
    if tool_input.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if tool_input.case_insensitive:
        args.append("--ignore-case")
    args += _mode_args(tool_input)
    if tool_input.type:
        args += ["--type", tool_input.type]
    for glob in split_globs(tool_input.glob or ""):
        args += ["--glob", glob]
    args += excluded_globs(denied, root.resolve())
    return [*args, "--regexp", tool_input.pattern, "--", str(root)]


def _mode_args(tool_input: GrepInput) -> list[str]:
    if tool_input.output_mode == "files_with_matches":
        return ["--files-with-matches"]
    # Sorting costs rg its parallelism, but the model gets the same page for the same query.
    if tool_input.output_mode == "count":
        return ["--count", "--with-filename", "--sort", "path"]
    args = ["--no-heading", "--sort", "path"]
    args.append("--no-line-number" if tool_input.line_numbers is False else "--line-number")
    if tool_input.context is not None:
        args += ["--context", str(tool_input.context)]
    else:
        if tool_input.before is not None:
            args += ["--before-context", str(tool_input.before)]
        if tool_input.after is not None:
            args += ["--after-context", str(tool_input.after)]
    return args


def excluded_globs(denied: tuple[str, ...], root: Path) -> list[str]:
    """rg arguments that leave out of a search under `root` what deny rules forbid reading
    (case-folded, as deny rules compare paths)."""
    base = glob_literal(str(root)).rstrip("/") + "/"
    args: list[str] = []
    for pattern in denied:
        if pattern.startswith(base):
            args += ["--iglob", "!" + pattern[len(base) :]]
            continue
        above, any_depth, tail = pattern.partition("/**/")
        if any_depth and base.startswith(above.rstrip("/") + "/"):  # a name at any depth
            args += ["--iglob", "!**/" + tail]
    return args


def split_globs(text: str) -> list[str]:
    """Globs from a space- or comma-separated list, leaving brace alternations whole."""
    globs: list[str] = []
    for word in text.split():
        if "{" in word and "}" in word:
            globs.append(word)
        else:
            globs += [part for part in word.split(",") if part]
    return globs


def _window(items: list[str], tool_input: GrepInput) -> _Window:
    """The page `offset` and `head_limit` ask for, stopping early where it would pass
    PAGE_MAX_CHARS (a page always holds at least one item)."""
    first = tool_input.offset or 0
    limit = DEFAULT_HEAD_LIMIT if tool_input.head_limit is None else tool_input.head_limit
    end = len(items) if limit == 0 else min(len(items), first + limit)
    size = 0
    for index in range(first, end):
        size += len(items[index]) + 1
        if size > PAGE_MAX_CHARS and index > first:
            return _Window(items[first:index], len(items), first, full=True)
    return _Window(items[first:end], len(items), first)


def _page_note(window: _Window, noun: str, nouns: str) -> str:
    if not window.items:
        return (
            f"No results at offset {window.first}: there are only "
            f"{plural(window.total, noun, nouns)}. Use a smaller offset."
        )
    if window.next_offset is None:
        return ""
    last = window.first + len(window.items)
    why = f", as many as fit in {PAGE_MAX_CHARS} characters" if window.full else ""
    return (
        f"(Showing {nouns} {window.first + 1}-{last} of {window.total}{why}. "
        f"Pass offset={last} to see more.)"
    )


async def _render(tool_input: GrepInput, result: CommandResult) -> ToolOutput:
    lines = result.stdout.splitlines()
    if tool_input.output_mode == "count":
        return _count_output(lines, tool_input)
    if tool_input.output_mode == "content":
        return _content_output(lines, tool_input)
    files = await asyncio.to_thread(newest_first, [Path(line) for line in lines if line])
    return _files_output([str(path) for path in files], tool_input)


def _files_output(files: list[str], tool_input: GrepInput) -> ToolOutput:
    window = _window(files, tool_input)
    parts = [
        f"Found {plural(len(files), 'file')}",
        *window.items,
        _page_note(window, "file", "files"),
    ]
    return ToolOutput(
        content="\n".join(part for part in parts if part),
        data={"mode": "files_with_matches", "num_files": len(files), "filenames": window.items},
    )


_COUNT_LINE = re.compile(r"^(?P<path>.*):(?P<count>\d+)$")


def _count_output(lines: list[str], tool_input: GrepInput) -> ToolOutput:
    entries: list[str] = []
    total = 0
    for line in lines:
        match = _COUNT_LINE.match(line)
        if match:  # anything else is a fragment of a listing too large to keep whole
            entries.append(line)
            total += int(match["count"])
    window = _window(entries, tool_input)
    summary = f"Found {plural(total, 'matching line')} across {plural(len(entries), 'file')}."
    listing = "\n".join(
        part for part in (*window.items, _page_note(window, "entry", "entries")) if part
    )
    return ToolOutput(
        content=f"{listing}\n\n{summary}" if listing else summary,
        data={"mode": "count", "num_files": len(entries), "num_matches": total},
    )


def _content_output(lines: list[str], tool_input: GrepInput) -> ToolOutput:
    window = _window(lines, tool_input)
    text = "\n".join(window.items)
    note = _page_note(window, "line", "lines")
    text = "\n".join(part for part in (text, note) if part)
    return ToolOutput(
        content=text,
        data={"mode": "content", "num_lines": len(window.items), "content": text},
    )


def _with_warnings(output: ToolOutput, result: CommandResult) -> ToolOutput:
    notes: list[str] = []
    if result.exit_code == 2 and result.stderr.strip():
        first = result.stderr.strip().splitlines()[0].removeprefix("rg: ")[:_WARNING_MAX_CHARS]
        notes.append(f"(Some paths could not be searched: {first})")
    if result.truncated:
        notes.append("(The search produced too much output to keep in full; narrow it.)")
    if not notes or not isinstance(output.content, str):
        return output
    return ToolOutput(
        content="\n".join([output.content, *notes]), is_error=output.is_error, data=output.data
    )
