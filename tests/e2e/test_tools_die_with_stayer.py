"""`kill -9` of stayer while a tool runs: every process the tool started dies too.

The command the model runs starts a shell of its own with a child, writes every pid (its own
shell, that shell, that shell's child) to a file once all run, and waits. The test waits for the
file, kills stayer with SIGKILL, and polls until each pid is gone.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.cli import clean_env, start_tool_run
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, anthropic_text, reply
from tests.sandboxes import running_with, skip_without_sandbox
from tests.unit.tools.helpers import is_running

GONE_WITHIN_S = 20.0


def family_command(folder: Path) -> tuple[str, Path]:
    """A command whose process family (shell, child shell, grandchild) writes its pids to the
    returned file, all at once when all are running, then waits."""
    inner, pids = folder / "inner-pids", folder / "pids"
    command = (
        f"bash -c 'sleep 1000 & echo $$ $! > {inner}.tmp; mv {inner}.tmp {inner}; wait' & "
        f"while [ ! -s {inner} ]; do sleep 0.01; done; "
        f'echo $$ "$(cat {inner})" > {pids}.tmp && mv {pids}.tmp {pids}; wait'
    )
    return command, pids


def running_pids(pids: Path) -> list[int]:
    found = [int(word) for word in pids.read_text().split()]
    assert len(found) == 3 and all(is_running(pid) for pid in found), found
    return found


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while alive := [pid for pid in pids if is_running(pid)]:
        if time.monotonic() > deadline:
            for pid in alive:  # do not leave them behind for the next test
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"still running {GONE_WITHIN_S:g} s after stayer died: {alive}")
        time.sleep(0.02)


def sleeping(tag: str) -> list[int]:
    """Host pids of `sleep TAG` itself (the shell's and bwrap's command lines hold TAG too)."""
    exact = f"sleep\0{tag}\0".encode()
    found = []
    for pid in running_with(tag):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == exact:
                found.append(pid)
        except OSError:
            continue
    return found


def start_stayer(cwd: Path, env: dict[str, str], *flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "go", "--dangerously-skip-permissions", *flags],
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():  # the command says it runs: a signal, not a guess
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        assert process.poll() is None, "stayer ended before its command started"
        time.sleep(0.01)


def test_a_foreground_command_dies_with_stayer(server: FakeModelServer, tmp_path: Path) -> None:
    command, pids_file = family_command(tmp_path)
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    process, _ = start_tool_run(tmp_path, server.env(), pids_file)
    pids = running_pids(pids_file)

    process.kill()
    process.communicate(timeout=15)

    assert_all_gone(pids)


def test_a_background_shell_dies_with_stayer(server: FakeModelServer, tmp_path: Path) -> None:
    command, pids_file = family_command(tmp_path)
    background = {"command": command, "run_in_background": True}
    # The answer after the call is held back, so stayer is still waiting for it when killed.
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", background)), anthropic_text("done").paused(at=0)
    )
    process = start_stayer(tmp_path, server.env())
    server.wait_for_requests(2, timeout_s=30)
    wait_for(pids_file, process)
    pids = running_pids(pids_file)

    process.kill()
    process.communicate(timeout=15)

    assert_all_gone(pids)


def test_a_sandboxed_command_dies_with_stayer(server: FakeModelServer, tmp_path: Path) -> None:
    """Inside the sandbox's pid namespace `$!` names no host process, so the host's processes
    are found by a number in their command lines; one has even left the process group."""
    skip_without_sandbox(tmp_path)
    tag = str(1_000_000 + secrets.randbelow(1_000_000))
    command = f"sleep {tag} & setsid sleep {tag} & touch started; wait"
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    process = start_stayer(tmp_path, server.env(), "--sandbox")
    wait_for(tmp_path / "started", process)
    deadline = time.monotonic() + 20
    while len(sleeping(tag)) < 2:  # both sleeps run (setsid has made its own session)
        assert time.monotonic() < deadline, running_with(tag)
        time.sleep(0.01)
    assert len(running_with(tag)) == 5  # bwrap twice, bash, and both sleeps

    process.kill()
    process.communicate(timeout=15)

    assert_all_gone(running_with(tag))
    assert running_with(tag) == []
