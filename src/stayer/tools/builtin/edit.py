"""The Edit tool: replace an exact piece of text in a file the model has read.

Line endings are kept: in a file whose lines all end in CRLF, the model's text (which Read showed
without carriage returns) is matched and written back with CRLF. So is the encoding: the file is
decoded as Read decoded it and written back in the same encoding, or not at all (`textfile`).
When an editor drives the session, a text file's buffer is what is edited (`editor_text`).
"""

from __future__ import annotations

import re
from pathlib import Path

from msgspec import Struct
from pydantic import Field

from stayer.tools import names
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import (
    ToolInput,
    clip_line,
    count_lines,
    number_lines,
    plural,
)
from stayer.tools.builtin.editor_text import load_for_change, store
from stayer.tools.builtin.textfile import TextEncoding, kept_note

SNIPPET_CONTEXT_LINES = 4
SNIPPET_MAX_LINES = 40

_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


class EditInput(ToolInput):
    """Input of the Edit tool (Claude Code's field names)."""

    file_path: str = Field(
        description="Absolute path of the file to change (a relative path is taken from the "
        "working directory)."
    )
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation, without "
        "Read's line-number prefixes. Empty only to create a new file (or fill an empty one)."
    )
    new_string: str = Field(description="The text to put in its place (must differ).")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence of old_string. By default old_string must occur "
        "exactly once.",
    )


class _Edit(Struct, frozen=True):
    text: str  # the new contents with "\n" line ends, for the snippet
    on_disk: str  # the new contents as written, original line ends restored
    count: int
    at: int  # where the first replacement starts in `text`
    new: str  # new_string with "\n" line ends


class EditTool(Tool[EditInput]):
    """Replaces exact text in a file, once or everywhere."""

    name = names.EDIT
    input_model = EditInput
    subject_kind = "path"
    description = (
        "Replaces exact text in a file: old_string becomes new_string.\n\n"
        "- Read the file first; an edit to a file that was not read, or that changed since, "
        "is refused.\n"
        "- Copy old_string exactly as the file has it, with the same indentation, and without "
        "the line-number prefix Read shows (everything up to and including its tab).\n"
        "- old_string must occur exactly once. If it occurs more often, add surrounding lines "
        "to make it unique, or set replace_all to change every occurrence (useful for "
        "renaming).\n"
        "- Keep edits small and targeted; use Write only to replace a whole file.\n"
        "- The file keeps its encoding and its line endings.\n"
        "- An empty old_string creates the file with new_string as its contents, if it does "
        "not exist yet.\n"
        "- The result shows the edited region with line numbers."
    )

    def permission_subject(self, tool_input: EditInput) -> str | None:
        return tool_input.file_path

    async def call(self, tool_input: EditInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(tool_input.file_path)
        old, new = tool_input.old_string, tool_input.new_string
        if old == new:
            raise ToolFailure(
                "old_string and new_string are identical, so there is nothing to change."
            )
        if path.is_dir():
            raise ToolFailure(f"{path} is a directory; give the path of a file to edit.")
        if not path.exists():
            return await _create(ctx, path, old, new)
        current, encoding = await load_for_change(ctx, path, "edit")
        if not old:
            return await _fill_empty(ctx, path, current, new, encoding)
        edit = _apply(path, current, old, new, replace_all=tool_input.replace_all)
        await store(ctx, path, edit.on_disk, encoding)
        how = plural(edit.count, "occurrence")
        shown = " (the first is shown)" if edit.count > 1 else ""
        return ToolOutput(
            content=f"Edited {path}: replaced {how}{shown}.{kept_note(encoding)} The region now "
            "reads:\n" + _snippet(edit),
            data={"file_path": str(path), "replacements": edit.count},
        )


async def _create(ctx: ToolContext, path: Path, old: str, new: str) -> ToolOutput:
    if old:
        raise ToolFailure(
            f"File does not exist: {path}. To create it, use Write, or Edit with an empty "
            "old_string."
        )
    await store(ctx, path, new)
    return ToolOutput(
        content=f"Created {path} ({plural(count_lines(new), 'line')}).",
        data={"file_path": str(path), "replacements": 0},
    )


async def _fill_empty(
    ctx: ToolContext, path: Path, current: str, new: str, encoding: TextEncoding
) -> ToolOutput:
    if current.strip():
        raise ToolFailure(
            f"old_string is empty, which only creates a file or fills an empty one, but {path} "
            "already has content. Put the exact text to replace in old_string."
        )
    await store(ctx, path, new, encoding)
    return ToolOutput(
        content=f"Updated {path} ({plural(count_lines(new), 'line')}).{kept_note(encoding)}",
        data={"file_path": str(path), "replacements": 1},
    )


def _apply(path: Path, text: str, old: str, new: str, *, replace_all: bool) -> _Edit:
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text, old, new = (part.replace("\r\n", "\n") for part in (text, old, new))
    count = text.count(old)
    if count == 0:
        raise ToolFailure(_not_found(path, text, old))
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"old_string occurs {count} times in {path}, but replace_all is false. Include "
            "more of the surrounding lines in old_string so it matches exactly one place, or "
            "set replace_all to true to change every occurrence."
        )
    edited = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    on_disk = edited.replace("\n", "\r\n") if crlf else edited
    return _Edit(text=edited, on_disk=on_disk, count=count, at=text.index(old), new=new)


def _not_found(path: Path, text: str, old: str) -> str:
    message = (
        f"old_string was not found in {path}. It must match the file exactly, including "
        "whitespace and indentation; Read the file again and copy the current text."
    )
    if old.strip() and old.strip() in text:
        message += (
            " (It does occur if leading and trailing whitespace is ignored: check the "
            "indentation and line breaks at its ends.)"
        )
    elif _LINE_NUMBER_PREFIX.search(old):
        message += " (old_string seems to include Read's line-number prefixes; leave them out.)"
    return message


def _snippet(edit: _Edit) -> str:
    lines = edit.text.split("\n")
    if edit.text.endswith("\n"):
        lines.pop()
    first = edit.text.count("\n", 0, edit.at)
    changed = edit.new.removesuffix("\n")  # a final newline ends the last changed line
    last = first + changed.count("\n")
    low = max(0, first - SNIPPET_CONTEXT_LINES)
    high = min(len(lines), last + SNIPPET_CONTEXT_LINES + 1, low + SNIPPET_MAX_LINES)
    return number_lines([clip_line(line) for line in lines[low:high]], low + 1)
