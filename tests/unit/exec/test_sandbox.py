"""Commands under bubblewrap, on real processes: what they may write, the network they get,
and process control (timeouts, cancellation, background shells) working through the sandbox.
Where bubblewrap cannot run, each test skips with the probe's answer."""

from __future__ import annotations

import asyncio
import random
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from stayer.exec import BackgroundShells, Sandbox, run_command, sandbox_problem
from tests.sandboxes import outside_tmp, running_with, skip_without_sandbox, working_sandbox


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def sandbox(work: Path) -> Iterator[Sandbox]:
    with working_sandbox([work]) as made:
        yield made


async def _run(command: str, sandbox: Sandbox, cwd: Path, timeout_s: float = 20) -> str:
    result = await run_command(command, cwd=cwd, env=None, timeout_s=timeout_s, sandbox=sandbox)
    return f"{result.exit_code}|{result.stdout}|{result.stderr}"


def _marker() -> str:
    """A sleep no other test runs, to find its processes by."""
    return f"sleep {3600 + random.randrange(1, 10**6) / 10**7:.7f}"


async def _until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.01)


def test_the_command_line_binds_the_working_directories_over_a_read_only_root() -> None:
    sandbox = Sandbox((Path("/w"), Path("/tmp/x/cwd-file")), tmp=Path("/host/tmp"))
    assert sandbox.wrap(["bash", "-c", "ls"], cwd=Path("/w/sub")) == [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--bind", "/host/tmp", "/tmp",
        "--bind", "/w", "/w", "--bind", "/tmp/x/cwd-file", "/tmp/x/cwd-file",
        "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--chdir", "/w/sub",
        "--", "bash", "-c", "ls",
    ]  # fmt: skip
    networked = Sandbox((Path("/"),), network=True, bwrap="/opt/bwrap")
    assert networked.wrap(["true"], cwd=Path("/")) == [
        "/opt/bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--unshare-all", "--share-net", "--cap-drop", "ALL", "--die-with-parent", "--chdir", "/",
        "--", "true",
    ]  # fmt: skip


async def test_writes_inside_the_working_directory_succeed_and_outside_fail(
    sandbox: Sandbox, work: Path
) -> None:
    with outside_tmp() as outside:
        command = f"echo kept > inside; touch {outside}/escaped"
        assert await _run(command, sandbox, work) == (
            f"1||touch: cannot touch '{outside}/escaped': Read-only file system\n"
        )
        assert not (outside / "escaped").exists()
    assert (work / "inside").read_text() == "kept\n"


async def test_the_rest_of_the_machine_is_still_readable(sandbox: Sandbox, work: Path) -> None:
    with outside_tmp() as outside:
        (outside / "notes").write_text("readable\n")
        assert await _run(f"cat {outside}/notes", sandbox, work) == "0|readable\n|"


async def test_tmp_is_private_and_lasts_across_commands(
    sandbox: Sandbox, work: Path, tmp_path: Path
) -> None:
    (tmp_path / "host-secret").write_text("not for the sandbox")
    assert await _run("echo left > /tmp/note", sandbox, work) == "0||"
    found = await _run(f"cat /tmp/note; ls {tmp_path}/host-secret", sandbox, work)
    assert found == (
        f"2|left\n|ls: cannot access '{tmp_path}/host-secret': No such file or directory\n"
    )
    assert sandbox.tmp is not None and (sandbox.tmp / "note").read_text() == "left\n"


async def _listening() -> tuple[asyncio.Server, int, list[str]]:
    """A server on loopback that records each connection; its port."""
    seen: list[str] = []

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append("connected")
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


@pytest.mark.parametrize("network", [False, True])
async def test_the_network_is_refused_unless_allowed(work: Path, *, network: bool) -> None:
    server, port, seen = await _listening()
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        with working_sandbox([work], network=network) as sandbox:
            printed = await _run(connect, sandbox, work)
        await _until(lambda: bool(seen) or not network)
    finally:
        server.close()
        await server.wait_closed()
    if network:
        assert (printed, seen) == ("0|connected\n|", ["connected"])
    else:
        assert printed.startswith("1||") and "Connection refused" in printed, printed
        assert seen == []


