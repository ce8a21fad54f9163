"""The Read tool: show a text file with line numbers, an image, a notebook or a PDF's text.

Reading records the file's modification time in `ToolContext.read_files`; Edit and Write use it
to refuse changes to files the model has not seen as they are now. Text is streamed line by line
with a bounded line length, so a huge file or a huge line never has to fit in memory. A file that
is not plain UTF-8 is decoded as `textfile` decides, and the page says which encoding that was.
Images, notebooks and PDFs each have their own module (`read_image`, `read_notebook`, `read_pdf`).
When an editor drives the session, a text file's page is the editor's text, once the file on the
disk has passed the same checks (`editor_text`).
"""

from __future__ import annotations

import asyncio
import difflib
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from msgspec import Struct
from pydantic import Field

from stayer.tools import names
from stayer.tools.base import (
    MAX_RESULT_CHARS,
    EditorFiles,
    Tool,
    ToolContext,
    ToolFailure,
    ToolOutput,
)
from stayer.tools.builtin import (
    MAX_LINE_CHARS,
    ToolInput,
    clipped,
    number_lines,
    plural,
    record_read,
)
from stayer.tools.builtin.editor_text import buffer_text, editor_for, remember_buffer
from stayer.tools.builtin.read_image import IMAGE_TYPES, image_output
from stayer.tools.builtin.read_notebook import notebook_output
from stayer.tools.builtin.read_pdf import MAX_PAGES, pdf_output
from stayer.tools.builtin.textfile import (
    BINARY_EXTENSIONS,
    UNDECODABLE,
    UTF8,
    TextEncoding,
    decodes_throughout,
    encoding_of,
    marked_encoding,
    open_text,
    read_sample,
)

DEFAULT_LIMIT = 2000


_SNIFF_BYTES = 8192
_MAX_SUGGESTIONS = 3


class ReadInput(ToolInput):
    """Input of the Read tool (Claude Code's field names)."""

    file_path: str = Field(
        description="Absolute path of the file to read (a relative path is taken from the "
        "working directory)."
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="Line number to start reading from (1 is the first line). Give it only "
        "when the file is too long to read at once.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"How many lines to read (default {DEFAULT_LIMIT}). Give it only when the "
        "file is too long to read at once.",
    )
    pages: str | None = Field(
        default=None,
        description=f'Page range for PDF files, such as "1-5" or "3" (at most {MAX_PAGES} '
        "pages per read). Only for PDF files.",
    )


class _Page(Struct, frozen=True):
    lines: list[str]
    start: int
    lines_before: int
    more: bool
    hit_size_cap: bool
    undecodable: int  # bytes on the page that did not decode, shown as U+FFFD


class ReadTool(Tool[ReadInput]):
    """Shows a file the way ``cat -n`` would, a page at a time."""

    name = names.READ
    input_model = ReadInput
    subject_kind = "path"
    read_only = True
    # A page stops early at `max_result_chars`, notes included, and says where to go on; a cut
    # made after it by the executor could only hide lines, never shorten the page honestly.
    bounds_own_results = True
    # Pages of the whole allowance: saving a page of a file to another file would gain nothing.
    max_result_chars = MAX_RESULT_CHARS
    description = (
        "Reads a file from the local filesystem and returns it with line numbers, like "
        "`cat -n`: each line is its number, a tab, then the text.\n\n"
        f"- Reads up to {DEFAULT_LIMIT} lines from the start by default. For long files pass "
        "`offset` (1-based line number) and `limit` to read a slice; the result says where "
        "to continue when more remains.\n"
        f"- Lines longer than {MAX_LINE_CHARS} characters are cut.\n"
        "- A file that is not UTF-8 is decoded as its byte-order mark says, or else with a "
        "guess at its encoding; the result then names the encoding used.\n"
        "- Images (png, jpg, jpeg, gif, webp) come back as images you can look at; a large "
        "one is scaled down first.\n"
        "- Jupyter notebooks (.ipynb) come back as their cells with outputs; for a notebook, "
        "`offset` and `limit` count cells.\n"
        f'- PDFs come back as the text of each page. Pass `pages` (e.g. "1-5") to pick pages; '
        f"one read shows at most {MAX_PAGES} pages.\n"
        "- Other binary files, and directories, cannot be read: use Bash (e.g. `ls`) or Glob "
        "for directories.\n"
        "- The line-number prefix is not part of the file: leave it out when you copy text "
        "into an Edit.\n"
        "- You must Read a file before you Edit or overwrite it. When several files may be "
        "useful, read them together in one turn.\n"
        "- Reading a path that does not exist is an error that suggests similar names."
    )

    def is_concurrency_safe(self, tool_input: ReadInput) -> bool:
        return True

    def permission_subject(self, tool_input: ReadInput) -> str | None:
        return tool_input.file_path

    async def call(self, tool_input: ReadInput, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(tool_input.file_path)
        editor = editor_for(ctx, path)
        if editor is not None:
            return await _read_buffer(editor, path, tool_input, ctx, self.max_result_chars)
        output, mtime_ns = await asyncio.to_thread(
            _read, path, tool_input, ctx.cwd, self.max_result_chars
        )
        record_read(ctx, path, mtime_ns)
        return output


async def _read_buffer(
    editor: EditorFiles, path: Path, tool_input: ReadInput, ctx: ToolContext, max_chars: int
) -> ToolOutput:
    """A page of the editor's text of `path`, once the file has passed the checks a file on
    the disk gets (it exists, is a regular file, holds text)."""
    await asyncio.to_thread(_check_text, path, tool_input, ctx.cwd)
    text = await buffer_text(editor, path)
    _refuse_binary(path, path.suffix.lower(), text[:_SNIFF_BYTES].encode("utf-8", "surrogatepass"))
    stream = io.StringIO(text, newline=None)  # newline=None: CRLF and CR read as "\n"
    clean = UNDECODABLE not in text
    output = await asyncio.to_thread(_paged, path, stream, tool_input, max_chars, UTF8, clean)
    remember_buffer(ctx, path, text)
    return output


def _read(path: Path, tool_input: ReadInput, cwd: Path, max_chars: int) -> tuple[ToolOutput, int]:
    info = _stat(path, cwd)
    suffix = path.suffix.lower()
    _refuse_pages(path, tool_input, suffix)
    if suffix in IMAGE_TYPES:
        return image_output(path, suffix), info.st_mtime_ns
    if suffix == ".pdf":
        return pdf_output(path, tool_input.pages, max_chars), info.st_mtime_ns
    if suffix == ".ipynb":
        first = max(tool_input.offset or 1, 1)
        notebook = notebook_output(path, first, tool_input.limit, max_chars)
        if notebook is not None:
            return notebook, info.st_mtime_ns
    sample = _text_sample(path)
    encoding = encoding_of(sample)
    clean = decodes_throughout(sample, encoding)
    try:
        with open_text(path, encoding) as stream:
            output = _paged(path, stream, tool_input, max_chars, encoding, clean)
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}") from None
    return output, info.st_mtime_ns


