"""Taking the figures: spawn a client against a `TimedServer`, wait for it, read the clocks.

A *subject* is a command line that talks to ANTHROPIC_BASE_URL: stayer itself, or the floor
script. Each measurement starts a fresh tenant of the fake server, spawns the subject in a clean
environment (PATH, a throwaway HOME, LANG, NO_COLOR=1 and the server's two variables; nothing
else is inherited, so no real key or proxy setting leaks in), and reaps it with `os.wait4`.

* Start-up: `perf_counter()` just before `Popen` to the arrival of the first request.
* Turns: for request k answered with a Bash tool call, overhead k = arrival of request k+1 minus
  the moment the last byte of response k was sent (parsing the stream, running `bash -c true`,
  building and sending the next request); wall k = arrival k+1 minus arrival k.
* CPU: user + system time from the same rusage (the process and the bash commands it ran);
  a turn's CPU is a multi-turn run's minus a one-turn run's, divided by the turns.
* Peak RSS: VmHWM of that one pid, polled from /proc/<pid>/status every few milliseconds
  until it exits (VmHWM only grows, so the last reading is the peak up to a few ms before
  exit). `ru_maxrss` from `os.wait4(pid)` is kept too, but only as a cross-check: it also
  counts the peaks of the children the process reaped, and on this kernel a `bash -c true`
  spawned from a 34 MiB floor script has been seen to report 43 MiB.

Every run is checked: exit status 0, exactly the expected number of requests, the final text on
standard output, and no history violation or unexpected request at the server. A run that fails
a check raises `BenchmarkError` instead of producing numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.timed_server import FINAL_TEXT, TimedServer, bash_turns, text_reply

REPO = Path(__file__).resolve().parent.parent
DEFAULT_VENV = REPO / ".venv"
FLOOR_SCRIPT = REPO / "benchmarks" / "floor.py"
ASYNC_FLOOR_SCRIPT = REPO / "benchmarks" / "floor_async.py"
STAYER_FLAGS = (
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
)
PROMPT = "hi"
RUN_TIMEOUT_S = 300.0


class BenchmarkError(RuntimeError):
    """A run did not behave (crashed, wrong request count, wrong output)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """A client under measurement: a name for the table and its command line."""

    name: str
    argv: tuple[str, ...]


def stayer_subject(venv: Path = DEFAULT_VENV) -> Subject:
    """`stayer -p "hi" --output-format stream-json --verbose --dangerously-skip-permissions`."""
    return Subject("stayer", (str(venv / "bin" / "stayer"), "-p", PROMPT, *STAYER_FLAGS))


def floor_subject(venv: Path = DEFAULT_VENV) -> Subject:
    """The toy loop, run as a plain script by the same interpreter stayer's entry point uses."""
    return Subject("floor", (str(venv / "bin" / "python"), str(FLOOR_SCRIPT), PROMPT))


def async_floor_subject(venv: Path = DEFAULT_VENV) -> Subject:
    """The toy loop on asyncio and httpx's async client (`floor_async.py`), run the same way."""
    return Subject("async floor", (str(venv / "bin" / "python"), str(ASYNC_FLOOR_SCRIPT), PROMPT))


USER_SETTINGS = {
    "permissions": {
        "allow": ["Bash(git status)", "Bash(git diff:*)", "Bash(npm test:*)", "Read", "Glob"],
        "deny": ["Read(.env)", "Bash(curl:*)"],
        "defaultMode": "default",
    },
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
    },
    "env": {"EXAMPLE_FLAG": "1"},
    "statusLine": {"type": "command", "command": "echo here"},
}
"""What a Claude Code user's settings file typically holds: rules, a hook, env, and keys
stayer has no use for (read, then ignored)."""


def stayer_with_settings_subject(venv: Path, settings: Path) -> Subject:
    """stayer given `USER_SETTINGS` as a settings file (`--settings`, read like the others)."""
    settings.write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    argv = (str(venv / "bin" / "stayer"), "-p", PROMPT, "--settings", str(settings))
    return Subject("stayer, settings file", (*argv, *STAYER_FLAGS))


@dataclass(frozen=True, slots=True)
class Exit:
    """How a spawned subject ended."""

    started: float
    ended: float
    status: int
    peak_rss_kib: int
    ru_maxrss_kib: int
    cpu_s: float
    stdout: str
    stderr: str