async def test_a_timeout_signals_the_command_itself_and_leaves_nothing_running(
    sandbox: Sandbox, work: Path
) -> None:
    """The command is still in the group we signal: its TERM trap runs, then all of it is gone."""
    sleep = _marker()
    command = f"trap 'echo stopped > trapped; exit 1' TERM; touch started; {sleep} & wait"
    result = await run_command(command, cwd=work, env=None, timeout_s=1.0, sandbox=sandbox)
    assert result.timed_out
    assert (work / "started").exists() and (work / "trapped").read_text() == "stopped\n"
    await _until(lambda: not running_with(sleep))


async def test_cancelling_a_sandboxed_command_stops_it(sandbox: Sandbox, work: Path) -> None:
    sleep = _marker()
    task = asyncio.create_task(
        run_command(f"{sleep}", cwd=work, env=None, timeout_s=60, sandbox=sandbox)
    )
    await _until(lambda: bool(running_with(sleep)))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _until(lambda: not running_with(sleep))


@pytest.fixture
async def shells() -> AsyncIterator[BackgroundShells]:
    made = BackgroundShells()
    yield made
    await made.aclose()


async def test_a_background_shell_runs_sandboxed_and_kill_stops_all_of_it(
    sandbox: Sandbox, work: Path, shells: BackgroundShells
) -> None:
    sleep = _marker()
    with outside_tmp() as outside:
        command = (
            f"touch {outside}/escaped 2>/dev/null || echo read-only; touch started; {sleep} & wait"
        )
        shell = await shells.start(
            command, cwd=work, env=None, max_output_chars=1_000, sandbox=sandbox
        )
        await _until((work / "started").exists)
        assert not (outside / "escaped").exists()
    await shell.kill()
    assert (shell.status, (await shell.read()).stdout.text) == ("killed", "read-only\n")
    await _until(lambda: not running_with(sleep))


def test_a_missing_bubblewrap_is_reported_not_run_around(work: Path) -> None:
    missing = work / "no-such-bwrap"
    problem = sandbox_problem(Sandbox((work,), bwrap=str(missing)), cwd=work)
    assert problem == f"could not start {missing}: No such file or directory"


def _program(path: Path, script: str) -> str:
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_bubblewrap_refusing_to_run_gives_its_own_last_line(work: Path, tmp_path: Path) -> None:
    """As where the kernel forbids user namespaces: bwrap says why and exits 1."""
    refusing = _program(
        tmp_path / "bwrap-refusing",
        "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1",
    )
    problem = sandbox_problem(Sandbox((work,), bwrap=refusing), cwd=work)
    assert problem == "bwrap: setting up uid map: Permission denied"


def test_the_probe_runs_once_for_sandboxes_that_differ_only_in_tmp(
    work: Path, tmp_path: Path
) -> None:
    skip_without_sandbox(work)
    calls = tmp_path / "calls"
    counting = _program(tmp_path / "bwrap-counting", f'echo run >> {calls}; exec bwrap "$@"')
    first = Sandbox((work,), bwrap=counting, tmp=tmp_path / "one")
    second = Sandbox((work,), bwrap=counting, tmp=tmp_path / "two")
    assert (sandbox_problem(first, cwd=work), sandbox_problem(second, cwd=work)) == ("", "")
    assert calls.read_text() == "run\n"


async def test_places_that_run_code_later_stay_read_only_inside(work: Path) -> None:
    # git's config and hooks, and the agent's own settings, would run outside the sandbox at
    # the next `git` or the next session: the sandbox may not plant anything there
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".stayer").mkdir()
    (work / ".stayer" / "settings.json").write_text("{}")
    (work / "src").mkdir()
    with working_sandbox([work]) as sandbox:
        attempts = {
            ".git/config": "echo '[core] fsmonitor = x' >> .git/config",
            ".git/hooks": "echo x > .git/hooks/post-checkout",
            ".stayer": "echo '{\"hooks\": {}}' > .stayer/settings.json",
            ".claude (missing)": "mkdir -p .claude && echo '{}' > .claude/settings.json",
        }
        for name, command in attempts.items():
            assert not (await _run(command, sandbox, work)).startswith("0|"), name
        assert (await _run("echo ok > src/x && cat src/x", sandbox, work)).startswith("0|ok")
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert not (work / ".git" / "hooks" / "post-checkout").exists()
    assert (work / ".stayer" / "settings.json").read_text() == "{}"
    assert not (work / ".claude" / "settings.json").exists()
