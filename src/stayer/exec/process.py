"""Running a program to completion: the one place stayer starts processes.

Every process gets its own session (so its own process group), stdin from /dev/null (or, when
the caller gives `input`, a pipe that gets those bytes and is then closed: hooks read their
event that way) and pipes for stdout and stderr. Output is decoded as it arrives, kept in
memory only up to a cap (the start and the end survive; the middle is counted and dropped, see
`capture`) and, for whoever watches, handed on as whole lines at a bounded rate (`lines`).
On timeout and on cancellation the whole group is stopped: SIGTERM, a short grace, then SIGKILL,
and the direct child is always reaped before we return.

On a normal exit, processes the command left running in the background are not killed; we stop
reading their output after a short drain, so they neither block us nor keep our pipes alive.
They die with stayer, as everything started here does (`watchdog`).

A program runs only once the watchdog knows its group: it is started behind a gate, a `/bin/sh`
that waits for one line on stdin and then becomes the program (`exec`), and the line is written
after the group is announced. asyncio hands over a started child only after a few turns of the
event loop, long enough on a busy one for the program to start processes of its own; had stayer
died then, the watchdog would not have known to stop them. A stayer gone before the line is
written closes the pipe, and the gate exits without running the program.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import os
import shutil
import signal
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from stayer.exec.capture import Captured, HeadTail, Spool
from stayer.exec.lines import LineRelay, OutputLines
from stayer.exec.sandbox import Sandbox
from stayer.exec.watchdog import ensure_watchdog, release_group, watch_group
from stayer.exec.watchdog_program import group_running, members

KILL_GRACE_S = 2.0
"""How long a stopped process group may take to exit after SIGTERM before it gets SIGKILL."""

DRAIN_GRACE_S = 0.5
"""How long to keep reading after the process exits, for output its leftovers still hold."""

_REAP_WAIT_S = 5.0
_POLL_S = 0.02
_PROC = Path("/proc")


class CommandResult(Struct, frozen=True):
    """How a process ended and what it wrote.

    `exit_code` follows the shell's convention: a death by signal N is ``128 + N``.
    `interrupted` means a signal ended the process without us timing it out (someone else
    killed it). Each stream is kept up to the cap, its middle counted and dropped beyond it.
    """

    stdout_capture: Captured
    stderr_capture: Captured
    exit_code: int
    timed_out: bool = False
    interrupted: bool = False

    @property
    def stdout(self) -> str:
        """Standard output as kept, with a marker where its middle was dropped."""
        return self.stdout_capture.text

    @property
    def stderr(self) -> str:
        """Standard error as kept, with a marker where its middle was dropped."""
        return self.stderr_capture.text

    @property
    def truncated(self) -> bool:
        """Whether either stream was over the cap and lost its middle."""
        return bool(self.stdout_capture.omitted or self.stderr_capture.omitted)


class Collector(asyncio.SubprocessProtocol):
    """Receives a child's output and exit, decoding UTF-8 across chunk boundaries."""

    def __init__(
        self,
        max_chars: int,
        on_lines: Callable[[OutputLines], None] | None,
        spools: tuple[Spool, Spool] | None = None,
    ) -> None:
        self._relay = LineRelay(on_lines) if on_lines is not None else None
        self._spools = {1: spools[0], 2: spools[1]} if spools else {}
        self._max_chars = max_chars
        self._buffers = {1: HeadTail(max_chars), 2: HeadTail(max_chars)}
        self._decoders = {
            fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in (1, 2)
        }
        self._open = {1, 2}
        self.exited = asyncio.Event()
        self.pipes_closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._take(fd, self._decoders[fd].decode(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._finish(fd)

    def process_exited(self) -> None:
        self.exited.set()

    def _take(self, fd: int, text: str) -> None:
        if not text:
            return
        self._buffers[fd].add(text)
        if fd in self._spools:
            self._spools[fd].add(text)
        if self._relay is not None:
            self._relay.add(fd, text)

    def _finish(self, fd: int) -> None:
        if fd not in self._open:
            return
        self._open.discard(fd)
        self._take(fd, self._decoders[fd].decode(b"", final=True))
        if not self._open:
            self.pipes_closed.set()

    def output(self) -> tuple[Captured, Captured]:
        """Stdout and stderr as kept; ends reading for good."""
        for fd in (1, 2):
            self._finish(fd)
        if self._relay is not None:
            self._relay.finish()
        return self._buffers[1].captured(), self._buffers[2].captured()

    def abandon(self) -> None:
        """The run is being given up (cancelled, failing): no more lines for the watcher."""
        if self._relay is not None:
            self._relay.close()

    def take(self) -> tuple[Captured, Captured]:
        """Stdout and stderr kept since the last take, forgotten here; reading goes on."""
        taken = self._buffers[1].captured(), self._buffers[2].captured()
        self._buffers = {1: HeadTail(self._max_chars), 2: HeadTail(self._max_chars)}
        return taken


async def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout_s: float,
    on_lines: Callable[[OutputLines], None] | None = None,
    max_output_chars: int = 30_000,
    spools: tuple[Spool, Spool] | None = None,
    sandbox: Sandbox | None = None,
    input: bytes | None = None,
    stop_leftovers: bool = False,
) -> CommandResult:
    """Run `command` with ``bash -c`` and wait for it (see `run_argv` for the rules); inside
    `sandbox` when one is given."""
    return await run_argv(
        shell_argv(command, cwd=cwd, sandbox=sandbox),
        cwd=cwd,
        env=env,
        timeout_s=timeout_s,
        on_lines=on_lines,
        max_output_chars=max_output_chars,
        spools=spools,
        input=input,
        stop_leftovers=stop_leftovers,
    )


def shell_argv(command: str, *, cwd: Path, sandbox: Sandbox | None) -> list[str]:
    """``bash -c command``, inside `sandbox` when there is one."""
    argv = ["bash", "-c", command]
    return argv if sandbox is None else sandbox.wrap(argv, cwd=cwd)


async def run_argv(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout_s: float,
    on_lines: Callable[[OutputLines], None] | None = None,
    max_output_chars: int = 30_000,
    spools: tuple[Spool, Spool] | None = None,
    input: bytes | None = None,
    stop_leftovers: bool = False,
) -> CommandResult:
    """Run a program and wait for it to finish, time out, or be cancelled.

    `env` is the child's whole environment (None inherits ours). Each of stdout and stderr keeps
    at most `max_output_chars` characters in memory; `spools` (stdout's, stderr's) also copy
    them whole to files as they arrive; `on_lines` gets it as whole lines, bounded (see
    `lines`), the last of them before this returns. On timeout the group is stopped and the
    result has `timed_out`; on cancellation the group is stopped, no more lines go out, and
    `CancelledError` propagates. `input`, when given, is the program's whole stdin (a program
    that exits without reading it is no error). Raises `OSError` when the program cannot be
    started (missing binary, missing `cwd`). With `stop_leftovers`, what the program left
    running in its group when it exited is stopped too, as on timeout.
    """
    transport, collector = await spawn(
        argv,
        cwd=cwd,
        env=env,
        collector=Collector(max_output_chars, on_lines, spools),
        input=input,
    )
    pgid = transport.get_pid()
    timed_out = False
    try:
        try:
            await asyncio.wait_for(collector.exited.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
            await stop_group(pgid, collector.exited)
        if stop_leftovers and not timed_out and group_alive(pgid):
            await stop_group(pgid, collector.exited)
        await wait_at_most(collector.pipes_closed, DRAIN_GRACE_S)
    except BaseException:
        # Cancelled (or failing): the group must not outlive us, nor its lines the call.
        collector.abandon()
        await stop_group(pgid, collector.exited)
        raise
    finally:
        LIVE_GROUPS.discard(pgid)
        returncode = transport.get_returncode()
        transport.close()
        release_group(pgid)
    stdout, stderr = collector.output()
    exit_code, by_signal = exit_code_of(returncode)
    return CommandResult(
        stdout_capture=stdout,
        stderr_capture=stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        interrupted=by_signal and not timed_out,
    )


async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    collector: Collector,
    input: bytes | None = None,
) -> tuple[asyncio.SubprocessTransport, Collector]:
    """Start `argv` in a session of its own, stdin from /dev/null (or fed `input` through a
    pipe, then closed), output into `collector`; its group is recorded in `LIVE_GROUPS`, which
    the caller must discard it from, and watched (`watchdog`), which the caller must release.
    Raises `OSError` when the program, or the watchdog, cannot start."""
    ensure_watchdog()
    _check_program(argv[0], env)
    loop = asyncio.get_running_loop()
    transport, _ = await _start_whole(
        loop.subprocess_exec,
        lambda: collector,
        *_gated(argv, fed=input is not None),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=None if env is None else dict(env),
        start_new_session=True,
    )
    pgid = transport.get_pid()
    try:
        watch_group(pgid)
    except OSError:
        transport.close()  # the gate never opens: the program does not run
        raise
    LIVE_GROUPS.add(pgid)
    _feed(transport, b"\n" + (input or b""))  # open the gate, then the program's own input
    return transport, collector


_GATE = 'read -r _ || exit 125; exec "$@"'
"""Wait for the line that says the group is watched, then become the program (`"$@"`)."""


def _gated(argv: Sequence[str], *, fed: bool) -> tuple[str, ...]:
    """`argv` started behind the gate; its stdin is the rest of the pipe when it is `fed`,
    /dev/null otherwise."""
    script = _GATE if fed else f"{_GATE} </dev/null"
    return ("/bin/sh", "-c", script, "stayer-gate", *argv)


def _check_program(program: str, env: Mapping[str, str] | None) -> None:
    """Raise the `OSError` starting `program` would, as the gate's shell would only report it
    once running."""
    path = None if env is None else env.get("PATH", os.defpath)
    if shutil.which(program, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _feed(transport: asyncio.SubprocessTransport, data: bytes) -> None:
    """Write `data` to the child's stdin and close it. The transport buffers what the pipe
    cannot take at once; a child that exits unread just drops it (the loop reports the broken
    pipe to the protocol, which ignores stdin's loss)."""
    stdin = transport.get_pipe_transport(0)
    if not isinstance(stdin, asyncio.WriteTransport):
        return
    if data:
        stdin.write(data)
    stdin.close()


def exit_code_of(returncode: int | None) -> tuple[int, bool]:
    if returncode is None:  # never reaped (stuck in the kernel); report it as killed
        return 128 + signal.SIGKILL, True
    if returncode < 0:
        return 128 - returncode, True
    return returncode, False


LIVE_GROUPS: set[int] = set()
"""Process groups started and not yet reaped, for `kill_everything_now`."""


def kill_everything_now() -> None:
    """SIGKILL every process group still running, without waiting: the last resort before the
    process itself must exit (a second Ctrl+C, SIGTERM). Safe to call from a signal handler.
    """
    for pgid in list(LIVE_GROUPS):
        _signal_group(pgid, signal.SIGKILL)


async def stop_group(pgid: int, exited: asyncio.Event) -> None:
    """SIGTERM the group, give it a grace period, SIGKILL what is left, reap the leader."""
    _terminate_group(pgid)
    try:
        # Nothing signals "the last member of a group exited", so we poll.
        for _ in range(int(KILL_GRACE_S / _POLL_S)):
            if not group_alive(pgid):
                break
            await asyncio.sleep(_POLL_S)
    finally:
        # Runs even if we are cancelled again mid-grace: nothing may survive.
        if group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
    await wait_at_most(exited, _REAP_WAIT_S)


def _terminate_group(pgid: int) -> None:
    """SIGTERM every member of the group but bubblewrap's own processes: bubblewrap dies of
    SIGTERM and takes its sandbox down at once (`--die-with-parent`), before the command's own
    handlers (a shell's `trap … TERM`) have run; it exits by itself when its command does, and
    SIGKILL after the grace reaches it anyway."""
    if not _PROC.is_dir():
        _signal_group(pgid, signal.SIGTERM)
        return
    for pid, comm in members(pgid):
        if comm != "bwrap":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _start_whole(
    start: Callable[..., Coroutine[Any, Any, tuple[asyncio.SubprocessTransport, Any]]],
    *args: Any,
    **kwargs: Any,
) -> tuple[asyncio.SubprocessTransport, Any]:
    """`start(*args, **kwargs)` (a child's start). A caller cancelled meanwhile (the run was
    interrupted) is told only once the child has started and its group is stopped: the child
    may be running already and have started others, and asyncio alone would kill the child
    only, then wait for pipes that its own children still hold open."""
    task = asyncio.ensure_future(start(*args, **kwargs))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        # cancelled again, or it failed to start: stop waiting, and pass the cancellation on
        with contextlib.suppress(asyncio.CancelledError, Exception):
            transport, protocol = await asyncio.shield(task)
            pgid = transport.get_pid()
            LIVE_GROUPS.add(pgid)  # a second Ctrl+C meanwhile kills it at once
            try:
                exited = protocol.exited if isinstance(protocol, Collector) else asyncio.Event()
                await stop_group(pgid, exited)
            finally:
                LIVE_GROUPS.discard(pgid)
                transport.close()
        raise


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    return group_running(pgid)


async def wait_at_most(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
