"""Helpers for tool tests: run a tool from raw JSON input, check whether a process runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stayer.tools.base import Tool, ToolContext, ToolOutput


async def run_tool(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    """Validate `raw` as the model would send it, then call the tool."""
    return await tool.call(tool.input_model.model_validate(raw), ctx)


def text_of(output: ToolOutput) -> str:
    """The output's content, which these tests expect to be plain text."""
    assert isinstance(output.content, str)
    return output.content


def is_running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie awaiting its reaper is not)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc").is_dir():
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