def _refuse_pages(path: Path, tool_input: ReadInput, suffix: str) -> None:
    if tool_input.pages is not None and suffix != ".pdf":
        raise ToolFailure(f"pages is only for PDF files, and {path} is not one; leave it out.")


def _check_text(path: Path, tool_input: ReadInput, cwd: Path) -> None:
    """Refuse (`ToolFailure`) what Read would not show as text: a file that is missing, not a
    regular file, or binary, or an input that asks for what only a PDF has."""
    _stat(path, cwd)
    _refuse_pages(path, tool_input, path.suffix.lower())
    _text_sample(path)


def _text_sample(path: Path) -> bytes:
    """The start of a regular file to be shown as text; `ToolFailure` when it is binary or
    cannot be read."""
    suffix = path.suffix.lower()
    try:
        sample = read_sample(path)
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}") from None
    _refuse_binary(path, suffix, sample)
    return sample


def _paged(
    path: Path,
    stream: TextIO,
    tool_input: ReadInput,
    max_chars: int,
    encoding: TextEncoding,
    clean: bool,
) -> ToolOutput:
    """The page of `stream` (the text of `path`) the input asks for, within `max_chars`."""
    start = max(tool_input.offset or 1, 1)
    limit = tool_input.limit or DEFAULT_LIMIT
    room = max_chars - _notes_room(start, limit, max_chars, encoding, clean=clean)
    return _text_output(path, _page(stream, start, limit, room), max_chars, encoding)


