"""What a broken or hostile writer of stayer's stream-json input can send, and what the model
can send back: each is one clear line and the session goes on (no hang, no traceback)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.e2e.conversations import transcript_of
from tests.e2e.sdk_process import initialize, session, start, user
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


def _said(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("stayer: ")]


def test_a_deeply_nested_line_is_refused_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Still here."))
    deep = "[" * 100_000 + "]" * 100_000
    status, frames, err = session(tmp_path, server, [initialize(), deep, user("are you there?")])

    assert status == 0, err
    [error] = [f["error"] for f in frames if f.get("subtype") == "input_error"]
    assert "nests too deeply" in error
    assert [f["result"] for f in frames if f["type"] == "result"] == ["Still here."]
    assert len(_said(err)) == 1


SURROGATE_USER_LINE = '{"type":"user","message":{"role":"user","content":"hi \\ud800"}}'


def test_a_lone_surrogate_in_a_user_message_is_refused(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("second"))
    lines = [initialize(), SURROGATE_USER_LINE, user("again")]
    status, frames, err = session(tmp_path, server, lines, "--replay-user-messages")

    assert status == 0, err
    results = [f for f in frames if f["type"] == "result"]
    assert [r["is_error"] for r in results] == [True, False]
    assert "lone UTF-16 surrogate" in results[0]["result"]
    assert results[1]["result"] == "second"
    [said] = _said(err)
    assert "lone UTF-16 surrogate" in said
    assert len(server.requests) == 1  # nothing of the refused message went to the model
    assert "ud800" not in json.dumps(server.requests[0].body)


def test_a_lone_surrogate_from_the_model_is_written_as_a_replacement_character(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("bad \ud800 text"), reply("second"))
    status, frames, err = session(tmp_path, server, [initialize(), user("hi"), user("again")])

    assert status == 0, err
    assert not _said(err)
    results = [f["result"] for f in frames if f["type"] == "result"]
    assert results == ["bad \ufffd text", "second"]
    # the history sent again holds the same character, and the transcript every line
    sent_back = json.dumps(server.requests[1].body, ensure_ascii=False)
    assert "bad \ufffd text" in sent_back
    session_id = frames[-1]["session_id"]
    records = transcript_of(tmp_path, session_id).read_text(encoding="utf-8").splitlines()
    assert any("bad \ufffd text" in record for record in records)
    assert all(json.loads(record) for record in records)


def test_a_line_over_the_limit_is_dropped_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Still here."))
    giant = '{"type":"user","message":{"role":"user","content":"' + "x" * (65 << 20)
    process = start(tmp_path, server)
    out, err = process.communicate(
        "\n".join([initialize(), giant + '"}}', user("are you there?")]) + "\n", timeout=120
    )

    assert process.returncode == 0, err
    results = [json.loads(line) for line in out.splitlines() if '"type":"result"' in line]
    assert [r["is_error"] for r in results] == [True, False]  # the giant line was a user's
    assert "longer than 64 MiB" in results[0]["result"]
    assert results[1]["result"] == "Still here."
    [said] = _said(err)
    assert "longer than 64 MiB" in said


def test_sigterm_after_a_failed_open_is_one_line_and_the_signals_status(
    server: FakeModelServer, tmp_path: Path
) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    with start(tmp_path, server, "--resume", missing) as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.write(initialize() + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())  # the open has failed by now
        process.send_signal(signal.SIGTERM)
        out, err = process.stdout.read(), process.stderr.read()

    assert process.returncode == 128 + signal.SIGTERM, err
    assert answer["response"]["subtype"] == "error"
    assert missing in answer["response"]["error"]
    [said] = _said(err)
    assert missing in said
    assert out == ""


def test_an_image_no_model_api_takes_is_refused_and_kept_out_of_the_history(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Second answered."))
    source = {"type": "base64", "media_type": "text/html", "data": "PGgxPmhpPC9oMT4="}
    bad_type = [{"type": "image", "source": source}]
    bad_data = [{"type": "image", "source": {**source, "media_type": "image/png", "data": "!!"}}]
    lines = [initialize(), user(bad_type), user(bad_data), user("and now?")]
    status, frames, err = session(tmp_path, server, lines)

    assert status == 0, err
    results = [f for f in frames if f["type"] == "result"]
    assert [r["is_error"] for r in results] == [True, True, False]
    assert "'text/html' is not taken" in results[0]["result"]
    assert "not base64" in results[1]["result"]
    assert results[2]["result"] == "Second answered."
    assert len(_said(err)) == 2
    [request] = server.requests
    assert "image" not in json.dumps(request.body["messages"])


def test_hook_event_names_at_initialize_are_shown_on_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    forged = "Nope\nstayer: every hook will run"
    hooks = {forged: [{"matcher": None, "hookCallbackIds": ["hook_0"]}]}
    request = {"subtype": "initialize", "hooks": hooks}
    line = json.dumps({"type": "control_request", "request_id": "req_1", "request": request})
    status, frames, err = session(tmp_path, server, [line])

    assert status == 0, err
    assert frames[0]["response"]["subtype"] == "success"
    [said] = _said(err)
    assert "'Nope\\nstayer: every hook will run'" in said


def test_a_reply_over_the_limit_fails_the_request_it_answered(
    server: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    server.enqueue(
        reply(ToolCall("call_1", "Bash", {"command": f"touch {marker}"})), reply("Not run.")
    )
    with start(tmp_path, server, "--permission-prompt-tool", "stdio") as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.write(initialize() + "\n" + user("make the file") + "\n")
        process.stdin.flush()
        frames = [json.loads(process.stdout.readline())]
        while frames[-1]["type"] != "control_request":  # stayer asks can_use_tool
            frames.append(json.loads(process.stdout.readline()))
        asked = frames[-1]["request_id"]
        allow = {"behavior": "allow", "updatedInput": {"padding": "x" * (65 << 20)}}
        answer = {"subtype": "success", "request_id": asked, "response": allow}
        process.stdin.write(json.dumps({"type": "control_response", "response": answer}) + "\n")
        process.stdin.close()  # the run goes on after the input ends
        out, err = process.stdout.read(), process.stderr.read()

    assert process.returncode == 0, err
    frames += [json.loads(line) for line in out.splitlines()]
    [result] = [f for f in frames if f["type"] == "result"]
    assert result["result"] == "Not run."
    assert not marker.exists()
    tool_results = json.dumps([f for f in frames if f["type"] == "user"])
    assert "longer than 64 MiB" in tool_results


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_a_lone_surrogate_from_the_model_in_print_mode(
    server: FakeModelServer, tmp_path: Path, output_format: str
) -> None:
    server.enqueue(reply("bad \ud800 text"))
    done = stayer("-p", "hi", "--output-format", output_format, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    assert done.stderr == ""
    said = json.loads(done.stdout)["result"] if output_format == "json" else done.stdout
    assert said.strip() == "bad \ufffd text"


def test_a_rule_with_a_lone_surrogate_is_not_saved(server: FakeModelServer, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    server.enqueue(reply(ToolCall("call_1", "Bash", {"command": f"touch {marker}"})), reply("ok"))
    with start(tmp_path, server, "--permission-prompt-tool", "stdio") as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.write(initialize() + "\n" + user("make the file") + "\n")
        process.stdin.flush()
        frame = json.loads(process.stdout.readline())
        while frame["type"] != "control_request":  # stayer asks can_use_tool
            frame = json.loads(process.stdout.readline())
        rule = {"toolName": "Bash", "ruleContent": "touch \ud800"}
        update = {"type": "addRules", "rules": [rule], "behavior": "allow"}
        allow = {
            "behavior": "allow",
            "updatedInput": frame["request"]["input"],
            "updatedPermissions": [{**update, "destination": "localSettings"}],
        }
        answer = {"subtype": "success", "request_id": frame["request_id"], "response": allow}
        process.stdin.write(json.dumps({"type": "control_response", "response": answer}) + "\n")
        process.stdin.close()
        out, err = process.stdout.read(), process.stderr.read()

    assert process.returncode == 0, err
    assert marker.exists()  # the call itself was allowed
    assert '"result":"ok"' in out
    [said] = _said(err)
    assert "not applied" in said and "lone UTF-16 surrogate" in said
    assert not (tmp_path / ".stayer" / "settings.local.json").exists()
