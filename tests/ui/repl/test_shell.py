"""`!command`: the person's shell command run through the exec layer (real bash), its output
and exit status kept, capped as the Bash tool's, stoppable at once, and put into the
conversation in Claude Code's shell-mode form."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from stayer.loop.abort import AbortSignal
from stayer.ui.repl.shell import BangResult, bang_prompt, run_bang


def base_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **extra}


async def test_output_exit_status_and_working_directory(tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("hi\n")
    result = await run_bang(
        "ls; echo to-err >&2; exit 3", cwd=tmp_path, env=base_env(), abort=AbortSignal()
    )
    assert result == BangResult(
        command="ls; echo to-err >&2; exit 3", stdout="here.txt\n", stderr="to-err\n", exit_code=3
    )


async def test_the_prompt_is_claude_codes_shell_mode_form() -> None:
    ok = BangResult(command="git status --short", stdout=" M a.py\n", stderr="", exit_code=0)
    assert bang_prompt(ok) == (
        "<bash-input>git status --short</bash-input>\n"
        "<bash-stdout> M a.py\n</bash-stdout><bash-stderr></bash-stderr>"
    )
    failed = BangResult(command="false", stdout="", stderr="oops\n", exit_code=1)
    assert bang_prompt(failed) == (
        "<bash-input>false</bash-input>\n"
        "<bash-stdout></bash-stdout><bash-stderr>oops\n\nExit code 1</bash-stderr>"
    )
    stopped = BangResult(command="sleep 9", stdout="", stderr="", exit_code=130, interrupted=True)
    assert bang_prompt(stopped).endswith("<bash-stderr>Command was interrupted.</bash-stderr>")


async def test_credentials_are_withheld_and_git_never_opens_an_editor(tmp_path: Path) -> None:
    env = base_env(ANTHROPIC_API_KEY="sk-secret", MY_SETTING="kept")
    result = await run_bang(
        'echo "key=${ANTHROPIC_API_KEY-unset} mine=$MY_SETTING editor=$GIT_EDITOR"',
        cwd=tmp_path,
        env=env,
        abort=AbortSignal(),
    )
    assert result.stdout == "key=unset mine=kept editor=true\n"


async def test_interrupting_stops_the_command_and_what_it_started_at_once(
    tmp_path: Path,
) -> None:
    abort = AbortSignal()
    marker, child_pid = tmp_path / "started", tmp_path / "child.pid"
    command = f"echo before; sleep 300 & echo $! > {child_pid}; touch {marker}; wait"
    running = asyncio.create_task(run_bang(command, cwd=tmp_path, env=base_env(), abort=abort))
    while not marker.exists():  # the command says it has started
        await asyncio.sleep(0.01)
        assert not running.done()
    began = time.monotonic()
    abort.abort()
    result = await running
    assert time.monotonic() - began < 3
    assert result.interrupted and result.exit_code == 130
    assert result.stdout == "before\n"  # what it printed until then is kept
    pid = int(child_pid.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


async def test_output_is_capped_as_the_bash_tools_is(tmp_path: Path) -> None:
    env = base_env(BASH_MAX_OUTPUT_LENGTH="2000")
    command = "seq 1 20000; seq 1 5 >&2"
    result = await run_bang(command, cwd=tmp_path, env=env, abort=AbortSignal())
    assert len(result.stdout) + len(result.stderr) <= 2000
    assert result.stdout.startswith("1\n2\n3\n")
    assert result.stdout.endswith("19999\n20000\n")
    assert "omitted" in result.stdout  # the marker counting what was dropped
    assert result.stderr == "1\n2\n3\n4\n5\n"  # the short stream is kept whole


async def test_a_missing_directory_is_a_result_not_a_crash(tmp_path: Path) -> None:
    result = await run_bang("pwd", cwd=tmp_path / "gone", env=base_env(), abort=AbortSignal())
    assert result.exit_code == 127
    assert "Could not start bash" in result.stderr
    assert str(tmp_path / "gone") in result.stderr


async def test_a_timeout_stops_it_and_says_so(tmp_path: Path) -> None:
    env = base_env(BASH_DEFAULT_TIMEOUT_MS="300")
    result = await run_bang("sleep 30", cwd=tmp_path, env=env, abort=AbortSignal())
    assert result.timed_out
    assert "Command timed out after 0.3 s and was stopped." in bang_prompt(result)
