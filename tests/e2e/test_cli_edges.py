"""Odd inputs and signals: one clear line or a clean result, never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from stayer.exec.watchdog_program import GRACE_S
from tests.e2e.cli import clean_env, start_tool_run, stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.process_table import assert_gone_within, family_command, read_pids

STOPPED_WITHIN_S = 10.0
"""A stopped command's processes are gone when stayer exits; this only bounds the poll."""


def test_values_of_flags_stayer_does_not_act_on_are_not_taken_for_the_prompt(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("hello"))
    done = stayer(
        "-p", "--task-budget", "9000", "--name", "reviewer", "--debug-file", "d.log",
        "--bare", "say hi", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert (done.status, done.stdout) == (0, "hello\n"), done.stderr
    assert done.stderr.splitlines() == [
        f"stayer: {flag} has no effect: stayer does not support it yet"
        for flag in ("--task-budget", "--debug-file", "--name", "--bare")
    ]
    assert "say hi" in json.dumps(server.requests[0].messages[-1])


def test_a_stray_argument_is_an_error_not_a_silent_prompt(tmp_path: Path) -> None:
    done = stayer("-p", "--task-budget", "a", "b", "say hi", cwd=tmp_path)
    assert done.status == 2
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert "unexpected argument 'say hi'" in line


def test_bad_prompt_sources_are_one_line_errors(tmp_path: Path) -> None:
    binary = tmp_path / "prompt.bin"
    binary.write_bytes(b"\xff\xfe\x00binary")
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    cases = [
        (("-p", "hi", "--system-prompt-file", str(binary)), "is not UTF-8 text"),
        (("-p", "hi", "--system-prompt-file", str(tmp_path / "nope")), "cannot read"),
        (("-p", "   "), "no prompt"),
    ]
    for args, complaint in cases:
        done = stayer(*args, cwd=tmp_path, env=env)
        assert done.status == 2, args
        (line,) = done.stderr.strip().splitlines()
        assert complaint in line


def test_a_base_url_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    for variable, key, model in (
        ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "sonnet"),
        ("OPENAI_BASE_URL", "OPENAI_API_KEY", "gpt-5.5"),
    ):
        env = {variable: "http://[::1", key: "k"}
        done = stayer("-p", "hi", "--model", model, cwd=tmp_path, env=env)
        assert done.status == 1, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.endswith(
            f"the base URL 'http://[::1' is not a valid http(s) URL; fix {variable}"
        )


def test_non_utf8_input_on_stdin_is_tolerated(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("read it"))
    process = subprocess.run(
        [sys.executable, "-m", "stayer", "-p"],
        cwd=tmp_path,
        env=clean_env(server.env()),
        input=b"summarise: caf\xe9",
        capture_output=True,
        timeout=60,
    )
    assert process.returncode == 0, process.stderr
    assert "caf\ufffd" in json.dumps(server.requests[0].messages[-1], ensure_ascii=False)


def test_a_prompt_argument_does_not_wait_forever_on_an_open_stdin(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("went ahead"))
    with subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "hi"],
        cwd=tmp_path,
        env=clean_env(server.env()),
        stdin=subprocess.PIPE,  # left open: a caller that never writes nor closes it
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.wait(timeout=30)
        out, err = process.stdout.read(), process.stderr.read()
    assert out == "went ahead\n", err
    assert "no input on standard input" in err


def test_sigterm_ends_the_run_cleanly_and_stops_the_tool(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    command = family_command(pids_file)
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    process, _ = start_tool_run(tmp_path, server.env(), pids_file)
    pids = read_pids(pids_file)
    process.send_signal(signal.SIGTERM)
    rest, err = process.communicate(timeout=15)

    assert process.returncode == 128 + signal.SIGTERM, err
    result = json.loads(rest.strip().splitlines()[-1])
    assert result["terminal_reason"] == "aborted_tools"
    assert_gone_within(pids, STOPPED_WITHIN_S)


def test_a_reader_that_goes_away_is_not_a_traceback(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("x " * 50_000))
    server.allow_unused = True  # the reader may be gone before stayer asks the model
    with subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "hi", "--output-format", "stream-json",
         "--verbose", "--include-partial-messages"],
        cwd=tmp_path,
        env=clean_env(server.env()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()
        process.wait(timeout=30)
        err = process.stderr.read().decode()
    assert "Traceback" not in err
    assert process.returncode == 141


def test_a_second_signal_kills_a_stubborn_command_and_exits_at_once(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pids_file, termed = tmp_path / "pids", tmp_path / "termed"
    stubborn = family_command(pids_file, stubborn_reporting_to=termed)
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": stubborn})))
    process, _ = start_tool_run(tmp_path, server.env(), pids_file)
    pids = read_pids(pids_file)
    with process:
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while not termed.exists():  # stayer has taken the first signal and is stopping the tool
            assert time.monotonic() < deadline, "the first SIGTERM never reached the command"
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        rest, err = process.communicate(timeout=10)

    assert process.returncode == 128 + signal.SIGTERM, err
    # A run that ended cleanly prints its result; exiting at once leaves no time to.
    assert [json.loads(line)["type"] for line in rest.splitlines()] == [], rest
    # SIGKILL went out before stayer exited; well inside the grace after which stayer's
    # watchdog would have killed them anyway, so this fails if stayer did not.
    assert_gone_within(pids, GRACE_S / 2)
