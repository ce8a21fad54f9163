"""`!command`: a shell command the person typed, run at once, its output put into the
conversation.

The person typed it, so no permission rule is consulted; it runs through the exec layer as the
Bash tool's commands do (`bash -c`, its own process group, stdin closed, stayer's credentials
withheld from its environment, inside the sandbox when the session has one), with the Bash
tool's timeout and output cap (`BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_OUTPUT_LENGTH`). Interrupting
it (the `abort` signal: Escape, Ctrl+C) stops its whole group at once.

What enters the conversation is what Claude Code writes for its shell mode, so a model trained
on it reads it the same way: the command in `<bash-input>`, then its output in `<bash-stdout>`
and `<bash-stderr>`. The model answers it as it does any prompt (Claude Code does too since
2.1.186).
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct

from stayer.exec import Captured, Sandbox, Spool, cut_streams, run_command
from stayer.exec.child_env import child_env
from stayer.loop.abort import AbortSignal, until_aborted
from stayer.session.session import Session
from stayer.tools.builtin.bash import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TIMEOUT_MS,
    MAX_OUTPUT_CHARS_CEILING,
    MIN_OUTPUT_CHARS,
)

_NON_INTERACTIVE = {"GIT_EDITOR": "true"}
"""stdin is closed: an editor git opened would only wait for the timeout."""


class BangResult(Struct, frozen=True, kw_only=True):
    """How a `!command` ended: its output (each stream cut to the cap in its middle, with a
    marker) and exit status. `interrupted`: the person stopped it; `timed_out`: it ran past
    the timeout and was stopped; `killed`: a signal from elsewhere ended it."""

    command: str
    stdout: str
    stderr: str
    exit_code: int
    interrupted: bool = False
    timed_out: bool = False
    killed: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_MS / 1000


async def run_bang(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    abort: AbortSignal,
    sandbox: Sandbox | None = None,
) -> BangResult:
    """Run `command` (what follows the `!`) with bash in `cwd` and wait for it, its timeout,
    or `abort` (what it printed until then is kept).

    `env` is the command's whole environment, as the session's tools get it (stayer's
    credentials are taken out here). A command that cannot start (a missing `cwd`) is a result
    with exit code 127 and the reason on stderr.
    """
    limit = _setting(env, "BASH_MAX_OUTPUT_LENGTH", DEFAULT_MAX_OUTPUT_CHARS)
    limit = max(MIN_OUTPUT_CHARS, min(limit, MAX_OUTPUT_CHARS_CEILING))
    timeout_s = _setting(env, "BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS) / 1000
    # what it printed before an interrupt, kept as it arrives (the start of each stream)
    spools = Spool(io.StringIO(), limit), Spool(io.StringIO(), limit)
    try:
        result = await until_aborted(
            run_command(
                command,
                cwd=cwd,
                env={**_NON_INTERACTIVE, **child_env(env)},
                timeout_s=timeout_s,
                max_output_chars=limit,
                spools=spools,
                sandbox=sandbox,
            ),
            abort,
        )
    except OSError as error:
        why = f"Could not start bash in {cwd}: {error.strerror or error}"
        return BangResult(command=command, stdout="", stderr=why, exit_code=127)
    if result is None:
        stdout, stderr = _fit(_spooled(spools[0]), _spooled(spools[1]), limit)
        return BangResult(
            command=command, stdout=stdout, stderr=stderr, exit_code=130, interrupted=True
        )
    stdout, stderr = _fit(result.stdout_capture, result.stderr_capture, limit)
    return BangResult(
        command=command,
        stdout=stdout,
        stderr=stderr,
        exit_code=result.exit_code,
        killed=result.interrupted,
        timed_out=result.timed_out,
        timeout_s=timeout_s,
    )


def _spooled(spool: Spool) -> Captured:
    assert isinstance(spool.file, io.StringIO)
    return Captured(spool.file.getvalue(), omitted=spool.dropped)


async def run_in_session(
    command: str, session: Session, *, cwd: Path, abort: AbortSignal
) -> BangResult:
    """`run_bang` as the session's own tools run commands: its settings' environment, and its
    sandbox when it has one."""
    resolved = session.setup.resolved
    return await run_bang(
        command,
        cwd=cwd,
        env=resolved.env if resolved is not None else os.environ,
        abort=abort,
        sandbox=resolved.sandbox if resolved is not None else None,
    )


def bang_prompt(result: BangResult) -> str:
    """The text that enters the conversation for a `!command` (Claude Code's shell-mode form);
    how it ended, when not plainly, is added to stderr as the Bash tool reports it."""
    stderr = result.stderr
    note = _ending(result)
    if note:
        stderr = f"{stderr}\n{note}" if stderr.strip() else note
    return (
        f"<bash-input>{result.command}</bash-input>\n"
        f"<bash-stdout>{result.stdout}</bash-stdout><bash-stderr>{stderr}</bash-stderr>"
    )


def shown(result: BangResult) -> str:
    """What a `!command` printed, as shown under it."""
    said = "\n".join(part for part in (result.stdout.rstrip(), result.stderr.rstrip()) if part)
    if result.interrupted:
        said += "\n(interrupted)"
    elif result.exit_code:
        said += f"\n(exit status {result.exit_code})"
    return said.strip("\n") or "(no output)"


def _ending(result: BangResult) -> str:
    if result.timed_out:
        return f"Command timed out after {result.timeout_s:g} s and was stopped."
    if result.interrupted:
        return "Command was interrupted."
    if result.killed:
        return f"Command was killed by a signal (exit code {result.exit_code})."
    if result.exit_code != 0:
        return f"Exit code {result.exit_code}"
    return ""


def _fit(stdout: Captured, stderr: Captured, limit: int) -> tuple[str, str]:
    """Both streams within `limit` characters together: the shorter keeps up to half, the
    longer the rest, each cut in its middle with a marker counting what was dropped."""
    if stdout.length + stderr.length <= limit:
        return stdout.text, stderr.text
    out_room = limit - min(stderr.length, limit // 2)
    if stdout.length <= stderr.length:
        out_room = min(stdout.length, limit // 2)
    return _cut(stdout, out_room), _cut(stderr, limit - out_room)


def _cut(captured: Captured, room: int) -> str:
    return cut_streams([("", captured)], room)[0]


def _setting(env: Mapping[str, str], name: str, fallback: int) -> int:
    """A positive whole number from `env`; `fallback` when unset or unusable (as the Bash tool
    reads it)."""
    try:
        value = int(env.get(name) or fallback)
    except ValueError:
        return fallback
    return value if value > 0 else fallback