@dataclass(frozen=True, slots=True)
class StartupRun:
    """One single-turn run: time to the first request, and the CPU the whole run used."""

    first_request_s: float
    cpu_s: float


@dataclass(frozen=True, slots=True)
class TurnRun:
    """One multi-turn run: per-turn samples in seconds, the whole run, and the memory peak."""

    overheads_s: tuple[float, ...]
    turn_walls_s: tuple[float, ...]
    total_s: float
    peak_rss_kib: int
    ru_maxrss_kib: int
    cpu_s: float


def clean_env(server_env: Mapping[str, str], home: Path) -> dict[str, str]:
    """A minimal environment: enough to find bash and python, and the fake server."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        **server_env,
    }


class _PeakWatcher:
    """Polls one pid's VmHWM (KiB) from /proc until the process is gone or told to stop."""

    def __init__(self, pid: int, interval_s: float = 0.003) -> None:
        self._path = Path(f"/proc/{pid}/status")
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.peak_kib = 0
        self._thread = threading.Thread(target=self._poll, name="vmhwm-poller", daemon=True)
        self._thread.start()

    def _read(self) -> int | None:
        try:
            text = self._path.read_text()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0  # a zombie has no memory lines left; keep the last reading

    def _poll(self) -> None:
        while not self._stop.is_set():
            value = self._read()
            if value is None:
                return
            self.peak_kib = max(self.peak_kib, value)
            self._stop.wait(self._interval_s)

    def stop(self) -> int:
        """Stop polling; the highest VmHWM seen (0 without /proc)."""
        self._stop.set()
        self._thread.join()
        return self.peak_kib


def spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Exit:
    """Run `argv` to completion with output in files, watching its VmHWM; reaps it with wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=dict(env), cwd=cwd
        )
        watcher = _PeakWatcher(proc.pid)
        watchdog = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        watchdog.start()
        try:
            _, wait_status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
            peak = watcher.stop()
        ended = time.perf_counter()
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    # Linux reports ru_maxrss in KiB, macOS in bytes.
    maxrss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    cpu = usage.ru_utime + usage.ru_stime
    return Exit(started, ended, proc.returncode, peak, maxrss, cpu, stdout, stderr)


def _check(subject: Subject, done: Exit, server: TimedServer, expected_requests: int) -> None:
    problems: list[str] = []
    if done.status != 0:
        problems.append(f"exit status {done.status}")
    if len(server.timings) != expected_requests:
        problems.append(f"{len(server.timings)} requests, expected {expected_requests}")
    if FINAL_TEXT not in done.stdout:
        problems.append(f"final text {FINAL_TEXT!r} missing from standard output")
    if server.violations or server.unexpected:
        problems.append(f"server saw {server.violations} / {server.unexpected}")
    if problems:
        tail = done.stderr.strip()[-2000:]
        raise BenchmarkError(f"{subject.name}: {'; '.join(problems)}\nstderr: {tail}")


def measure_startup(subject: Subject, workdir: Path) -> StartupRun:
    """Seconds from spawning `subject` to its first request reaching the server."""
    with TimedServer() as server:
        server.enqueue(text_reply())
        done = spawn(subject.argv, clean_env(server.env("anthropic"), workdir), workdir)
        _check(subject, done, server, expected_requests=1)
        return StartupRun(server.timings[0].arrived - done.started, done.cpu_s)


def measure_turns(subject: Subject, turns: int, workdir: Path) -> TurnRun:
    """Run `turns` Bash tool turns and a final text; per-turn overheads and walls, peak RSS."""
    with TimedServer() as server:
        server.respond_with(bash_turns(turns))
        done = spawn(subject.argv, clean_env(server.env("anthropic"), workdir), workdir)
        server.respond_with(None)
        _check(subject, done, server, expected_requests=turns + 1)
        timings = server.timings
    overheads = tuple(timings[k + 1].arrived - timings[k].finished for k in range(turns))
    walls = tuple(timings[k + 1].arrived - timings[k].arrived for k in range(turns))
    total = done.ended - done.started
    return TurnRun(overheads, walls, total, done.peak_rss_kib, done.ru_maxrss_kib, done.cpu_s)
