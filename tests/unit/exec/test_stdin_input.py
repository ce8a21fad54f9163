"""run_command with `input`: the bytes arrive on stdin, which then closes; a program that never
reads them is no error; the timeout works as without it."""

from __future__ import annotations

import time
from pathlib import Path

from stayer.exec import run_command


async def test_the_input_arrives_on_stdin_and_then_it_closes(tmp_path: Path) -> None:
    result = await run_command(
        "cat; echo '<end>'", cwd=tmp_path, env=None, timeout_s=10, input=b'{"a": 1}\n'
    )
    assert (result.stdout, result.exit_code) == ('{"a": 1}\n<end>\n', 0)


async def test_a_large_input_is_fed_whole(tmp_path: Path) -> None:
    data = b"x" * 1_000_000  # far more than a pipe holds at once
    result = await run_command("wc -c", cwd=tmp_path, env=None, timeout_s=10, input=data)
    assert result.stdout.strip() == "1000000"


async def test_a_program_that_never_reads_its_input_is_fine(tmp_path: Path) -> None:
    result = await run_command(
        "echo ignored; exit 4", cwd=tmp_path, env=None, timeout_s=10, input=b"y" * 1_000_000
    )
    assert (result.stdout, result.exit_code, result.timed_out) == ("ignored\n", 4, False)


async def test_a_program_fed_input_still_times_out(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run_command(
        "cat >/dev/null; sleep 30", cwd=tmp_path, env=None, timeout_s=0.5, input=b"data"
    )
    assert result.timed_out
    assert time.monotonic() - started < 10
