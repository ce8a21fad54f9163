"""Text files through an editor's buffers (`ToolContext.editor`, ACP's client `fs` methods), for
Read, Write and Edit: the model reads what the person has open, unsaved changes included, and
its changes land in that buffer instead of on the disk behind the editor's back.

Only text files go to the editor. Images, PDFs, notebooks and files with a binary extension are
always the disk's (`editor_for`), for Read and for the tools that change files alike, so each
file is judged by one kind of record throughout: a digest of the buffer's text as the model last
saw it (`SessionState.buffer_reads`) for the editor's, a modification time for the disk's. The
checks a disk file gets run first (the executor's permissions and deny rules; the tools' own
refusals of directories, missing and binary files); the editor is asked only about what passed
them. An editor that fails gives a one-line `ToolFailure`, and nothing falls back to the disk.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from stayer.tools.base import EditorFiles, ToolContext, ToolFailure
from stayer.tools.builtin import require_fresh_read, save_text, unread
from stayer.tools.builtin.read_image import IMAGE_TYPES
from stayer.tools.builtin.textfile import (
    BINARY_EXTENSIONS,
    UTF8,
    TextEncoding,
    encode_for,
    encoding_of,
    load_text,
    read_sample,
)

DISK_SUFFIXES = frozenset({*IMAGE_TYPES, ".pdf", ".ipynb", *BINARY_EXTENSIONS})
"""Files read and written on the disk even when an editor drives the session: what Read shows
as something other than lines of text, or refuses."""

_MOST_SAID = 300
"""The most characters of an editor's error kept in the message the model reads."""


def editor_for(ctx: ToolContext, path: Path) -> EditorFiles | None:
    """The editor to read and write `path` through, or None when it is the disk's."""
    if ctx.editor is None or path.suffix.lower() in DISK_SUFFIXES:
        return None
    return ctx.editor


async def buffer_text(editor: EditorFiles, path: Path) -> str:
    """The text of `path` as the editor has it; `ToolFailure` in one line when it cannot say."""
    try:
        return await editor.read_text(_real(path))
    except ToolFailure:
        raise
    except Exception as exc:  # an editor's failure is the model's to read, never a crash
        raise ToolFailure(f"The editor could not read {path}: {said_by(exc)}.") from None


def remember_buffer(ctx: ToolContext, path: Path, text: str) -> None:
    """Remember that the model has seen `path` holding `text` in the editor."""
    ctx.session_state.buffer_reads[_real(path)] = _digest(text)


async def fresh_buffer(ctx: ToolContext, editor: EditorFiles, path: Path, action: str) -> str:
    """The buffer's text, once it is known to be what the model last read or wrote there;
    else `ToolFailure` saying to Read it (again) before it may `action` it."""
    seen = ctx.session_state.buffer_reads.get(_real(path))
    if seen is None:
        raise unread(path, action)
    text = await buffer_text(editor, path)
    if _digest(text) != seen:
        raise ToolFailure(
            f"{path} has changed in the editor since it was last read (by the user, a "
            f"formatter or a command). Read it again, then {action} it."
        )
    return text


async def load_for_change(ctx: ToolContext, path: Path, action: str) -> tuple[str, TextEncoding]:
    """An existing file's whole text and how it is stored, for changing it: the buffer's (kept
    by the editor, so plain text here) or the disk's, each after the read-before-write check."""
    editor = editor_for(ctx, path)
    if editor is None:
        require_fresh_read(ctx, path, action)
        return load_text(path)
    return await fresh_buffer(ctx, editor, path, action), UTF8


async def store(ctx: ToolContext, path: Path, text: str, encoding: TextEncoding = UTF8) -> None:
    """Make `path` hold `text`, through the editor when it has the file, else on the disk in
    `encoding`, and remember it so the model may change its own result again without a Read."""
    editor = editor_for(ctx, path)
    if editor is None:
        save_text(ctx, path, text, encoding)
        return
    try:
        await editor.write_text(_real(path), text)
    except ToolFailure:
        raise
    except Exception as exc:  # an editor's failure is the model's to read, never a crash
        raise ToolFailure(f"The editor could not write {path}: {said_by(exc)}.") from None
    remember_buffer(ctx, path, text)


def _real(path: Path) -> Path:
    """The file `path` names, links resolved: what the permission rules judged, and what the
    editor is asked about (a few `lstat` calls, too quick to be worth a thread)."""
    return path.resolve()


def _digest(text: str) -> str:
    # surrogatepass: a JSON string may carry a lone surrogate, which is still text to compare
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def said_by(exc: Exception, details: object = None) -> str:
    """What an editor's exception says (with its `details`, when an editor's error has
    some), on one line and not too long to read: for the model's message."""
    said = _flat(str(exc)) or type(exc).__name__
    if details:
        said = f"{said} ({_flat(str(details))})"
    return said if len(said) <= _MOST_SAID else said[: _MOST_SAID - 1] + "…"


def _flat(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


class DiskFiles:
    """The disk as `EditorFiles`, for the half an editor does not offer (ACP's client offers
    reading and writing separately): reads decode a file as Edit does, writes keep an existing
    file's encoding and write a new one as UTF-8. Failures are one-line `ToolFailure`s."""

    async def read_text(self, path: Path) -> str:
        """The whole text of `path` (`textfile.load_text`)."""
        text, _ = await asyncio.to_thread(load_text, path)
        return text

    async def write_text(self, path: Path, text: str) -> None:
        """Make `path` hold `text`, in its own encoding, creating parent directories."""
        await asyncio.to_thread(_write_disk, path, text)


def _write_disk(path: Path, text: str) -> None:
    try:
        encoding = encoding_of(read_sample(path)) if path.exists() else UTF8
        data = encode_for(path, text, encoding)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise ToolFailure(f"Could not write {path}: {exc.strerror or exc}.") from None