def _stat(path: Path, cwd: Path) -> os.stat_result:
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise ToolFailure(_missing_message(path, cwd)) from None
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolFailure(
            f"{path} is a directory, not a file. List its contents with Glob "
            "(e.g. pattern '*') or with `ls` through Bash."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolFailure(f"{path} is not a regular file (a device, socket or pipe).")
    return info


def _missing_message(path: Path, cwd: Path) -> str:
    message = f"File does not exist: {path}."
    parent = path.parent
    if not parent.is_dir():
        message += f" Its directory {parent} does not exist either."
    else:
        similar = _similar_names(path.name, parent)
        if similar:
            message += " Did you mean " + " or ".join(str(parent / name) for name in similar) + "?"
    return message + f" The working directory is {cwd}."


def _similar_names(name: str, directory: Path) -> list[str]:
    try:
        entries = sorted(os.listdir(directory))[:10_000]
    except OSError:
        return []
    stem = Path(name).stem.lower()
    candidates = [entry for entry in entries if entry.lower() == name.lower()]
    candidates += [entry for entry in entries if Path(entry).stem.lower() == stem]
    candidates += difflib.get_close_matches(name, entries, n=_MAX_SUGGESTIONS, cutoff=0.6)
    return list(dict.fromkeys(candidates))[:_MAX_SUGGESTIONS]


def _refuse_binary(path: Path, suffix: str, sample: bytes) -> None:
    reason = f"its extension is {suffix}" if suffix in BINARY_EXTENSIONS else None
    marked = marked_encoding(sample)
    wide = marked is not None and marked.codec != "utf-8"  # UTF-16 and UTF-32 hold NUL bytes
    if reason is None and not wide and b"\0" in sample[:_SNIFF_BYTES]:
        reason = "it contains NUL bytes"
    if reason is not None:
        raise ToolFailure(
            f"{path} looks like a binary file ({reason}); Read shows only text files, "
            "images (png, jpg, jpeg, gif, webp), notebooks and PDFs. Inspect it through Bash "
            "with a suitable program instead (for example `file`, `xxd | head`, `unzip -l`)."
        )


def _lines(stream: TextIO) -> Iterator[str]:
    """The stream's lines without their ends; long lines cut without reading them whole."""
    while True:
        line = stream.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if line.endswith("\n"):
            yield line[:-1]
        elif len(line) <= MAX_LINE_CHARS:
            yield line
        else:
            yield clipped(line[:MAX_LINE_CHARS], len(line) - MAX_LINE_CHARS + _skip_line(stream))


def _skip_line(stream: TextIO) -> int:
    skipped = 0
    while chunk := stream.readline(65_536):
        if chunk.endswith("\n"):
            return skipped + len(chunk) - 1
        skipped += len(chunk)
    return skipped


def _numbered_len(number: int, line: str) -> int:
    """The length of `line` as `number_lines` shows it: the number, at least six wide, a tab."""
    return max(6, len(str(number))) + 1 + len(line)


def _page(stream: TextIO, start: int, limit: int, room: int) -> _Page:
    """Up to `limit` lines from `start`, stopping early so the numbered lines fit `room`."""
    shown: list[str] = []
    size = seen = undecodable = 0
    more = False
    for number, line in enumerate(_lines(stream), start=1):
        if number < start:
            seen = number
            continue
        rendered = _numbered_len(number, line) + (1 if shown else 0)  # a newline before it
        if len(shown) >= limit or (shown and size + rendered > room):
            more = True
            break
        if UNDECODABLE in line:
            undecodable += line.count(UNDECODABLE)
            line = line.replace(UNDECODABLE, "\ufffd")
        shown.append(line)
        size += rendered
        seen = number
    cut = more and len(shown) < limit
    return _Page(shown, start, seen, more=more, hit_size_cap=cut, undecodable=undecodable)


def _notes_room(
    start: int, limit: int, max_chars: int, encoding: TextEncoding, *, clean: bool
) -> int:
    """Room for the longest notes this page could get: their numbers grow with the last line
    shown (at most `start + limit - 1`) and with the bytes that did not decode (none when the
    file is known to be `clean`)."""
    last = start + limit - 1
    closing = max(
        len(_closing_note(start, last, cut=cut, max_chars=max_chars)) for cut in (False, True)
    )
    undecodable = 0 if clean else len(_undecodable_note(max_chars, encoding))
    return len(_encoding_note(encoding)) + undecodable + closing


def _closing_note(start: int, end: int, *, cut: bool, max_chars: int) -> str:
    if cut:
        return (
            f"\n\n(Stopped after line {end} to keep this under {max_chars} characters; "
            f"the file goes on. Read again with offset={end + 1} to continue.)"
        )
    return (
        f"\n\n(Showing lines {start}-{end}; the file goes on. Read again with "
        f"offset={end + 1} to continue.)"
    )


def _encoding_note(encoding: TextEncoding) -> str:
    if encoding.is_plain_utf8:
        return ""
    if encoding.guessed:
        return (
            f"\n\n(This file is not UTF-8. It was decoded as {encoding.name}, a guess from its "
            "bytes, so some characters may show wrongly. Edit and Write keep it in "
            f"{encoding.name}.)"
        )
    return f"\n\n(This file is {encoding.described}; Edit and Write keep it that way.)"


def _undecodable_note(count: int, encoding: TextEncoding) -> str:
    if not count:
        return ""
    verb, them = ("is", "it") if count == 1 else ("are", "them")
    return (
        f"\n\n({plural(count, 'byte')} shown as \ufffd on this page {verb} not valid "
        f"{encoding.name}, so Edit will not change this file (it would lose {them}); Write can "
        "still replace it whole.)"
    )


def _text_output(path: Path, page: _Page, max_chars: int, encoding: TextEncoding) -> ToolOutput:
    data = {"type": "text", "file_path": str(path), "start_line": page.start}
    if not page.lines:
        if page.lines_before == 0:
            text = f"The file {path} exists but is empty."
        else:
            text = (
                f"The file {path} has only {page.lines_before} lines, so there is nothing "
                f"at offset {page.start}. Use a smaller offset."
            )
        return ToolOutput(content=text, data={**data, "num_lines": 0})
    text = number_lines(page.lines, page.start)
    text += _encoding_note(encoding) + _undecodable_note(page.undecodable, encoding)
    if page.more:
        end = page.start + len(page.lines) - 1
        text += _closing_note(page.start, end, cut=page.hit_size_cap, max_chars=max_chars)
    return ToolOutput(content=text, data={**data, "num_lines": len(page.lines)})
