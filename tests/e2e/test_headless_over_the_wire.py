"""`stayer -p` as a subprocess against a fake model server speaking the real SSE protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stayer.session.listings import is_listing
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import HttpError, ToolCall, reply
from tests.unit.tools.helpers import is_running

RESULT_FIELDS = {
    "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result",
    "session_id", "total_cost_usd", "usage", "terminal_reason", "stop_reason",
}  # fmt: skip

BYPASS = ("--dangerously-skip-permissions",)
STREAM = ("--output-format", "stream-json", "--verbose")


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks of the last message a request carried."""
    last = request.messages[-1]
    assert isinstance(last, dict) and last["role"] == "user"
    return [b for b in last["content"] if b["type"] == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part["type"] == "text")


def test_tool_use_with_end_turn_runs_and_stream_json_carries_every_field(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(
            "Let me check.",
            ToolCall("toolu_1", "Bash", {"command": "echo hello from bash"}),
            stop_reason="end_turn",
        ),
        reply("The command printed hello."),
    )
    done = stayer("-p", "say hello", *STREAM, *BYPASS, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    assert [(line["type"], line.get("subtype")) for line in lines] == [
        ("system", "init"),
        ("assistant", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    said, call = (line["message"] for line in lines[1:3])
    assert [said["content"], call["content"]] == [
        [{"type": "text", "text": "Let me check."}],
        [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Bash",
                "input": {"command": "echo hello from bash"},
            }
        ],
    ]
    assert said["id"] == call["id"] and said["usage"] == call["usage"]
    assert (said["stop_reason"], call["stop_reason"]) == (None, "end_turn")
    session = lines[0]["session_id"]
    assert all(line["session_id"] == session for line in lines)
    result = lines[-1]
    assert set(result) >= RESULT_FIELDS
    assert (result["is_error"], result["num_turns"], result["result"]) == (
        False,
        2,
        "The command printed hello.",
    )
    assert (result["terminal_reason"], result["stop_reason"]) == ("completed", "end_turn")
    assert result["usage"]["input_tokens"] == 24 and result["usage"]["output_tokens"] == 14
    assert lines[3]["tool_use_result"]["stdout"] == "hello from bash\n"
    first, second = server.requests
    (answer,) = tool_results(second)
    assert (answer["tool_use_id"], result_text(answer)) == ("toolu_1", "hello from bash")
    assert first.headers["x-stayer-purpose"] == "main"
    assert first.body["stream"] is True


def test_empty_tool_output_reaches_the_model_as_the_placeholder(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "true"})), reply("ok"))
    done = stayer("-p", "run true", *BYPASS, cwd=tmp_path, env=server.env())

    assert (done.status, done.stdout) == (0, "ok\n")
    (answer,) = tool_results(server.requests[1])
    assert result_text(answer) == "(Bash completed with no output)"
    assert "is_error" not in answer


def test_three_read_only_calls_come_back_in_one_message_in_order(
    server: FakeModelServer, tmp_path: Path
) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(f"contents of {name}\n")
    calls = [
        ToolCall(f"toolu_{n}", "Read", {"file_path": str(tmp_path / f"{n}.txt")}) for n in "abc"
    ]
    server.enqueue(reply(*calls), reply("read all three"))
    done = stayer("-p", "read them", cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    answers = tool_results(server.requests[1])
    assert [a["tool_use_id"] for a in answers] == ["toolu_a", "toolu_b", "toolu_c"]
    for name, answer in zip("abc", answers, strict=True):
        assert f"contents of {name}" in result_text(answer)


def test_failures_come_back_as_errors_and_the_run_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(
            ToolCall("toolu_1", "Teleport", {"to": "moon"}),
            ToolCall("toolu_2", "Read", {"path": "wrong field"}),
            ToolCall("toolu_3", "Bash", {"command": "echo broken >&2; exit 3"}),
            ToolCall("toolu_4", "Read", {"file_path": str(tmp_path / "missing.txt")}),
        ),
        reply("I will try something else."),
    )
    done = stayer("-p", "do it", *STREAM, *BYPASS, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    answers = tool_results(server.requests[1])
    assert [a.get("is_error") for a in answers] == [True, True, True, True]
    unknown, invalid, failing, missing = (result_text(a) for a in answers)
    assert "no tool named 'Teleport'" in unknown
    assert invalid.startswith("InputValidationError:") and "file_path" in invalid
    assert "broken" in failing and "Exit code 3" in failing
    assert "does not exist" in missing
    assert done.json_lines()[-1]["subtype"] == "success"


def test_max_turns_ends_with_error_max_turns(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Glob", {"pattern": "*"})),
        reply(ToolCall("toolu_2", "Glob", {"pattern": "*.py"})),
    )
    done = stayer("-p", "look around", "--max-turns", "2", *STREAM, cwd=tmp_path, env=server.env())

    assert done.status == 1
    result = done.json_lines()[-1]
    assert result["subtype"] == "error_max_turns"
    assert result["is_error"] is True
    assert result["num_turns"] == 2
    assert result["terminal_reason"] == "max_turns"
    assert result["errors"] == ["Reached maximum number of turns (2)"]


def test_default_mode_denies_bash_with_a_reason_and_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "touch made-it"})),
        reply("I was not allowed to run it."),
    )
    done = stayer("-p", "make a file", "--output-format", "json", cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    assert not (tmp_path / "made-it").exists()
    (answer,) = tool_results(server.requests[1])
    assert answer["is_error"] is True
    assert "--allowedTools Bash" in result_text(answer)
    result = json.loads(done.stdout)
    assert result["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "touch made-it"}}
    ]


def test_allowed_tools_rule_lets_a_matching_command_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "touch made-it"})), reply("ok"))
    done = stayer(
        "-p", "make a file", "--allowedTools", "Bash(touch:*)", cwd=tmp_path, env=server.env()
    )

    assert done.status == 0, done.stderr
    assert (tmp_path / "made-it").exists()


