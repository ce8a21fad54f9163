"""A stdio server's process group: what the server leaves running goes with it, and its exit
is seen even while a process it started still holds its output open (found by review: a
crashed server's call hung until its timeout, and its helpers outlived stayer)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from stayer.config.mcp_servers import McpServerConfig
from stayer.mcp.server import McpServer, McpUnavailable
from tests.mcp.conftest import FAST, KITCHEN, Recorder, appears


def with_helper(
    name: str, helper_pid: Path, recorder: Recorder | None = None, wait_file: Path | None = None
) -> McpServer:
    """The test server started by a shell that first leaves a helper running in the
    background (it inherits the server's output), its pid written to `helper_pid`; with
    `wait_file`, the server waits for that file before it answers."""
    waits = f' --wait-file "{wait_file}"' if wait_file is not None else ""
    script = f'sleep 300 & echo $! > "{helper_pid}"; exec "$0" "$1"{waits}'
    config = McpServerConfig(
        name=name,
        transport="stdio",
        scope="flag",
        origin="--mcp-config",
        command="sh",
        args=("-c", script, sys.executable, str(KITCHEN)),
    )
    return McpServer(
        config,
        env={"PATH": os.environ["PATH"]},
        log_dir=helper_pid.parent,
        connect_timeout_s=30,
        on_change=recorder or Recorder(),
        restart_delays_s=FAST,
    )


async def ends(pid: int, timeout_s: float = 10) -> bool:
    """Whether process `pid` ends within `timeout_s` (a kill is delivered, not done, when the
    call returns): told by a pidfd, not by looking again and again."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(descriptor, readable)
    try:
        await asyncio.wait_for(ended, timeout_s)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(descriptor)
        os.close(descriptor)


async def test_what_a_server_left_running_ends_with_it(tmp_path: Path) -> None:
    helper = tmp_path / "helper.pid"
    server = with_helper("helped", helper)
    server.start()
    try:
        await server.wait_settled()
        assert server.status.status == "connected"
        await appears(helper)
        pid = int(helper.read_text())
        assert not await ends(pid, timeout_s=0.2)  # it runs
    finally:
        await server.aclose()
    assert await ends(pid)


async def test_a_crash_is_seen_though_a_helper_keeps_the_output_open(tmp_path: Path) -> None:
    """The helper holds the server's stdout, so no end of output ever comes; the server's own
    exit ends the call at once, and the server is started again."""
    helper = tmp_path / "helper.pid"
    recorder = Recorder()
    server = with_helper("held", helper, recorder)
    server.start()
    try:
        await recorder.until("connected")
        await appears(helper)
        first = int(helper.read_text())
        helper.unlink()
        with pytest.raises(McpUnavailable):  # at once, not when the call's time runs out
            async with asyncio.timeout(15):
                await server.call_tool("crash", {}, timeout_s=50)
        await recorder.until("pending")  # the crashed start is over ...
        assert await ends(first)  # ... and its helper went with it
        await recorder.until("connected")  # started again
        await appears(helper)
        assert int(helper.read_text()) != first
    finally:
        await server.aclose()


async def test_a_server_still_connecting_is_known_to_the_watchdog(tmp_path: Path) -> None:
    """A server that has not answered yet (npx may take many seconds) is already in the
    watchdog's care, so `kill -9` of stayer then still ends what it started (the watchdog's
    own stopping is tested with the commands it guards)."""
    from stayer.exec.watchdog import WATCHDOG

    helper = tmp_path / "helper.pid"
    server = with_helper("slow", helper, wait_file=tmp_path / "never")
    server.start()
    try:
        await appears(helper)  # the server runs, and waits before it answers
        group = os.getpgid(int(helper.read_text()))
        deadline = asyncio.get_running_loop().time() + 10
        while not WATCHDOG.watching(group):
            assert asyncio.get_running_loop().time() < deadline, "the group was never watched"
            await asyncio.sleep(0.01)
        assert server.status.status == "pending"
    finally:
        await server.aclose()
    assert await ends(int(helper.read_text()))


def test_a_command_is_looked_for_as_the_servers_start_would(tmp_path: Path) -> None:
    """From the server's own folder: its missing folder, a file that cannot run, a command on
    a PATH entry relative to that folder, each said as itself (review: the shell in front of
    the server had turned these into wrong lines)."""
    from stayer.exec.server_group import found_program

    folder = tmp_path / "srv"
    (folder / "bin").mkdir(parents=True)
    runner = folder / "bin" / "run.sh"
    runner.write_text("#!/bin/sh\n")
    runner.chmod(0o755)
    still = folder / "still.sh"
    still.write_text("#!/bin/sh\n")
    still.chmod(0o644)
    env = {"PATH": f"bin{os.pathsep}/usr/bin:/bin"}

    found_program("run.sh", env, str(folder))  # bin/ of the server's folder
    found_program("./bin/run.sh", env, str(folder))
    found_program("sh", env, None)
    with pytest.raises(FileNotFoundError) as missing:
        found_program("./bin/run.sh", env, str(tmp_path / "gone"))
    assert missing.value.filename == str(tmp_path / "gone")
    with pytest.raises(PermissionError):
        found_program("./still.sh", env, str(folder))
    with pytest.raises(FileNotFoundError) as unknown:
        found_program("no-such-program-here", env, str(folder))
    assert unknown.value.filename == "no-such-program-here"
