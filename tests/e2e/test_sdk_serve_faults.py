"""`stayer --input-format stream-json` when something outside stayer fails, run as the SDK runs
it (a real subprocess): a session that cannot open for an `OSError` answers `initialize` with
the reason and says it in one line, and standard output that cannot be written (`> /dev/full`)
stops the session with one line; neither prints a traceback, and both exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env
from tests.fakes.failing_open import REASON
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

CHECKOUT = Path(__file__).parents[2]
SDK_FLAGS = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
INITIALIZE = {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize"}}
HELLO = {"type": "user", "message": {"role": "user", "content": "hello"}}
STDIN = "".join(json.dumps(frame) + "\n" for frame in (INITIALIZE, HELLO))


def test_an_oserror_opening_the_session_is_the_initialize_error_and_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.fakes.failing_open", *SDK_FLAGS],
        cwd=tmp_path,
        env=clean_env({**server.env(), "PYTHONPATH": str(CHECKOUT)}),
        input=STDIN,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"stayer: the session could not open: OSError: [Errno 28] {REASON}"
    ]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    # the message waiting on the opening may get its result before initialize its reply
    (reply_to_init,) = [line["response"] for line in lines if line["type"] == "control_response"]
    assert reply_to_init["subtype"] == "error" and REASON in reply_to_init["error"]
    (result,) = [line for line in lines if line["type"] == "result"]  # the message's own
    assert result["is_error"]
    assert server.requests == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_that_cannot_be_written_stops_the_session_with_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "stayer", *SDK_FLAGS],
            cwd=tmp_path,
            env=clean_env(server.env()),
            input=STDIN,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "stayer: standard output cannot be written (No space left on device); stopping"
    ]
    assert server.requests == []  # stopped at the first write: the message never ran


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_print_mode_output_that_cannot_be_written_is_one_line_too(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.allow_unused = True  # the run may stop before or after its model call
    server.enqueue(reply("An answer nobody can read."))
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "stayer", "-p", "hello", *SDK_FLAGS[2:]],
            cwd=tmp_path,
            env=clean_env(server.env()),
            stdin=subprocess.DEVNULL,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )

    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "stayer: standard output cannot be written (No space left on device); stopping"
    ]
