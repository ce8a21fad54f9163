"""The Pin tool: notes kept word for word, bounded, never duplicated."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.pin import MAX_NOTE_CHARS, MAX_PINS, PinTool
from tests.unit.tools.helpers import run_tool, text_of


async def test_a_note_is_pinned_as_written(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    note = "Run `pytest -q tests/api` before each commit;\n  never `--no-verify`."
    output = await run_tool(PinTool(), ctx, note=f"  {note}\n")
    assert ctx.pins == [note]
    assert text_of(output).startswith(f"Pinned (1 of {MAX_PINS})")
    assert output.data == {"pins": [note]}


async def test_the_same_note_twice_is_kept_once(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    await run_tool(PinTool(), ctx, note="same")
    output = await run_tool(PinTool(), ctx, note="same")
    assert (ctx.pins, text_of(output)) == (["same"], "Already pinned; nothing changed.")


async def test_pins_are_bounded_in_number_and_length(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    for n in range(MAX_PINS):
        await run_tool(PinTool(), ctx, note=f"note {n}")
    with pytest.raises(ToolFailure, match=f"already {MAX_PINS} pinned notes"):
        await run_tool(PinTool(), ctx, note="one too many")
    with pytest.raises(ValidationError):
        await run_tool(PinTool(), ToolContext(cwd=tmp_path), note="x" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(ToolFailure, match="The note is empty"):
        await run_tool(PinTool(), ToolContext(cwd=tmp_path), note="   ")
