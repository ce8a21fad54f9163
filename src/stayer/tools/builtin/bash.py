"""The Bash tool: run one shell command and report its output, exit code and any timeout.

The working directory carries over between calls, as in Claude Code: each command ends by
writing its final ``pwd -P`` to a private file, and the next command starts there. Output over
``BASH_MAX_OUTPUT_LENGTH`` is saved whole to the session's folder and the model gets its start,
its end and the path (`bash_saved`); with no folder it is cut in the middle with a marker. With
``run_in_background`` the command is left running in the session's `shells` and the call returns
its id at once (BashOutput reads it, KillShell stops it); a background command starts in the
working directory but never moves it, since it ends long after later calls have started.
While a command runs, its output goes out as live progress: whole lines, a few batches a second
at most, the lines left out counted (`stayer.exec.lines`); the result is built from the
captured output alone, so watching changes nothing the model sees. With a sandbox in the
context (`--sandbox`), commands, in the background too, run inside it (`stayer.exec.sandbox`).

Timeouts follow Claude Code: 2 minutes unless `BASH_DEFAULT_TIMEOUT_MS` says otherwise, and a
requested `timeout` is capped to `BASH_MAX_TIMEOUT_MS` (10 minutes), which is never below the
default.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from msgspec.structs import replace
from pydantic import Field

from stayer.events import ToolCallProgress
from stayer.exec import (
    Captured,
    CommandResult,
    OutputLines,
    cut_streams,
    run_command,
    shell_syntax,
)
from stayer.exec.git_calls import repository_of
from stayer.tools import names
from stayer.tools.base import (
    MAX_RESULT_CHARS,
    Tool,
    ToolContext,
    ToolFailure,
    ToolOutput,
    Written,
)
from stayer.tools.builtin import ToolInput, env_value, tool_env
from stayer.tools.builtin.bash_read_only import is_read_only_command, paths_read, runs_git
from stayer.tools.builtin.bash_saved import SavedOutput
from stayer.tools.builtin.bash_writes import written
from stayer.tools.saved import preview

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_MAX_OUTPUT_CHARS = 30_000
MAX_OUTPUT_CHARS_CEILING = MAX_RESULT_CHARS
"""Claude Code allows 150,000; here the cut output of a session that is not kept must still fit
the executor's cap."""
MIN_OUTPUT_CHARS = 1_000
"""Room for a little output besides the omission marker and the exit note."""

# Commands run without a terminal; an editor opened by git would wait for the timeout.
_NON_INTERACTIVE_DEFAULTS = {"GIT_EDITOR": "true"}


class BashInput(ToolInput):
    """Input of the Bash tool (Claude Code's field names)."""

    command: str = Field(description="The shell command to run.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=(
            f"Optional timeout in milliseconds (at most {MAX_TIMEOUT_MS}). "
            f"Defaults to {DEFAULT_TIMEOUT_MS} (2 minutes)."
        ),
    )
    description: str | None = Field(
        default=None,
        description=(
            "A short description of what the command does, in 5-10 words, in the active "
            "voice (e.g. 'List files in the current directory')."
        ),
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Set to true to run this command in the background. Use BashOutput to read the "
            "output later."
        ),
    )


