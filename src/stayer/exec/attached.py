"""A program handed the terminal: the person's editor, run in the foreground until it exits.

The REPL suspends itself (prompt_toolkit gives the terminal back in cooked mode) and starts the
program with the same standard input, output and error, so the person uses it as if they had
started it themselves. Nothing is captured; only the exit status comes back. A program that
cannot start is a one-line answer, not an exception.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from stayer.exec.child_watch import watch_children_by_pidfd


async def run_attached(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
) -> tuple[int | None, str]:
    """Run `argv` on the terminal; its exit status, or None and why it could not start."""
    watch_children_by_pidfd()
    try:
        process = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=dict(env))
    except OSError as error:
        return None, f"could not start {shlex.join(argv)}: {error.strerror or error}"
    return await process.wait(), ""


def editor_command(env: Mapping[str, str], path: Path) -> list[str]:
    """The person's editor for `path`: $VISUAL, then $EDITOR (either may carry arguments),
    else vi."""
    chosen = env.get("VISUAL") or env.get("EDITOR") or "vi"
    return [*shlex.split(chosen), str(path)]
