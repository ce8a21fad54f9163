"""The Bash tool, running real commands in a temporary directory."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stayer.events import ToolCallProgress, ToolReport
from stayer.tools.base import MAX_RESULT_CHARS, ToolContext, ToolFailure
from stayer.tools.builtin.bash import (
    DEFAULT_MAX_OUTPUT_CHARS,
    BashInput,
    BashTool,
    bash_timeout_ms,
)
from tests.unit.tools.helpers import is_running, run_tool, text_of


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_output_is_stdout_then_stderr(ctx: ToolContext) -> None:
    output = await run_tool(BashTool(), ctx, command="echo out; echo err >&2")
    assert text_of(output) == "out\nerr"
    assert not output.is_error
    assert output.data == {
        "stdout": "out\n",
        "stderr": "err\n",
        "exit_code": 0,
        "interrupted": False,
    }


async def test_non_zero_exit_is_an_error_with_the_code(ctx: ToolContext) -> None:
    output = await run_tool(BashTool(), ctx, command="echo oops >&2; exit 3")
    assert output.is_error
    assert text_of(output) == "oops\nExit code 3"
    assert output.data["exit_code"] == 3


async def test_silent_success_returns_empty_text(ctx: ToolContext) -> None:
    output = await run_tool(BashTool(), ctx, command="true")
    assert (text_of(output), output.is_error) == ("", False)


async def test_timeout_is_an_error_with_partial_output_and_kills_children(
    ctx: ToolContext,
) -> None:
    started = time.monotonic()
    output = await run_tool(
        BashTool(), ctx, command="echo started; sleep 60 & echo $!; wait", timeout=400
    )
    assert time.monotonic() - started < 5
    assert output.is_error
    lines = text_of(output).splitlines()
    assert lines[0] == "started"
    assert lines[-1] == "Command timed out after 0.4 s and was stopped."
    assert not is_running(int(lines[1]))


def _texts_to(chunks: list[str]) -> Callable[[ToolReport], None]:
    """An `emit` that keeps the text of each progress report (Bash reports nothing else)."""

    def emit(event: ToolReport) -> None:
        assert isinstance(event, ToolCallProgress), event
        chunks.append(event.text)

    return emit


async def test_cancelling_the_call_kills_the_command(tmp_path: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(cwd=tmp_path, emit=_texts_to(chunks))
    task = asyncio.create_task(run_tool(BashTool(), ctx, command="sleep 60 & echo $!; wait"))
    deadline = time.monotonic() + 5
    while "\n" not in "".join(chunks):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    child = int("".join(chunks))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not is_running(child)


async def test_progress_receives_output_as_it_comes(tmp_path: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(cwd=tmp_path, emit=_texts_to(chunks))
    await run_tool(BashTool(), ctx, command="echo one; echo two >&2")
    assert sorted("".join(chunks).split()) == ["one", "two"]


def _numbered(width: int, count: int) -> str:
    """What ``seq -f '%0{width}g' 1 {count}`` prints: lines of `width` digits."""
    return "".join(f"{n:0{width}d}\n" for n in range(1, count + 1))


def _one_cut(text: str) -> tuple[str, str, str]:
    """The text before the only omission marker, what the marker says, and the text after."""
    parts = re.split(r"\n\n\.\.\. \[([^]]*)\] \.\.\.\n\n", text)
    assert len(parts) == 3, f"expected exactly one marker, found {len(parts) // 2}"
    return parts[0], parts[1], parts[2]


async def test_five_megabytes_of_output_are_cut_once_with_the_true_count(
    ctx: ToolContext,
) -> None:
    stdout = _numbered(99, 50_000)  # 5,000,000 characters
    output = await run_tool(BashTool(), ctx, command="seq -f '%099g' 1 50000")
    text = text_of(output)
    head, marker, tail = _one_cut(text)
    assert len(text) <= DEFAULT_MAX_OUTPUT_CHARS
    assert stdout.startswith(head) and head.startswith("0" * 98 + "1\n")
    assert stdout.rstrip().endswith(tail) and tail.endswith("0" * 94 + "50000")
    omitted = len(stdout.rstrip()) - len(head) - len(tail)
    assert marker == f"{omitted} characters of stdout omitted"
    assert len(head) + len(tail) > DEFAULT_MAX_OUTPUT_CHARS - 300  # the room is used


async def test_a_cut_through_both_streams_counts_each(ctx: ToolContext) -> None:
    stdout, stderr = _numbered(99, 30_000), _numbered(49, 60_000)
    output = await run_tool(
        BashTool(), ctx, command="seq -f '%099g' 1 30000; seq -f '%049g' 1 60000 >&2"
    )
    head, marker, tail = _one_cut(text_of(output))
    assert stdout.startswith(head) and stderr.rstrip().endswith(tail)
    from_stdout = len(stdout.rstrip()) - len(head)
    from_stderr = len(stderr.rstrip()) - len(tail)
    assert marker == (
        f"{from_stdout + from_stderr} characters omitted: "
        f"{from_stdout} of stdout, {from_stderr} of stderr"
    )


async def test_a_cut_in_stdout_keeps_stderr_and_the_exit_code_within_the_limit(
    tmp_path: Path,
) -> None:
    ctx = ToolContext(cwd=tmp_path, env={"BASH_MAX_OUTPUT_LENGTH": "5000"})
    stdout = _numbered(99, 50_000)
    output = await run_tool(
        BashTool(), ctx, command="seq -f '%099g' 1 50000; echo 'it broke' >&2; exit 3"
    )
    text = text_of(output)
    head, marker, tail = _one_cut(text)
    assert len(text) <= 5000
    assert tail.endswith("\nit broke\nExit code 3")
    shown_of_stdout = tail.removesuffix("\nit broke\nExit code 3")
    assert stdout.rstrip().endswith(shown_of_stdout)
    omitted = len(stdout.rstrip()) - len(head) - len(shown_of_stdout)
    assert marker == f"{omitted} characters of stdout omitted"


async def test_the_output_limit_never_passes_the_result_cap(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, env={"BASH_MAX_OUTPUT_LENGTH": "150000"})
    text = text_of(await run_tool(BashTool(), ctx, command="seq -f '%099g' 1 50000"))
    assert MAX_RESULT_CHARS - 300 < len(text) <= MAX_RESULT_CHARS


async def test_working_directory_persists_between_calls(ctx: ToolContext) -> None:
    (ctx.cwd / "sub").mkdir()
    tool = BashTool()
    await run_tool(tool, ctx, command="cd sub")
    output = await run_tool(tool, ctx, command="pwd -P")
    assert text_of(output) == str((ctx.cwd / "sub").resolve())


async def test_directory_change_survives_a_failing_command(ctx: ToolContext) -> None:
    (ctx.cwd / "sub").mkdir()
    tool = BashTool()
    failed = await run_tool(tool, ctx, command="cd sub && exit 4")
    assert text_of(failed) == "Exit code 4"
    output = await run_tool(tool, ctx, command="pwd -P")
    assert text_of(output) == str((ctx.cwd / "sub").resolve())


async def test_a_vanished_directory_falls_back_to_the_start(ctx: ToolContext) -> None:
    (ctx.cwd / "gone").mkdir()
    tool = BashTool()
    await run_tool(tool, ctx, command="cd gone")
    (ctx.cwd / "gone").rmdir()
    output = await run_tool(tool, ctx, command="pwd -P")
    assert text_of(output) == str(ctx.cwd.resolve())


async def test_missing_working_directory_is_a_failure(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "missing")
    with pytest.raises(ToolFailure, match="does not exist"):
        await run_tool(BashTool(), ctx, command="true")


async def test_context_env_reaches_the_command(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, env={"STAYER_TEST_VALUE": "42"})
    output = await run_tool(BashTool(), ctx, command='echo "$STAYER_TEST_VALUE"')
    assert text_of(output) == "42"


def test_classification_and_permission_subject() -> None:
    tool = BashTool()
    tool_input = BashInput(command="rm -rf build")
    assert not tool.is_read_only(tool_input)
    assert not tool.is_concurrency_safe(tool_input)
    assert tool.permission_subject(tool_input) == "rm -rf build"


async def test_a_command_reading_stdin_gets_end_of_file(ctx: ToolContext) -> None:
    output = await run_tool(BashTool(), ctx, command='read -r line; echo "read says $?"; cat')
    assert text_of(output) == "read says 1"


async def test_a_daemon_left_behind_does_not_hold_up_the_call(ctx: ToolContext) -> None:
    started = time.monotonic()
    output = await run_tool(BashTool(), ctx, command="sleep 60 & echo $!; echo launched")
    daemon = int(text_of(output).splitlines()[0])
    try:
        assert time.monotonic() - started < 5  # the daemon would hold the pipes for 60 s
        assert text_of(output).splitlines()[1:] == ["launched"]
        assert not output.is_error and is_running(daemon)
    finally:
        os.kill(daemon, signal.SIGKILL)


@pytest.mark.parametrize(
    ("env", "asked_ms", "stopped_after"),
    [
        ({"BASH_DEFAULT_TIMEOUT_MS": "300"}, None, "0.3"),
        ({"BASH_DEFAULT_TIMEOUT_MS": "100", "BASH_MAX_TIMEOUT_MS": "300"}, 60_000, "0.3"),
        # The maximum is never below the default, as in Claude Code.
        ({"BASH_DEFAULT_TIMEOUT_MS": "400", "BASH_MAX_TIMEOUT_MS": "200"}, 60_000, "0.4"),
        # A value that is not a positive number is ignored, not fatal.
        ({"BASH_DEFAULT_TIMEOUT_MS": "soon", "BASH_MAX_TIMEOUT_MS": "0"}, 300, "0.3"),
    ],
)
async def test_timeouts_follow_the_environment(
    tmp_path: Path, env: dict[str, str], asked_ms: int | None, stopped_after: str
) -> None:
    ctx = ToolContext(cwd=tmp_path, env=env)
    raw = (
        {"command": "sleep 60"}
        if asked_ms is None
        else {"command": "sleep 60", "timeout": asked_ms}
    )
    started = time.monotonic()
    output = await run_tool(BashTool(), ctx, **raw)
    assert time.monotonic() - started < 5
    assert text_of(output) == f"Command timed out after {stopped_after} s and was stopped."


def test_timeouts_default_to_two_minutes_and_cap_at_ten(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, env={"BASH_DEFAULT_TIMEOUT_MS": "", "BASH_MAX_TIMEOUT_MS": ""})
    assert [bash_timeout_ms(ctx, asked) for asked in (None, 5_000, 3_600_000)] == [
        120_000,
        5_000,
        600_000,
    ]


async def test_output_goes_out_as_live_lines_and_the_result_is_unchanged(tmp_path: Path) -> None:
    command = "for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.05; done; printf end"
    quiet = await run_tool(BashTool(), ToolContext(cwd=tmp_path), command=command)
    seen: list[ToolCallProgress] = []

    def emit(event: ToolReport) -> None:
        assert isinstance(event, ToolCallProgress), event
        seen.append(event)

    watched_ctx = ToolContext(cwd=tmp_path, tool_use_id="toolu_1", emit=emit)
    watched = await run_tool(BashTool(), watched_ctx, command=command)

    lines = "".join(event.text for event in seen).splitlines()
    # Each stream in its own order; which of two pipes is read first is the kernel's choice.
    assert [line for line in lines if not line.startswith("err")] == ["out1", "out2", "out3", "end"]
    assert [line for line in lines if line.startswith("err")] == ["err1", "err2", "err3"]
    assert {(event.tool_use_id, event.omitted_lines) for event in seen} == {("toolu_1", 0)}
    assert (watched.content, watched.is_error, watched.data) == (
        quiet.content,
        quiet.is_error,
        quiet.data,
    )
    assert text_of(watched) == "out1\nout2\nout3\nend\nerr1\nerr2\nerr3"