class BashTool(Tool[BashInput]):
    """Runs a command with ``bash -c`` in a persistent working directory."""

    name = names.BASH
    input_model = BashInput
    subject_kind = "command"
    # Output is cut once, here, to BASH_MAX_OUTPUT_LENGTH with a marker counting what was left
    # out; a second cut by the executor would swallow that marker.
    bounds_own_results = True
    description = (
        "Runs a shell command with bash and returns what it printed (stdout, then stderr).\n\n"
        "Use it for things only a shell can do: running tests, builds, git, package managers, "
        "and other programs. For files there are dedicated tools that are cheaper and safer: "
        "Read instead of cat/head/tail, Edit or Write instead of sed/awk/echo redirection, "
        "Glob instead of find/ls for locating files, Grep instead of grep/rg.\n\n"
        "- The working directory persists between calls: after `cd dir`, later commands run in "
        "dir. Prefer absolute paths anyway, and quote paths that contain spaces.\n"
        "- Commands run without a terminal and with stdin closed, so anything interactive "
        "(editors, pagers, prompts, `git rebase -i`) fails or hangs; pass flags that avoid it.\n"
        f"- The default timeout is {DEFAULT_TIMEOUT_MS // 1000} s; set `timeout` (ms, up to "
        f"{MAX_TIMEOUT_MS}) for longer work. A command that times out is stopped, with all the "
        "processes it started.\n"
        "- Long output is saved to a file and you get its start, its end and the file's path "
        "(Read or Grep the file for the rest); filter it with grep, head or tail when you only "
        "need part of it.\n"
        "- Chain dependent steps with `&&`; run independent commands as separate calls.\n"
        "- For a server or a long build, set `run_in_background`: the call returns a shell id "
        "at once, BashOutput shows what it printed since you last looked, and KillShell stops "
        "it. Background commands have no timeout and are stopped when the session ends; do "
        "not add `&` yourself.\n"
        "- A non-zero exit code is reported as an error along with the output."
    )

    def __init__(self) -> None:
        # Keyed by the context's own working directory, so agents sharing this instance
        # from different directories do not steer each other.
        self._cwd_by_root: dict[Path, Path] = {}
        # Tools are made off the start-up path; the grammar every call is judged by loads here.
        shell_syntax.preload()

    reads_under = "Read"
    writes_under = "Edit"

    def permission_subject(self, tool_input: BashInput) -> str | None:
        return tool_input.command

    def read_paths(self, tool_input: BashInput, cwd: Path) -> tuple[str, ...] | None:
        """Every word that may name a file the command reads, from the folder the shell is
        in now (an earlier call may have `cd`-ed); None when the parse cannot see all it
        runs."""
        shell = self._cwd_by_root.get(cwd, cwd)
        return paths_read(shell_syntax.parse(tool_input.command), shell)

    def write_paths(self, tool_input: BashInput, cwd: Path) -> Written:
        """What the command writes (`bash_writes`), from the folder the shell is in now."""
        shell = self._cwd_by_root.get(cwd, cwd)
        parsed = shell_syntax.parse(tool_input.command)
        found = written(parsed, shell)
        if parsed.unreadable:  # its words are not the shell's: any place it names may be
            return replace(found, unknown=(*found.unknown, tool_input.command))
        return found

    def is_read_only(self, tool_input: BashInput) -> bool:
        """Read-only by a real parse of the command and a table of programs that only look
        (`bash_read_only`); git only while the shell is in the session's own repository (an
        earlier `cd` into another would have git run that one's config)."""
        if not is_read_only_command(tool_input.command):
            return False
        if not runs_git(tool_input.command):
            return True
        return all(
            repository_of(cwd) == repository_of(root) for root, cwd in self._cwd_by_root.items()
        )

    def is_concurrency_safe(self, tool_input: BashInput) -> bool:
        """A read-only command may run beside others; one left in the background never is,
        since it outlives the round it was started in."""
        return not tool_input.run_in_background and self.is_read_only(tool_input)

    async def call(self, tool_input: BashInput, ctx: ToolContext) -> ToolOutput:
        cwd = self._working_directory(ctx)
        limit = output_limit(ctx)
        env = {**_NON_INTERACTIVE_DEFAULTS, **tool_env(ctx)}
        if tool_input.run_in_background:
            return await _start_in_background(tool_input.command, ctx, cwd, env, limit)
        timeout_ms = bash_timeout_ms(ctx, tool_input.timeout)
        fd, cwd_file = tempfile.mkstemp(prefix="stayer-cwd-")
        os.close(fd)
        saved = SavedOutput.for_call(ctx)
        try:
            result = await run_command(
                _with_cwd_capture(tool_input.command, cwd_file),
                cwd=cwd,
                env=env,
                timeout_s=timeout_ms / 1000,
                on_lines=_reporter(ctx),
                max_output_chars=limit,
                spools=saved.spools if saved else None,
                # the shell writes its final directory to a file of ours: let it, sandboxed
                sandbox=ctx.sandbox.allowing(Path(cwd_file)) if ctx.sandbox else None,
            )
            self._remember_cwd(ctx, Path(cwd_file))
        except BaseException as exc:
            if saved:
                saved.discard()
            if isinstance(exc, OSError):
                raise ToolFailure(f"Could not start bash in {cwd}: {exc}") from None
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)
        return _to_output(result, limit=limit, timeout_ms=timeout_ms, saved=saved)

    def _working_directory(self, ctx: ToolContext) -> Path:
        remembered = self._cwd_by_root.get(ctx.cwd)
        if remembered is not None and remembered.is_dir():
            return remembered
        if not ctx.cwd.is_dir():
            raise ToolFailure(
                f"The working directory {ctx.cwd} does not exist, so no command can run there."
            )
        return ctx.cwd

    def _remember_cwd(self, ctx: ToolContext, cwd_file: Path) -> None:
        try:
            recorded = cwd_file.read_text(encoding="utf-8").strip()
        except OSError:
            return
        # Empty when the command replaced the shell (exec) or reset our trap; keep the old one.
        if recorded and Path(recorded).is_dir():
            self._cwd_by_root[ctx.cwd] = Path(recorded)


