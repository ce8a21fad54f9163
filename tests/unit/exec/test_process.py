"""run_command / run_argv against real processes: output, exit codes, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from stayer.exec import OutputLines, process, run_argv, run_command
from tests.unit.tools.helpers import is_running


async def _wait_until(condition: object, seconds: float = 5.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.01)


async def test_stdout_stderr_and_exit_code_are_reported(tmp_path: Path) -> None:
    result = await run_command(
        "echo out; echo err >&2; exit 3", cwd=tmp_path, env=None, timeout_s=10
    )
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert not (result.timed_out or result.interrupted or result.truncated)


async def test_runs_in_cwd_with_the_given_environment(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "GREETING": "hello"}
    result = await run_command('pwd -P; echo "$GREETING"', cwd=tmp_path, env=env, timeout_s=10)
    assert result.stdout == f"{tmp_path.resolve()}\nhello\n"


async def test_stdin_is_empty(tmp_path: Path) -> None:
    result = await run_command("cat; echo done", cwd=tmp_path, env=None, timeout_s=10)
    assert result.stdout == "done\n"


async def test_output_lines_reach_the_watcher_as_they_arrive(tmp_path: Path) -> None:
    seen: list[OutputLines] = []
    task = asyncio.create_task(
        run_command(
            "echo first; sleep 0.5; echo second >&2",
            cwd=tmp_path,
            env=None,
            timeout_s=10,
            on_lines=seen.append,
        )
    )
    await _wait_until(lambda: bool(seen))
    assert not task.done()
    result = await task
    assert seen == [OutputLines("first\n"), OutputLines("second\n")]
    assert result.stderr == "second\n"


async def test_multibyte_characters_split_across_chunks_decode(tmp_path: Path) -> None:
    result = await run_command(
        r"printf '\xc3'; sleep 0.1; printf '\xa9\n'", cwd=tmp_path, env=None, timeout_s=10
    )
    assert result.stdout == "é\n"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run_command("sleep 60 & echo $!; wait", cwd=tmp_path, env=None, timeout_s=0.5)
    assert result.timed_out
    assert not result.interrupted
    assert time.monotonic() - started < 5
    child = int(result.stdout.split()[0])
    assert not is_running(child)


async def test_a_child_ignoring_sigterm_gets_sigkill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "KILL_GRACE_S", 0.3)
    result = await run_command(
        "trap '' TERM; sleep 60 & echo $!; wait", cwd=tmp_path, env=None, timeout_s=0.3
    )
    assert result.timed_out
    assert not is_running(int(result.stdout.split()[0]))


async def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    seen: list[OutputLines] = []
    task = asyncio.create_task(
        run_command(
            "sleep 60 & echo $!; wait",
            cwd=tmp_path,
            env=None,
            timeout_s=60,
            on_lines=seen.append,
        )
    )
    await _wait_until(lambda: bool(seen))
    child = int(seen[0].text)
    assert is_running(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not is_running(child)


async def test_huge_output_keeps_head_and_tail_and_counts_the_rest(tmp_path: Path) -> None:
    result = await run_command(
        "seq 1 200000", cwd=tmp_path, env=None, timeout_s=10, max_output_chars=1000
    )
    printed = "".join(f"{n}\n" for n in range(1, 200_001))
    kept = result.stdout_capture
    assert result.truncated
    assert len(kept.head) + len(kept.tail) == 1000  # memory stays bounded by the cap
    assert printed.startswith(kept.head) and printed.endswith(kept.tail)
    assert kept.omitted == len(printed) - 1000
    assert (
        result.stdout
        == f"{kept.head}\n\n... [{kept.omitted} characters omitted] ...\n\n{kept.tail}"
    )


async def test_background_process_does_not_hold_up_the_result(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run_command("sleep 30 & echo $!", cwd=tmp_path, env=None, timeout_s=10)
    assert time.monotonic() - started < 3
    child = int(result.stdout.split()[0])
    try:
        assert result.exit_code == 0
    finally:
        os.kill(child, signal.SIGKILL)


async def test_stop_leftovers_stops_what_the_command_left_running(tmp_path: Path) -> None:
    # a child of the shell, and an orphan whose parent is already gone
    command = "sleep 30 & echo $!; (sleep 30 & echo $!); exit 4"
    result = await run_command(command, cwd=tmp_path, env=None, timeout_s=10, stop_leftovers=True)
    assert (result.exit_code, result.timed_out, result.interrupted) == (4, False, False)
    children = [int(pid) for pid in result.stdout.split()]
    assert len(children) == 2
    assert not any(is_running(child) for child in children)


async def test_death_by_signal_is_reported_as_interrupted(tmp_path: Path) -> None:
    result = await run_command("kill -KILL $$", cwd=tmp_path, env=None, timeout_s=10)
    assert result.interrupted
    assert not result.timed_out
    assert result.exit_code == 128 + signal.SIGKILL


async def test_run_argv_passes_arguments_verbatim(tmp_path: Path) -> None:
    result = await run_argv(
        ["printf", "%s|", "a b", "$HOME", "*"], cwd=tmp_path, env=None, timeout_s=10
    )
    assert result.stdout == "a b|$HOME|*|"


async def test_run_argv_raises_for_a_missing_program(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await run_argv(["no-such-program-stayer"], cwd=tmp_path, env=None, timeout_s=10)
