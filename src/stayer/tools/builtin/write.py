"""The Write tool: create a file, or replace one the model has read, with given contents.

A new file is UTF-8; a file that exists keeps its encoding (see `textfile`), as in Claude Code,
and its byte-order mark, written once even when the new text starts with one. When an editor
drives the session, a text file is written through it (`editor_text`), which keeps its encoding.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from stayer.tools import names
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import (
    ToolInput,
    count_lines,
    plural,
    require_fresh_read,
)
from stayer.tools.builtin.editor_text import editor_for, fresh_buffer, store
from stayer.tools.builtin.textfile import (
    BYTE_ORDER_MARK,
    UTF8,
    TextEncoding,
    encoding_of,
    kept_note,
    read_sample,
)


class WriteInput(ToolInput):
    """Input of the Write tool (Claude Code's field names)."""

    file_path: str = Field(
        description="Absolute path of the file to write (a relative path is taken from the "
        "working directory). Missing parent directories are created."
    )
    content: str = Field(description="The complete contents the file should have.")


class WriteTool(Tool[WriteInput]):
    """Writes a whole file, refusing to clobber what the model has not seen."""

    name = names.WRITE
    writes_under = "Edit"
    input_model = WriteInput
    subject_kind = "path"
    description = (
        "Writes a file, replacing it entirely if it exists.\n\n"
        "- To overwrite an existing file you must have read it with Read first, and it must "
        "not have changed since; otherwise the write is refused.\n"
        "- To change part of an existing file, prefer Edit: it sends only the change.\n"
        "- Create new files only when the task needs them; do not write documentation or "
        "README files unless asked.\n"
        "- Parent directories are created as needed. The content is written exactly as given, "
        "line endings untouched: as UTF-8 for a new file, in its own encoding for a file that "
        "exists."
    )

    def permission_subject(self, tool_input: WriteInput) -> str | None:
        return tool_input.file_path

    async def call(self, tool_input: WriteInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(tool_input.file_path)
        if path.is_dir():
            raise ToolFailure(f"{path} is a directory; give the path of a file to write.")
        existed = path.exists()
        encoding = await _checked_encoding(ctx, path) if existed else UTF8
        content = tool_input.content
        if encoding.bom:
            # The file keeps its mark anyway; a model that starts the text with one means that
            # mark, not a second invisible character after it.
            content = content.removeprefix(BYTE_ORDER_MARK)
        await store(ctx, path, content, encoding)
        lines = plural(count_lines(tool_input.content), "line")
        verb = "Updated" if existed else "Created"
        return ToolOutput(
            content=f"{verb} {path} ({lines}).{kept_note(encoding)}",
            data={"type": "update" if existed else "create", "file_path": str(path)},
        )


async def _checked_encoding(ctx: ToolContext, path: Path) -> TextEncoding:
    """How the existing file at `path` is stored, once the model is known to have read it as
    it is now; the editor keeps its own buffers' encodings, so theirs is plain text here."""
    editor = editor_for(ctx, path)
    if editor is not None:
        await fresh_buffer(ctx, editor, path, "overwrite")
        return UTF8
    require_fresh_read(ctx, path, "overwrite")
    try:
        return encoding_of(read_sample(path))
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}.") from None
