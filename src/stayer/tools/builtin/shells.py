"""BashOutput and KillShell: reading and stopping the commands Bash left in the background.

Both take the id Bash returned for ``run_in_background`` (Claude Code's field names: `bash_id`,
`shell_id`). BashOutput gives what the shell printed since the last read, in Claude Code's
tagged layout (status, exit code, stdout, stderr), so each read costs only the new lines.
"""

from __future__ import annotations

import re

from pydantic import Field

from stayer.exec import BackgroundShell, Captured, ShellOutput, cut_streams
from stayer.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput
from stayer.tools.builtin.bash import output_limit


def _shell(ctx: ToolContext, shell_id: str) -> BackgroundShell:
    shell = ctx.shells.get(shell_id)
    if shell is not None:
        return shell
    known = ", ".join(shell.id for shell in ctx.shells.list())
    listed = f"the shells of this session are: {known}" if known else "none has been started"
    raise ToolFailure(
        f"No background shell has the id {shell_id!r}; {listed}. Start one with Bash and "
        "run_in_background."
    )


class BashOutputInput(ToolInput):
    """Input of the BashOutput tool (Claude Code's field names)."""

    bash_id: str = Field(description="The ID of the background shell to read output from.")
    filter: str | None = Field(
        default=None,
        description=(
            "Optional regular expression: only output lines that match it are shown. Lines "
            "that do not match are dropped and cannot be read again."
        ),
    )


class BashOutputTool(Tool[BashOutputInput]):
    """Reports a background shell's new output and whether it is still running."""

    name = "BashOutput"
    input_model = BashOutputInput
    read_only = True
    # Each stream is capped while it is collected, and the result is cut once here.
    bounds_own_results = True
    description = (
        "Reads the output of a command started with Bash and run_in_background.\n\n"
        "- Returns only what the command printed since the last read, with its status "
        "(running, completed, failed, killed) and, once it ended, its exit code.\n"
        "- `filter` keeps only the lines that match a regular expression; the other new "
        "lines are dropped for good.\n"
        "- Use it to follow servers, watchers and long builds without waiting for them."
    )

    def is_concurrency_safe(self, tool_input: BashOutputInput) -> bool:
        return True

    async def call(self, tool_input: BashOutputInput, ctx: ToolContext) -> ToolOutput:
        pattern = _compiled(tool_input.filter)
        shell = _shell(ctx, tool_input.bash_id)
        read = await shell.read()
        stdout, stderr = (_filtered(stream, pattern) for stream in (read.stdout, read.stderr))
        return ToolOutput(
            content=_render(read, stdout, stderr, output_limit(ctx)),
            data={
                "shellId": shell.id,
                "command": shell.command,
                "status": read.status,
                "exitCode": read.exit_code,
                "stdout": stdout.text,
                "stderr": stderr.text,
            },
        )


def _compiled(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolFailure(
            f"The filter {pattern!r} is not a valid regular expression ({exc}); fix it or "
            "leave it out. No output was consumed."
        ) from None


def _filtered(stream: Captured, pattern: re.Pattern[str] | None) -> Captured:
    """The stream's kept lines that match `pattern` (all of them without one)."""
    if pattern is None:
        return stream

    def keep(text: str) -> str:
        return "".join(line for line in text.splitlines(keepends=True) if pattern.search(line))

    return Captured(keep(stream.head), keep(stream.tail), stream.omitted)


def _render(read: ShellOutput, stdout: Captured, stderr: Captured, limit: int) -> str:
    """Claude Code's layout: tagged status, exit code and streams, within `limit` in all
    (each stream shown gets an equal share, cut in its middle when over it)."""
    parts = [f"<status>{read.status}</status>"]
    if read.exit_code is not None:
        parts.append(f"<exit_code>{read.exit_code}</exit_code>")
    streams = [
        (name, captured.rstrip())
        for name, captured in (("stdout", stdout), ("stderr", stderr))
        if not captured.blank
    ]
    if not streams:
        return "\n\n".join([*parts, "(no new output)"])
    framing = sum(len(part) + 2 for part in parts) + sum(2 * len(name) + 9 for name, _ in streams)
    share = max(0, limit - framing) // len(streams)
    for name, captured in streams:
        text, _ = cut_streams([(name, captured)], share)
        parts.append(f"<{name}>\n{text}\n</{name}>")
    return "\n\n".join(parts)


class KillShellInput(ToolInput):
    """Input of the KillShell tool (Claude Code's field name)."""

    shell_id: str = Field(description="The ID of the background shell to kill.")


class KillShellTool(Tool[KillShellInput]):
    """Stops a background shell and every process it started."""

    name = "KillShell"
    input_model = KillShellInput
    # It only ends processes this session itself started with Bash, which needed permission
    # then; Claude Code does not ask again to stop them.
    read_only = True
    description = (
        "Stops a command started with Bash and run_in_background, with every process it "
        "started. Takes the shell's ID. Output not yet read stays readable with BashOutput."
    )

    async def call(self, tool_input: KillShellInput, ctx: ToolContext) -> ToolOutput:
        shell = _shell(ctx, tool_input.shell_id)
        if shell.status != "running":
            raise ToolFailure(
                f"Shell {shell.id} is not running (status: {shell.status}); nothing to kill."
            )
        await shell.kill()
        return ToolOutput(
            content=f"Successfully killed shell: {shell.id} ({shell.command})",
            data={"shellId": shell.id, "status": shell.status},
        )
