"""Notebooks for the Read tool: a Jupyter notebook shown as its cells with their outputs.

The file is nbformat 4 JSON, read with the standard library. Each cell is shown with the id that
NotebookEdit takes (``cell-N``, counting from 0, in a notebook without ids), its type, and for code
its execution count and outputs: text as text, errors as their name, value and traceback without
terminal colours, and images (png, jpeg) as image blocks after the text. `offset` and `limit`
count cells here, not lines, so a notebook too large for one result is read a few cells at a time.
A file named .ipynb that is not a notebook is shown as text, so the model can see what is wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from stayer.messages import ImageBlock, TextBlock, ToolResultContent
from stayer.tools.base import ToolFailure, ToolOutput
from stayer.tools.builtin import plural
from stayer.tools.builtin.textfile import load_text

MAX_OUTPUT_CHARS = 10_000
"""The most shown of one output; a longer one keeps its start and says how much was cut."""

MAX_OUTPUT_IMAGES = 10
MAX_OUTPUT_IMAGE_CHARS = 5_000_000  # base64, the API's limit per image

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TEXT_TYPES = ("text/plain", "text/markdown", "text/latex")
_IMAGE_TYPES = ("image/png", "image/jpeg")


class _Rendering(Struct):
    images: list[ImageBlock] = field(default_factory=list[ImageBlock])
    omitted_images: int = 0


def notebook_output(path: Path, first: int, limit: int | None, max_chars: int) -> ToolOutput | None:
    """Cells `first` (1-based) onwards of the notebook at `path`, as many as fit `max_chars`;
    None when the file is no notebook (not JSON, or no list of cells)."""
    cells = _cells(path)
    if cells is None:
        return None
    data: dict[str, Any] = {"type": "notebook", "file_path": str(path), "num_cells": len(cells)}
    if not cells:
        return ToolOutput(content=f"The notebook {path} has no cells.", data=data)
    if first > len(cells):
        raise ToolFailure(
            f"The notebook {path} has only {plural(len(cells), 'cell')}, so there is nothing at "
            f"offset {first} (for a notebook, offset and limit count cells). Use a smaller offset."
        )
    last = len(cells) if limit is None else min(len(cells), first + limit - 1)
    room = max_chars - 400  # the closing notes and a cut's marker
    rendering = _Rendering()
    parts: list[str] = []
    size = 0
    shown = first - 1
    for number in range(first, last + 1):
        images, omitted = len(rendering.images), rendering.omitted_images
        part = _cell(cells[number - 1], number, rendering)
        if parts and size + len(part) + 2 > room:
            del rendering.images[images:]  # this cell is left for the next read
            rendering.omitted_images = omitted
            break
        if len(part) > room:  # one cell larger than a whole result: keep its start
            part = _cut(part, room)
        parts.append(part)
        size += len(part) + 2
        shown = number
    text = "\n\n".join(parts) + _closing_note(first, shown, len(cells), rendering)
    content: tuple[ToolResultContent, ...] = (TextBlock(text=text), *rendering.images)
    return ToolOutput(content=content, data={**data, "start_cell": first, "end_cell": shown})


def _cells(path: Path) -> list[dict[str, Any]] | None:
    text, _ = load_text(path)
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError:
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    return [cell for cell in cells if isinstance(cell, dict)]


def _joined(value: object) -> str:
    """nbformat text, which is either a string or a list of lines."""
    if isinstance(value, list):
        return "".join(str(item) for item in value)
    return value if isinstance(value, str) else ""


def _cell(cell: dict[str, Any], number: int, rendering: _Rendering) -> str:
    cell_type = str(cell.get("cell_type", "code"))
    cell_id = cell.get("id") if isinstance(cell.get("id"), str) else f"cell-{number - 1}"
    head = f'<cell n="{number}" id="{cell_id}" type="{cell_type}"'
    if cell_type == "code" and isinstance(cell.get("execution_count"), int):
        head += f' execution_count="{cell["execution_count"]}"'
    body = [head + ">", _joined(cell.get("source"))]
    outputs = cell.get("outputs") if cell_type == "code" else None
    for output in outputs if isinstance(outputs, list) else []:
        if isinstance(output, dict):
            body.append(_output(output, rendering))
    return "\n".join([*body, "</cell>"])


def _output(output: dict[str, Any], rendering: _Rendering) -> str:
    kind = str(output.get("output_type", ""))
    if kind == "stream":
        name = str(output.get("name", "stdout"))
        return _tagged(f'<output type="stream" name="{name}">', _joined(output.get("text")))
    if kind == "error":
        traceback = output.get("traceback")
        lines = traceback if isinstance(traceback, list) else []
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        if lines:
            text += "\n" + _ANSI.sub("", "\n".join(str(line) for line in lines))
        return _tagged('<output type="error">', text)
    bundle = output.get("data")
    bundle = bundle if isinstance(bundle, dict) else {}
    parts = [_image(bundle, media, rendering) for media in _IMAGE_TYPES if media in bundle]
    text_type = next((media for media in _TEXT_TYPES if media in bundle), None)
    if text_type is not None:
        parts.append(_joined(bundle[text_type]))
    elif not parts:
        kinds = ", ".join(sorted(str(key) for key in bundle)) or "nothing"
        parts.append(f"(an output of {kinds}, not shown)")
    return _tagged(f'<output type="{kind}">', "\n".join(parts))


def _tagged(head: str, text: str) -> str:
    text = text.rstrip("\n")
    if len(text) > MAX_OUTPUT_CHARS:
        text = _cut(text, MAX_OUTPUT_CHARS)
    return f"{head}\n{text}\n</output>"


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


def _image(bundle: dict[str, Any], media_type: str, rendering: _Rendering) -> str:
    data = "".join(_joined(bundle[media_type]).split())  # nbformat may wrap base64 in lines
    if len(rendering.images) >= MAX_OUTPUT_IMAGES or len(data) > MAX_OUTPUT_IMAGE_CHARS:
        rendering.omitted_images += 1
        return f"({media_type} image, not shown)"
    rendering.images.append(ImageBlock(media_type=media_type, data=data))
    return f"({media_type} image {len(rendering.images)}, shown after the cells)"


def _closing_note(first: int, shown: int, total: int, rendering: _Rendering) -> str:
    notes = []
    if rendering.omitted_images:
        notes.append(
            f"{plural(rendering.omitted_images, 'image')} in outputs not shown: at most "
            f"{MAX_OUTPUT_IMAGES} per read, each under 5 MB."
        )
    if shown < total:
        notes.append(
            f"Showing cells {first}-{shown} of {total}. Read again with offset={shown + 1} "
            "to continue (for a notebook, offset and limit count cells)."
        )
    return "".join(f"\n\n({note})" for note in notes)