def test_an_allow_rule_does_not_cover_a_command_chained_after_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    chained = "touch made-it; touch smuggled"
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": chained})), reply("denied"))
    done = stayer(
        "-p", "make a file", "--allowedTools", "Bash(touch made-it)", cwd=tmp_path, env=server.env()
    )

    assert done.status == 0, done.stderr
    assert not (tmp_path / "made-it").exists()
    assert not (tmp_path / "smuggled").exists()
    (answer,) = tool_results(server.requests[1])
    assert answer["is_error"] is True


def test_overload_is_retried_and_reported(server: FakeModelServer, tmp_path: Path) -> None:
    overloaded = HttpError(
        529,
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        headers={"retry-after": "0"},
    )
    server.enqueue(overloaded, reply("made it through"))
    done = stayer("-p", "hi", *STREAM, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    retry = next(line for line in done.json_lines() if line.get("subtype") == "api_retry")
    assert (retry["attempt"], retry["error_status"]) == (1, 529)
    assert done.json_lines()[-1]["result"] == "made it through"


def test_a_refused_key_ends_the_run_with_a_clear_error(
    server: FakeModelServer, tmp_path: Path
) -> None:
    refused = HttpError(
        401,
        b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    )
    server.enqueue(refused)
    done = stayer("-p", "hi", *STREAM, cwd=tmp_path, env=server.env())

    assert done.status == 1
    result = done.json_lines()[-1]
    assert (result["subtype"], result["terminal_reason"], result["api_error_status"]) == (
        "error_during_execution",
        "model_error",
        401,
    )
    assert "Traceback" not in done.stderr
    server.enqueue(refused)
    text_mode = stayer("-p", "hi", cwd=tmp_path, env=server.env())
    assert text_mode.status == 1
    (line,) = text_mode.stderr.strip().splitlines()
    assert line.startswith("stayer: model_error:")


def test_prompt_from_stdin_and_openai_compatible_server(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", "Bash", {"command": "echo 4"})), reply("It is 4."))
    done = stayer(
        "-p",
        "--model",
        "openai:local-model",
        *BYPASS,
        cwd=tmp_path,
        env=server.env("openai"),
        stdin="what is 2+2?",
    )

    assert (done.status, done.stdout) == (0, "It is 4.\n"), done.stderr
    first, second = server.requests
    assert first.path.endswith("/chat/completions")
    assert first.body["model"] == "local-model"
    assert "what is 2+2?" in json.dumps(first.body["messages"][-1])
    assert second.body["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "4"}


def test_a_background_shell_is_stopped_when_the_run_ends(
    server: FakeModelServer, tmp_path: Path
) -> None:
    call = ToolCall("toolu_1", "Bash", {"command": "exec sleep 60", "run_in_background": True})
    server.enqueue(reply(call), reply("Started it."))
    done = stayer("-p", "serve", *STREAM, *BYPASS, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    (started,) = [line for line in done.json_lines() if "tool_use_result" in line]
    assert started["tool_use_result"]["backgroundTaskId"] == "bash_1"
    assert not is_running(started["tool_use_result"]["pid"])


def reminders_sent(request: RecordedRequest) -> list[str]:
    """The system reminders in the user message a request ends with."""
    content = request.messages[-1]["content"]
    texts = [block["text"] for block in content if block.get("type") == "text"]
    return [text for text in texts if text.startswith("<system-reminder>") and not is_listing(text)]


def test_plan_mode_is_told_in_the_request_and_nothing_outside_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("1. Look. 2. Change."), reply("done"))
    planned = stayer("-p", "plan it", "--permission-mode", "plan", cwd=tmp_path, env=server.env())
    plain = stayer("-p", "do it", cwd=tmp_path, env=server.env())

    assert (planned.status, plain.status) == (0, 0), planned.stderr + plain.stderr
    (told,) = reminders_sent(server.requests[0])
    assert told.startswith("<system-reminder>\nPlan mode is on.")
    assert "give it in full as your final answer" in told  # nobody here accepts a plan
    assert reminders_sent(server.requests[1]) == []
