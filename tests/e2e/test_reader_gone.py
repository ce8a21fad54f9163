"""A reader of standard output that goes away (`stayer -p ... | head -c 10`) stops stayer at
once, in every output format, even while a long tool call writes nothing: the run is
interrupted, the command dies, the transcript settles, and stayer exits with 141 (as a program
killed by SIGPIPE) and nothing on standard error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env
from tests.e2e.conversations import transcript_of
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.unit.tools.helpers import is_running

FORMATS = ("text", "json", "stream-json")


def start(
    cwd: Path, env: dict[str, str], output_format: str, *flags: str
) -> tuple[subprocess.Popen[bytes], int]:
    """`stayer -p` writing into a real pipe; returns the process and the pipe's reading end."""
    reading, writing = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "stayer", "-p", "go", "--output-format", output_format,
         "--verbose", "--dangerously-skip-permissions", *flags],
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=writing,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(writing)  # the child holds the only writing end: its reader is this test
    return process, reading


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():  # the command says it runs: a signal, not a guess
        assert time.monotonic() < deadline, "the tool call never started"
        assert process.poll() is None, "stayer ended before its tool started"
        time.sleep(0.01)


def stop_leftovers(process: subprocess.Popen[bytes], pid_file: Path) -> None:
    """After a failure, leave nothing running: stayer, and the command it did not stop."""
    if process.poll() is None:
        process.kill()
        process.wait()
    if pid_file.exists() and is_running(pid := int(pid_file.read_text())):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_closed_reader_stops_a_long_tool_call_and_exits_141(
    server: FakeModelServer, tmp_path: Path, output_format: str
) -> None:
    started, pid_file = tmp_path / "started", tmp_path / "sleep.pid"
    command = f"sleep 300 & echo $! > {pid_file}; touch {started}; wait"
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": command})))
    session = str(uuid.uuid4())
    process, reading = start(tmp_path, server.env(), output_format, "--session-id", session)
    try:
        wait_for(started, process)
        if output_format == "stream-json":  # it has written lines: read a few bytes of them
            assert os.read(reading, 10) == b'{"type":"s'
        os.close(reading)
        closed = time.monotonic()
        _, raw = process.communicate(timeout=20)
        elapsed = time.monotonic() - closed
    finally:
        stop_leftovers(process, pid_file)
    err = raw.decode()

    assert (process.returncode, err) == (141, "")
    assert elapsed < 10, f"took {elapsed:.1f} s to notice"
    assert not is_running(int(pid_file.read_text()))
    records = [
        json.loads(line) for line in transcript_of(tmp_path, session).read_text().splitlines()
    ]
    last = records[-1]
    assert (last["type"], last["subtype"], last["terminalReason"]) == (
        "system",
        "interrupted",
        "aborted_tools",
    )
    results = {
        (block["tool_use_id"], block["is_error"])
        for record in records
        if record["type"] == "user" and isinstance(record["message"]["content"], list)
        for block in record["message"]["content"]
        if block["type"] == "tool_result"
    }  # written as the call ended, and again in its round's record
    assert results == {("toolu_1", True)}


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_reader_gone_before_anything_is_written_is_a_quiet_141(
    server: FakeModelServer, tmp_path: Path, output_format: str
) -> None:
    server.enqueue(reply("an answer nobody reads"))
    server.allow_unused = True  # stayer may stop before it even asks the model
    process, reading = start(tmp_path, server.env(), output_format)
    os.close(reading)
    try:
        _, raw = process.communicate(timeout=20)
    finally:
        stop_leftovers(process, tmp_path / "no-command-ran")
    assert (process.returncode, raw.decode()) == (141, "")
