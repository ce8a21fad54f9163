"""A task's setup and check commands: ``bash -c`` in the workspace, the end of their output.

Each runs in a process group of its own that is stopped whole when the command ends (what it
left running in the background too), times out or is cancelled, so nothing a command started
outlives it across the hundreds of tasks of a batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct

from stayer.batch.workspace_git import WorkspaceError
from stayer.exec import CommandResult, run_argv

OUTPUT_TAIL_CHARS = 4096
"""How much of a command's output a `CommandOutcome` keeps: its end, where failures show."""


class CommandOutcome(Struct, frozen=True):
    """How a setup or check command ended."""

    exit_code: int
    """The shell's convention: killed by signal N is ``128 + N``."""
    output: str
    """The end of its stdout and stderr, interleaved as written (undecodable bytes replaced)."""
    timed_out: bool


async def run_command(
    command: str, cwd: Path, env: Mapping[str, str], timeout_s: float
) -> CommandOutcome:
    """Run `command` with ``bash -c`` in `cwd` with `env` as its whole environment, in a
    process group of its own that is stopped whole when the command ends, times out or is
    cancelled. Raises `WorkspaceError` when the shell cannot start (no such `cwd`)."""
    # stderr joins stdout in the shell itself, so the tail shows them in the order written.
    argv = ["/bin/sh", "-c", 'exec "$@" 2>&1', "stayer-batch", "bash", "-c", command]
    try:
        result = await run_argv(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            max_output_chars=2 * OUTPUT_TAIL_CHARS,
            stop_leftovers=True,
        )
    except OSError as error:
        raise WorkspaceError(
            f"cannot run a command in {cwd}: {error.strerror or error}; "
            "check that the workspace exists and bash is installed"
        ) from None
    return CommandOutcome(
        exit_code=result.exit_code, output=_tail(result), timed_out=result.timed_out
    )


def _tail(result: CommandResult) -> str:
    captured = result.stdout_capture
    kept = captured.tail if captured.omitted else captured.head + captured.tail
    tail = kept[-OUTPUT_TAIL_CHARS:]
    before = captured.length - len(tail)
    return f"[{before} characters before this omitted]\n{tail}" if before else tail
