"""How the batch runs git for its workspaces, and the error when that fails.

Git runs without prompting (``GIT_TERMINAL_PROMPT=0``, and no terminal to prompt on), without
hooks or an fsmonitor program, without a background gc, in the C locale (its messages end up
in results), and never pointed elsewhere by variables a calling git hook may have set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from stayer.errors import StayerError
from stayer.exec import CommandResult, run_argv
from stayer.exec.child_env import child_env

GIT_TIMEOUT_S = 3600.0
"""How long one git call may take (a clone of a large repository over a slow link); a task's
own timeout, which cancels the call, is usually shorter."""

_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0")
"""Options for every git call here: no hooks, no fsmonitor program, no background gc."""

_REDIRECTS = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
     "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
     "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}
)  # fmt: skip
"""Variables that would point git elsewhere (set when stayer runs from a git hook)."""


class WorkspaceError(StayerError):
    """A workspace that could not be made or read; the message says what failed and what to
    do."""


async def run_git(
    cwd: Path,
    *arguments: str,
    extra: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    max_output_chars: int = 8192,
) -> CommandResult:
    """`git arguments` in `cwd`, with `extra` variables and `stdin` as its input, keeping
    `max_output_chars` of each output; raises `WorkspaceError` when git cannot start."""
    try:
        return await run_argv(
            ["git", *_SAFE, *arguments],
            cwd=cwd,
            env=_git_env(extra),
            timeout_s=GIT_TIMEOUT_S,
            max_output_chars=max_output_chars,
            input=stdin,
        )
    except OSError as error:
        if isinstance(error, FileNotFoundError) and error.filename == "git":
            raise WorkspaceError("git is not installed (not on PATH); install git") from None
        raise WorkspaceError(f"cannot run git in {cwd}: {error.strerror or error}") from None


def git_in(workspace: Path) -> dict[str, str]:
    """Git pointed at the workspace's own repository, never one around it (an agent that
    removed `.git` must not make us read or write a repository the output folder is in)."""
    return {"GIT_DIR": str(workspace / ".git"), "GIT_WORK_TREE": str(workspace)}


def _git_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {name: value for name, value in child_env(os.environ).items() if name not in _REDIRECTS}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", **(extra or {}))
    return env


def last_line(result: CommandResult) -> str:
    """What a failed git call said last, for a one-line error."""
    lines = (result.stderr or result.stdout).strip().splitlines()
    if result.timed_out:
        return f"git took longer than {GIT_TIMEOUT_S:.0f} s"
    return lines[-1].strip() if lines else f"git exited with status {result.exit_code}"
