"""An MCP stdio server as a process group stayer can stop, and whose end it sees.

The `mcp` SDK starts a stdio server in a session of its own (so a group of its own) but never
says which process it is. Started through `/bin/sh`, which writes its own pid to a file and then
becomes the server (`exec`, so the pid and the group are the server's), the group is known.
Then what the server started is stopped with it when its connection ends (the SDK ends only the
server), the watchdog stops the group if stayer itself is killed (as for every command), and the
server's exit is seen through a pidfd the moment it happens, even when a process it left behind
still holds its output open (the SDK would wait for that output to end).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TypeVar

from .watchdog import release_group, watch_group

SHELL = "/bin/sh"
T = TypeVar("T")
_LEAD = 'echo $$ > "$0" && exec "$@"'
"""$0 is the pid file; "$@" the server's command line, run in place of the shell."""


def found_program(command: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise `FileNotFoundError` (naming the folder, or the command) or `PermissionError`
    when `command` cannot be run from `cwd` as given: the shell would otherwise say so only on
    the server's standard error. A relative command, and relative entries of the server's
    PATH, are taken from `cwd`, as the server's own start takes them."""
    if cwd is not None and not Path(cwd).is_dir():
        raise FileNotFoundError(2, "working directory not found", cwd)
    base = Path(cwd) if cwd else Path.cwd()
    if os.sep in command:
        path = base / command  # an absolute command stays as it is
        if not path.is_file():
            raise FileNotFoundError(2, "command not found", command)
        if not os.access(path, os.X_OK):
            raise PermissionError(13, "command not executable", command)
        return
    entries = env.get("PATH", os.defpath).split(os.pathsep)
    search = os.pathsep.join(str(base / entry) for entry in entries)  # "" is the folder itself
    if shutil.which(command, path=search) is None:
        raise FileNotFoundError(2, "command not found", command)


class ServerGroup:
    """The process group of one server start (see the module).

    Each start has a pid file of its own, made here, read once right after the process is
    spawned, and believed only for a child of this process that leads its own group: a server
    that rewrote the file, or another session's start, can never point the kill elsewhere."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(prefix=".server-", suffix=".pid", dir=folder)
        os.close(descriptor)
        self._pid_file = Path(name)
        self._pgid: int | None = None
        self._pidfd: int | None = None

    def argv(self, command: str, args: Sequence[str]) -> tuple[str, list[str]]:
        """The program and arguments that start `command args` as the group's leader."""
        return SHELL, ["-c", _LEAD, str(self._pid_file), command, *args]

    @property
    def pgid(self) -> int | None:
        """The group's id, once known and checked."""
        return self._pgid

    def around(
        self, transport: AbstractAsyncContextManager[T], on_exit: Callable[[], None]
    ) -> AbstractAsyncContextManager[T]:
        """`transport` (the SDK's stdio client), learning the group the moment the process is
        spawned: the watchdog then stops it should stayer die, however long the server takes
        to answer, and `on_exit` is called (on the loop) the moment the server's process ends."""

        @contextlib.asynccontextmanager
        async def led() -> AsyncIterator[T]:
            async with transport as streams:
                await self._learn(on_exit)
                yield streams

        return led()

    async def _learn(self, on_exit: Callable[[], None]) -> None:
        pid = await _written_pid(self._pid_file)
        if pid is None or not _leads_our_child(pid):
            return
        watch_group(pid)
        self._pgid = pid
        with contextlib.suppress(OSError):  # no pidfd (an old kernel): its output ending tells
            self._pidfd = os.pidfd_open(pid)
            asyncio.get_running_loop().add_reader(self._pidfd, self._ended, on_exit)

    def _ended(self, on_exit: Callable[[], None]) -> None:
        """The server's process ended: say so once (a pidfd stays readable from then on)."""
        if self._pidfd is not None:
            asyncio.get_running_loop().remove_reader(self._pidfd)
        on_exit()

    def stop(self) -> None:
        """Stop every process left in the group (the server's own end is the SDK's), and
        forget it."""
        if self._pidfd is not None:
            with contextlib.suppress(RuntimeError, ValueError):
                asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        pgid, self._pgid = self._pgid, None
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            release_group(pgid)
        with contextlib.suppress(FileNotFoundError):
            self._pid_file.unlink()


PID_WAIT_S = 2.0
"""How long the shell may take to write its pid (it does so before anything else)."""


async def _written_pid(path: Path) -> int | None:
    """The pid the shell wrote to `path`; None when it wrote none in time (or the start
    failed before it could)."""
    deadline = asyncio.get_running_loop().time() + PID_WAIT_S
    while True:
        pid = _pid_in(path)
        if pid is not None:
            return pid
        if asyncio.get_running_loop().time() > deadline:
            return None
        await asyncio.sleep(0.005)


def _pid_in(path: Path) -> int | None:
    """The pid in `path` once the shell has written it whole (a few bytes, read at once)."""
    try:
        text = path.read_text()
        return int(text) if text.endswith("\n") else None
    except (OSError, ValueError):
        return None


def _leads_our_child(pid: int) -> bool:
    """Whether `pid` is a child of this process that leads its own process group (what the
    SDK starts: a session of its own)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        return parent == os.getpid() and os.getpgid(pid) == pid
    except (OSError, ValueError, IndexError):
        return False
