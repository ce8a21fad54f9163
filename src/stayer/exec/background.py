"""Commands left running in the background: started at once, read from later, stopped on demand.

A background shell runs `bash -c` in a session (so a process group) of its own, with stdin from
/dev/null, and is never timed out. Its output is kept per stream since the last read, up to a
cap (start and end survive, as in `capture`), so a chatty server cannot fill memory between
two reads. `BackgroundShells` holds the shells of one session under Claude Code's ids
(``bash_1``, ``bash_2``, ...) and stops every one of them, with whatever they started, when the
session closes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from msgspec import Struct

from stayer.exec.capture import Captured
from stayer.exec.process import (
    DRAIN_GRACE_S,
    LIVE_GROUPS,
    Collector,
    exit_code_of,
    group_alive,
    shell_argv,
    spawn,
    stop_group,
    wait_at_most,
)
from stayer.exec.sandbox import Sandbox
from stayer.exec.watchdog import release_group

ShellStatus = Literal["running", "completed", "failed", "killed"]


class ShellOutput(Struct, frozen=True):
    """What a background shell wrote since the last read, and how it stands now."""

    stdout: Captured
    stderr: Captured
    status: ShellStatus
    exit_code: int | None
    """None while the shell runs."""


class BackgroundShell:
    """One command running in the background, read and stopped through its handle."""

    def __init__(
        self, shell_id: str, command: str, transport: asyncio.SubprocessTransport, sink: Collector
    ) -> None:
        self.id = shell_id
        self.command = command
        self.started_at = time.time()
        self._transport = transport
        self._sink = sink
        self._pgid = transport.get_pid()
        self._killed = False
        self._drained = False

    @property
    def pid(self) -> int:
        """The shell's process id, which is also its process group's id."""
        return self._pgid

    @property
    def exit_code(self) -> int | None:
        """The shell's exit code (``128 + N`` for signal N), or None while it runs."""
        returncode = self._transport.get_returncode()
        return None if returncode is None else exit_code_of(returncode)[0]

    @property
    def status(self) -> ShellStatus:
        """Running, completed (exit code 0), failed (any other), or killed by us."""
        code = self.exit_code
        if self._killed:
            return "killed"
        if code is None:
            return "running"
        return "completed" if code == 0 else "failed"

    async def read(self) -> ShellOutput:
        """The output since the last read (which it consumes), with the status now.

        Once the shell has exited, the first read waits briefly for output still in the pipes,
        so a finished shell is reported with all it printed.
        """
        if self._sink.exited.is_set():
            await self._drain()
        stdout, stderr = self._sink.take()
        return ShellOutput(stdout, stderr, self.status, self.exit_code)

    async def wait(self) -> int:
        """Wait for the shell itself to exit and its output to arrive; its exit code."""
        await self._sink.exited.wait()
        await self._drain()
        code = self.exit_code
        assert code is not None  # process_exited comes after the return code is known
        return code

    async def _drain(self) -> None:
        # What a finished shell left running may hold the pipes for ever: wait once, briefly.
        if not self._drained:
            await wait_at_most(self._sink.pipes_closed, DRAIN_GRACE_S)
            self._drained = True

    async def kill(self) -> None:
        """Stop the shell and its whole group (SIGTERM, a grace, SIGKILL); keeps the output
        not yet read. Also ends what a finished shell left running."""
        if self.status == "running":
            self._killed = True
        if self.status == "running" or group_alive(self._pgid):
            await stop_group(self._pgid, self._sink.exited)
        LIVE_GROUPS.discard(self._pgid)
        self._transport.close()
        release_group(self._pgid)


class BackgroundShells:
    """The background shells of one session, by id, in the order they started."""

    def __init__(self) -> None:
        self._shells: dict[str, BackgroundShell] = {}
        self._started = 0

    async def start(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str] | None,
        max_output_chars: int,
        sandbox: Sandbox | None = None,
    ) -> BackgroundShell:
        """Run `command` with ``bash -c`` in the background (inside `sandbox` when given);
        returns at once. Raises `OSError` when bash cannot start. Each stream keeps
        `max_output_chars` between two reads."""
        transport, sink = await spawn(
            shell_argv(command, cwd=cwd, sandbox=sandbox),
            cwd=cwd,
            env=env,
            collector=Collector(max_output_chars, None),
        )
        self._started += 1
        shell = BackgroundShell(f"bash_{self._started}", command, transport, sink)
        self._shells[shell.id] = shell
        return shell

    def get(self, shell_id: str) -> BackgroundShell | None:
        """The shell with this id, if this session started one."""
        return self._shells.get(shell_id)

    def list(self) -> tuple[BackgroundShell, ...]:
        """Every shell started, running or not, oldest first."""
        return tuple(self._shells.values())

    async def aclose(self) -> None:
        """Stop every shell and what it left running, side by side."""
        await asyncio.gather(*(shell.kill() for shell in self._shells.values()))
