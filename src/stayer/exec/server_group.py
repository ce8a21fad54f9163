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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .watchdog import release_group, watch_group

SHELL = "/bin/sh"
_LEAD = 'echo $$ > "$0" && exec "$@"'
"""$0 is the pid file; "$@" the server's command line, run in place of the shell."""


def found_program(command: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise `FileNotFoundError` naming `command` when it cannot be run as given (the shell
    would otherwise say so only on the server's standard error)."""
    if os.sep in command:
        path = Path(command) if Path(command).is_absolute() else Path(cwd or ".") / command
        if path.is_file():
            return
    elif shutil.which(command, path=env.get("PATH", os.defpath)) is not None:
        return
    raise FileNotFoundError(2, "command not found", command)


class ServerGroup:
    """The process group of one server start (see the module)."""

    def __init__(self, pid_file: Path) -> None:
        self._pid_file = pid_file
        self._pgid: int | None = None
        self._watched = False
        self._pidfd: int | None = None

    def argv(self, command: str, args: Sequence[str]) -> tuple[str, list[str]]:
        """The program and arguments that start `command args` as the group's leader."""
        with contextlib.suppress(FileNotFoundError):
            self._pid_file.unlink()  # a stale one from an earlier start must not be read
        return SHELL, ["-c", _LEAD, str(self._pid_file), command, *args]

    @property
    def pgid(self) -> int | None:
        """The group's id, once the shell has written it."""
        if self._pgid is None:
            with contextlib.suppress(OSError, ValueError):
                self._pgid = int(self._pid_file.read_text().strip())
        return self._pgid

    def watch(self, on_exit: Callable[[], None]) -> None:
        """Once the server answers: have the watchdog stop its group should stayer die, and
        call `on_exit` (on the running loop) the moment the server's process ends."""
        pgid = self.pgid
        if pgid is None or self._watched:
            return
        watch_group(pgid)
        self._watched = True
        with contextlib.suppress(OSError):  # no pidfd (an old kernel): its output ending tells
            self._pidfd = os.pidfd_open(pgid)
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
        pgid = self.pgid
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            if self._watched:
                release_group(pgid)
        self._watched, self._pgid = False, None
        with contextlib.suppress(FileNotFoundError):
            self._pid_file.unlink()
