"""Probes: short read-only programs run side by side, synchronously, under one deadline.

Setting up a session asks the machine a few quick questions (`git status`, `git log`) before any
event loop is free to wait on them, so this runner blocks. The probes start together and are
read together, so the wait is the slowest one's, never their sum. Each gets its own process
group and stdin from /dev/null. A probe still running at the deadline, or one that writes more
than it may, has its whole group killed at once (nothing it does is worth a grace period) and
is reaped before we return; what it wrote up to then is kept. A program that cannot start is
a result, not an exception: a probe's answer is always optional.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import Struct

from stayer.exec.watchdog import ensure_watchdog, release_group, watch_group

_CHUNK = 65_536
_REAP_S = 1.0


class ProbeResult(Struct, frozen=True):
    """How one probe ended: `exit_code` is None when it never finished on its own (it could not
    start, ran past the deadline, or wrote past its cap); `problem` then says which."""

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    problem: str = ""
    cut: bool = False
    """Whether stdout was longer than the cap and only its start was kept."""


class _Running(Struct):
    argv: tuple[str, ...]
    process: subprocess.Popen[bytes]
    out: bytearray
    err: bytearray
    problem: str = ""
    cut: bool = False


def run_probes(
    commands: Sequence[Sequence[str]],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout_s: float,
    max_bytes: int,
) -> tuple[ProbeResult, ...]:
    """Run every command at once and wait at most `timeout_s` in all; results in command order.

    `env` is the whole environment (None inherits ours). Each stream keeps at most `max_bytes`;
    a probe whose stdout goes past that is stopped and its result marked `cut`.
    """
    deadline = time.monotonic() + timeout_s
    started: list[_Running | ProbeResult] = [_start(tuple(argv), cwd, env) for argv in commands]
    running = [probe for probe in started if isinstance(probe, _Running)]
    try:
        _read_until(running, deadline, max_bytes)
    finally:
        for probe in running:
            try:
                # its pipes are closed, so it is exiting; wait for that, up to the deadline
                probe.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                probe.problem = probe.problem or f"no answer within {timeout_s:g} s"
                _kill(probe.process)
            release_group(probe.process.pid)
    return tuple(item if isinstance(item, ProbeResult) else _result(item) for item in started)


def _start(
    argv: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None
) -> _Running | ProbeResult:
    try:
        ensure_watchdog()
    except OSError as error:
        return ProbeResult(argv, None, problem=f"the process watchdog cannot run: {error}")
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return ProbeResult(argv, None, problem=f"could not start {argv[0]}: {error.strerror}")
    try:
        watch_group(process.pid)
    except OSError as error:
        _kill(process)
        _close(process)
        return ProbeResult(argv, None, problem=f"the process watchdog cannot run: {error}")
    return _Running(argv, process, bytearray(), bytearray())


def _read_until(running: Sequence[_Running], deadline: float, max_bytes: int) -> None:
    """Read every probe's pipes until all are closed, or the deadline passes."""
    with selectors.DefaultSelector() as selector:
        for probe in running:
            for pipe, buffer in (
                (probe.process.stdout, probe.out),
                (probe.process.stderr, probe.err),
            ):
                if pipe is not None:
                    selector.register(pipe, selectors.EVENT_READ, (probe, buffer))
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            for key, _ in selector.select(remaining):
                probe, buffer = key.data
                if key.fileobj not in selector.get_map():
                    continue  # this probe was stopped earlier in the same round
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif _keep(probe, buffer, chunk, max_bytes):
                    _stop(selector, probe)


def _keep(probe: _Running, buffer: bytearray, chunk: bytes, max_bytes: int) -> bool:
    """Keep what fits of `chunk`; True when the probe's stdout went past the cap, so it has
    said all we keep and is stopped (stderr past the cap is read and dropped)."""
    room = max(0, max_bytes - len(buffer))
    buffer.extend(chunk[:room])
    if buffer is not probe.out or len(chunk) <= room:
        return False
    probe.cut = True
    return True


def _stop(selector: selectors.BaseSelector, probe: _Running) -> None:
    for key in list(selector.get_map().values()):
        if key.data[0] is probe:
            selector.unregister(key.fileobj)
    _kill(probe.process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the probe's group and reap its leader."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(_REAP_S)


def _close(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def _result(probe: _Running) -> ProbeResult:
    _close(probe.process)
    finished = not probe.problem and not probe.cut
    code = probe.process.returncode if finished else None
    return ProbeResult(
        probe.argv,
        code,
        stdout=probe.out.decode("utf-8", errors="replace"),
        stderr=probe.err.decode("utf-8", errors="replace"),
        problem=probe.problem or ("stopped: it wrote more than was wanted" if probe.cut else ""),
        cut=probe.cut,
    )
