"""stayer's stream-json input driven line by line, as the SDK's transport does it but by hand:
lines the SDK would never send, and standard input closed while a run goes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from tests.e2e.cli import stayer
from tests.e2e.sdk_process import SDK_ARGS, initialize, session, start, user
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


def test_a_malformed_line_is_answered_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Still here."))
    unknown = {"type": "control_request", "request_id": "req_9", "request": {"subtype": "nope"}}
    early = {"type": "control_request", "request_id": "req_0", "request": {"subtype": "interrupt"}}
    lines = [
        json.dumps(early),
        initialize(),
        "{this is not json",
        json.dumps({"type": "telepathy"}),
        user(42),
        user([{"type": "video", "url": "x"}]),
        json.dumps(unknown),
        initialize("req_2"),
        user("are you there?"),
    ]
    status, frames, err = session(tmp_path, server, lines)

    assert status == 0, err  # the last result was a success
    replies = {
        f["response"]["request_id"]: f["response"]
        for f in frames
        if f["type"] == "control_response"
    }
    assert replies["req_1"]["subtype"] == "success"
    assert replies["req_9"] == {
        "subtype": "error",
        "request_id": "req_9",
        "error": "stayer does not support the control request nope",
    }
    assert replies["req_0"]["error"] == "interrupt needs a session: send initialize first"
    assert replies["req_2"]["subtype"] == "error"
    assert "already initialized" in replies["req_2"]["error"]
    input_errors = [f["error"] for f in frames if f.get("subtype") == "input_error"]
    assert len(input_errors) == 2
    assert "not JSON" in input_errors[0] and "'telepathy'" in input_errors[1]
    results = [f for f in frames if f["type"] == "result"]
    assert [r["is_error"] for r in results] == [True, True, False]  # one per user message
    assert "string or a non-empty list of blocks" in results[0]["result"]
    assert "'video'" in results[1]["result"]
    assert results[2]["result"] == "Still here."
    said = [line for line in err.splitlines() if line.startswith("stayer: ")]
    assert len(said) == 4 and all("Traceback" not in line for line in err.splitlines())
    assert len(server.requests) == 1


def test_input_closed_mid_run_lets_the_run_finish(server: FakeModelServer, tmp_path: Path) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    os.mkfifo(started)
    os.mkfifo(release)
    gated = ToolCall("call_1", "Bash", {"command": f"echo go > {started}; cat {release}"})
    server.enqueue(reply(gated), reply("Finished after input closed."))
    with start(tmp_path, server, "--dangerously-skip-permissions") as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.write(initialize() + "\n" + user("run it") + "\n")
        process.stdin.flush()
        started.read_text()  # the command runs (its own signal) ...
        process.stdin.close()  # ... when the input ends
        release.write_text("released\n")  # blocks until the command reads: it was not stopped
        out, err = process.stdout.read(), process.stderr.read()

    assert process.returncode == 0, err
    frames = [json.loads(line) for line in out.splitlines()]
    result = frames[-1]
    assert (result["type"], result["is_error"]) == ("result", False)
    assert result["result"] == "Finished after input closed."
    tool_results = [f for f in frames if f["type"] == "user"]
    assert tool_results[0]["tool_use_result"]["stdout"] == "released\n"


def test_flags_that_cannot_go_with_stream_json_input_are_refused(tmp_path: Path) -> None:
    cases = {
        ("--input-format", "stream-json"): "needs --output-format stream-json",
        (*SDK_ARGS, "hello"): "a prompt argument is not read with --input-format stream-json",
        (*SDK_ARGS, "--resume"): "--resume needs a session id",
    }
    for args, words in cases.items():
        done = stayer(*args, cwd=tmp_path)
        assert done.status == 2, args
        (line,) = done.stderr.splitlines()
        assert line.startswith("stayer: ") and words in line, (args, line)


def test_input_ending_right_after_initialize_still_gets_its_answer(
    server: FakeModelServer, tmp_path: Path
) -> None:
    status, frames, err = session(tmp_path, server, [initialize()])

    assert status == 0, err
    assert [(f["type"], f["response"]["subtype"]) for f in frames] == [
        ("control_response", "success")
    ]
    assert server.requests == []


def test_sigterm_interrupts_the_run_and_drops_what_waits(
    server: FakeModelServer, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    os.mkfifo(started)
    slow = ToolCall("call_1", "Bash", {"command": f"echo go > {started}; sleep 60"})
    server.enqueue(reply(slow))
    with start(tmp_path, server, "--dangerously-skip-permissions") as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.write(initialize() + "\n" + user("slow") + "\n" + user("waits") + "\n")
        process.stdin.flush()
        started.read_text()  # the command runs: its own signal
        process.send_signal(signal.SIGTERM)  # what the SDK sends a CLI slow to exit
        out, err = process.stdout.read(), process.stderr.read()

    assert process.returncode == 128 + signal.SIGTERM, err
    frames = [json.loads(line) for line in out.splitlines()]
    results = [f for f in frames if f["type"] == "result"]
    assert [(r["terminal_reason"], r["is_error"]) for r in results] == [("aborted_tools", True)]
    assert len(server.requests) == 1  # the waiting message was never sent


def test_flags_that_do_nothing_here_are_said_as_under_print(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Hi."))
    flags = ("--fork-session", "--sandbox-network")
    status, _, err = session(tmp_path, server, [initialize(), user("hi")], *flags)

    assert status == 0, err
    assert "stayer: --fork-session does nothing without --resume or --continue" in err.splitlines()
    assert "stayer: --sandbox-network does nothing without --sandbox" in err.splitlines()