def _reporter(ctx: ToolContext) -> Callable[[OutputLines], None]:
    """Hands the command's output lines on as this call's live progress."""

    def report(lines: OutputLines) -> None:
        ctx.emit(ToolCallProgress(ctx.tool_use_id or "", lines.text, lines.omitted))

    return report


def _with_cwd_capture(command: str, cwd_file: str) -> str:
    """The command wrapped so the shell records its final directory on any exit."""
    record = f"pwd -P >| {shlex.quote(cwd_file)} 2>/dev/null"
    return f"trap {shlex.quote(record)} EXIT; eval {shlex.quote(command)}"


async def _start_in_background(
    command: str, ctx: ToolContext, cwd: Path, env: dict[str, str], limit: int
) -> ToolOutput:
    try:
        shell = await ctx.shells.start(
            command, cwd=cwd, env=env, max_output_chars=limit, sandbox=ctx.sandbox
        )
    except OSError as exc:
        raise ToolFailure(f"Could not start bash in {cwd}: {exc}") from None
    return ToolOutput(
        content=(
            f"Command running in background with ID: {shell.id}. Read its output with "
            f"BashOutput and stop it with KillShell."
        ),
        # Claude Code's field name, for stream-json consumers that look for it.
        data={"backgroundTaskId": shell.id, "pid": shell.pid},
    )


def bash_timeout_ms(ctx: ToolContext, requested: int | None) -> int:
    """The requested timeout, or the default, capped to the maximum (from the environment)."""
    default = _positive_setting(ctx, "BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
    ceiling = max(_positive_setting(ctx, "BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS), default)
    return min(requested or default, ceiling)


def _positive_setting(ctx: ToolContext, name: str, fallback: int) -> int:
    """A positive whole number from the environment; `fallback` when unset or unusable, as in
    Claude Code, which ignores a value it cannot read rather than refusing to run."""
    raw = env_value(ctx, name)
    try:
        value = int(raw) if raw else fallback
    except ValueError:
        return fallback
    return value if value > 0 else fallback


def output_limit(ctx: ToolContext) -> int:
    """How many characters of output one result may show (`BASH_MAX_OUTPUT_LENGTH`, bounded)."""
    raw = env_value(ctx, "BASH_MAX_OUTPUT_LENGTH")
    try:
        value = int(raw) if raw else DEFAULT_MAX_OUTPUT_CHARS
    except ValueError:
        value = DEFAULT_MAX_OUTPUT_CHARS
    return max(MIN_OUTPUT_CHARS, min(value, MAX_OUTPUT_CHARS_CEILING))


def _to_output(
    result: CommandResult, *, limit: int, timeout_ms: int, saved: SavedOutput | None
) -> ToolOutput:
    """Stdout then stderr with the notes after them: whole if they fit `limit`, else a preview
    of the saved file, or with no file cut once."""
    notes = _notes(result, timeout_ms)
    streams = [
        (name, captured.rstrip())
        for name, captured in (("stdout", result.stdout_capture), ("stderr", result.stderr_capture))
        if not captured.blank
    ]
    text, dropped = cut_streams(streams, limit - sum(len(note) + 1 for note in notes))
    if saved is not None:
        shown = _saved_preview(saved, streams, limit) if dropped else None
        if shown is None:
            saved.discard()
        else:
            text, notes = shown, [*notes, *_unsaved_notes(saved)]
    content = "\n".join(part for part in (text, *notes) if part)
    return ToolOutput(
        content=content,
        is_error=result.timed_out or result.interrupted or result.exit_code != 0,
        data={
            "stdout": result.stdout,
            "stderr": result.stderr,
            "exit_code": result.exit_code,
            "interrupted": result.interrupted,
        },
    )


def _saved_preview(
    saved: SavedOutput, streams: list[tuple[str, Captured]], limit: int
) -> str | None:
    """The preview of the whole output, joined in one file; None when it cannot be written."""
    try:
        path = saved.keep()
    except OSError:
        saved.discard()
        return None
    return preview(streams, path=path, chars=saved.chars, lines=saved.lines, limit=limit)


def _unsaved_notes(saved: SavedOutput) -> list[str]:
    """What the file lacks: output beyond the most that is saved of a stream."""
    return [
        f"(The file holds only the first {spool.written} characters of {name}; the command "
        f"printed {spool.dropped} more, which were not kept.)"
        for name, spool in (("stdout", saved.stdout), ("stderr", saved.stderr))
        if spool.dropped
    ]


def _notes(result: CommandResult, timeout_ms: int) -> list[str]:
    notes: list[str] = []
    if result.timed_out:
        notes.append(f"Command timed out after {timeout_ms / 1000:g} s and was stopped.")
    elif result.interrupted:
        notes.append(f"Command was killed by a signal (exit code {result.exit_code}).")
    elif result.exit_code != 0:
        notes.append(f"Exit code {result.exit_code}")
    return notes
