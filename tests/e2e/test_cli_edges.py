"""Odd inputs and signals: one clear line or a clean result, never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.cli import clean_env, start_tool_run, stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


def test_values_of_flags_stayer_does_not_act_on_are_not_taken_for_the_prompt(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("hello"))
    done = stayer(
        "-p", "--effort", "high", "--agent", "reviewer", "--debug-file", "d.log",
        "--bare", "say hi", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert (done.status, done.stdout) == (0, "hello\n"), done.stderr
    assert done.stderr.splitlines() == [
        f"stayer: {flag} is not supported yet and was ignored"
        for flag in ("--agent", "--effort", "--debug-file", "--bare")
    ]
    assert "say hi" in json.dumps(server.requests[0].messages[-1])


def test_a_stray_argument_is_an_error_not_a_silent_prompt(tmp_path: Path) -> None:
    done = stayer("-p", "--effort", "a", "b", "say hi", cwd=tmp_path)
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
    marker, started = tmp_path / "survived", tmp_path / "started"
    command = f"touch {started}; sleep 30; touch {marker}"
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    process, _ = start_tool_run(tmp_path, server.env(), started)
    process.send_signal(signal.SIGTERM)
    rest, err = process.communicate(timeout=15)

    assert process.returncode == 128 + signal.SIGTERM, err
    result = json.loads(rest.strip().splitlines()[-1])
    assert result["terminal_reason"] == "aborted_tools"
    time.sleep(0.2)
    assert not marker.exists()


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
    marker, started = tmp_path / "survived", tmp_path / "started"
    stubborn = f"trap '' TERM INT HUP; touch {started}; sleep 3; touch {marker}"
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": stubborn})))
    process, _ = start_tool_run(tmp_path, server.env(), started)
    with process:
        process.send_signal(signal.SIGTERM)
        time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert process.returncode == 128 + signal.SIGTERM
    time.sleep(3.5)
    assert not marker.exists(), "the command outlived stayer"
