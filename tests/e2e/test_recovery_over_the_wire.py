"""The recovery tree as a user meets it: `stayer -p` against the fake server, whose replies are
cut by the output limit, in text or inside a tool call's input, or broken off by a server error
mid-stream, over both protocols."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from stayer.loop.recovery import CUT_CALL_TEXT
from stayer.loop.stream_cut import STREAM_CUT_TEXT
from stayer.messages import Usage
from tests.e2e.cli import stayer
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Stream,
    ToolCall,
    WireProtocol,
    anthropic_error_event,
    anthropic_text,
    openai_error_chunk,
    openai_text,
    reply,
)

STREAM = ("--output-format", "stream-json", "--verbose")


def kinds(lines: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(line["type"], line.get("subtype"), line.get("reason")) for line in lines]


def test_a_reply_cut_by_the_output_limit_is_asked_again_with_a_larger_one(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("The answer is", stop_reason="max_tokens"), reply("The answer is 42."))
    done = stayer("-p", "what is it?", *STREAM, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    # The cut answer is withheld until recovery decides, and it is dropped: no reader sees it.
    assert kinds(lines) == [
        ("system", "init", None),
        ("system", "continuing", "max_output_tokens_escalate"),
        ("assistant", None, None),
        ("result", "success", None),
    ]
    assert lines[-1]["result"] == "The answer is 42."
    first, second = server.requests
    assert (first.body["max_tokens"], second.body["max_tokens"]) == (32_000, 64_000)
    assert second.messages == first.messages


def test_a_dropped_answer_that_streamed_as_partial_messages_is_withdrawn(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("The answer is", stop_reason="max_tokens"), reply("The answer is 42."))
    done = stayer(
        "-p", "what is it?", *STREAM, "--include-partial-messages", cwd=tmp_path, env=server.env()
    )

    assert done.status == 0, done.stderr
    lines = [line for line in done.json_lines() if line["type"] != "stream_event"]
    assert kinds(lines) == [
        ("system", "init", None),
        ("system", "withdrawn", "recovering: max_output_tokens_escalate"),
        ("system", "continuing", "max_output_tokens_escalate"),
        ("assistant", None, None),
        ("result", "success", None),
    ]
    events = [line["event"] for line in done.json_lines() if line["type"] == "stream_event"]
    stops = [index for index, event in enumerate(events) if event["type"] == "message_stop"]
    assert len(stops) == 1  # the dropped answer's stream never reached its message_stop
    assert done.json_lines()[-1]["result"] == "The answer is 42."


def test_a_reply_continued_after_a_cut_is_shown_in_full_before_its_continuation(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("The answer", stop_reason="max_tokens"), reply(" is 42."))
    env = {**server.env(), "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1000"}  # no escalation
    done = stayer("-p", "what is it?", *STREAM, cwd=tmp_path, env=env)

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    assert kinds(lines) == [
        ("system", "init", None),
        ("assistant", None, None),
        ("system", "continuing", "max_output_tokens_recovery"),
        ("assistant", None, None),
        ("result", "success", None),
    ]
    texts = [line["message"]["content"][0]["text"] for line in lines if line["type"] == "assistant"]
    assert texts == ["The answer", " is 42."]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_write_cut_inside_its_input_never_runs_and_the_model_splits_it(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol
) -> None:
    target = tmp_path / "notes.md"
    cut = ToolCall("toolu_1", "Write", raw_input=f'{{"file_path": "{target}", "content": "# No')
    whole = ToolCall("toolu_2", "Write", {"file_path": str(target), "content": "# Notes\n"})
    server.enqueue(reply(cut, stop_reason="max_tokens"), reply(whole), reply("Written."))
    env = {**server.env(protocol), "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1000"}  # no escalation
    done = stayer("-p", "write notes", *STREAM, "--permission-mode", "acceptEdits",
                  cwd=tmp_path, env=env)  # fmt: skip

    assert done.status == 0, done.stderr
    if protocol == "anthropic":
        (answer,) = tool_results(server.requests[1])
        assert (answer["tool_use_id"], result_text(answer)) == ("toolu_1", CUT_CALL_TEXT)
    else:
        last = server.requests[1].messages[-1]
        assert last == {"role": "tool", "tool_call_id": "toolu_1", "content": CUT_CALL_TEXT}
    assert target.read_text() == "# Notes\n"
    reasons = [
        line.get("reason") for line in done.json_lines() if line.get("subtype") == "continuing"
    ]
    assert reasons == ["max_output_tokens_recovery"]
    assert done.json_lines()[-1]["result"] == "Written."


def test_an_output_limit_that_keeps_cutting_ends_with_its_own_reason(
    server: FakeModelServer, tmp_path: Path
) -> None:
    for n in range(4):
        server.enqueue(reply(f"part {n}", stop_reason="max_tokens"))
    env = {**server.env(), "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1000"}
    done = stayer("-p", "write a novel", "--output-format", "json", cwd=tmp_path, env=env)

    assert done.status == 1
    (result,) = done.json_lines()
    assert (result["subtype"], result["terminal_reason"]) == (
        "error_during_execution",
        "max_output_tokens",
    )
    assert "CLAUDE_CODE_MAX_OUTPUT_TOKENS" in result["result"]
    assert len(server.requests) == 4


def test_the_base_prompt_that_tells_the_model_not_to_give_up_is_sent(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """SPEC §5.1: the guard is in what the model receives, not only in our source."""
    server.enqueue(reply("ok"))
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    system = "".join(block["text"] for block in server.requests[0].body["system"])
    assert "diagnose before changing course" in system
    assert "Do not retry the same thing blindly" in system
    assert "Keep going until the task is actually done" in system


def test_done_when_keeps_the_model_working_until_the_check_passes(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply("All done!"),
        reply(ToolCall("toolu_1", "Bash", {"command": "echo ok > done.txt"})),
        reply("Now it really is done."),
    )
    done = stayer(
        "-p", "make done.txt", *STREAM, "--dangerously-skip-permissions",
        "--done-when", "test -f done.txt || { echo 'done.txt is missing'; exit 3; }",
        cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    reasons = [line["reason"] for line in lines if line.get("subtype") == "continuing"]
    assert reasons == ["stop_hook_blocking"]
    told = server.requests[1].messages[-1]
    assert isinstance(told, dict)
    note = "".join(block["text"] for block in told["content"] if block["type"] == "text")
    assert "exited with status 3. Its output:\ndone.txt is missing" in note
    assert (lines[-1]["subtype"], lines[-1]["result"]) == ("success", "Now it really is done.")


def test_a_done_check_that_never_passes_is_never_a_success(
    server: FakeModelServer, tmp_path: Path
) -> None:
    for _ in range(4):
        server.enqueue(reply("Done."))
    done = stayer(
        "-p", "go", "--output-format", "json", "--done-when", "echo still red; exit 1",
        cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 1
    (result,) = done.json_lines()
    assert (result["subtype"], result["terminal_reason"]) == (
        "error_during_execution",
        "done_check_failed",
    )
    assert result["result"].endswith("exited with status 1. Its output:\nstill red")


def test_max_budget_usd_ends_the_run_as_claude_code_reports_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pricey = Usage(input_tokens=0, output_tokens=40_000)  # $3 at Opus 4.1's list price
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "true"}), usage=pricey),
        reply(ToolCall("toolu_2", "Bash", {"command": "true"}), usage=pricey),
    )
    done = stayer(
        "-p", "go", "--output-format", "json", "--dangerously-skip-permissions",
        "--max-budget-usd", "5", "--model", "claude-opus-4-1", cwd=tmp_path, env=server.env(),
    )  # fmt: skip

    assert done.status == 1
    (result,) = done.json_lines()
    assert (result["subtype"], result["terminal_reason"]) == (
        "error_max_budget_usd",
        "budget_exhausted",
    )
    assert result["errors"] == ["Reached maximum budget ($5)"]
    assert result["total_cost_usd"] == 6.0


def test_a_budget_that_is_not_an_amount_is_a_usage_error(tmp_path: Path) -> None:
    done = stayer(
        "-p", "go", "--max-budget-usd", "lots", cwd=tmp_path, env={"ANTHROPIC_API_KEY": "k"}
    )
    assert done.status == 2
    assert "'lots' is not a positive amount of US dollars" in done.stderr


def test_a_budget_in_the_prompt_is_a_floor_the_model_is_told_of_and_held_to(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Short answer."), reply("A much fuller answer.", usage=Usage(10, 50_000)))
    done = stayer("-p", "+50k explain the codebase", *STREAM, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    first, second = server.requests
    system = "".join(block["text"] for block in first.body["system"])
    assert "budget of 50,000 output tokens" in system and "a floor, not a suggestion" in system
    nudge = second.messages[-1]
    assert isinstance(nudge, dict)
    assert "of the token budget (7 of 50,000 output tokens)" in json.dumps(nudge)
    reasons = [line["reason"] for line in done.json_lines() if line.get("subtype") == "continuing"]
    assert reasons == ["token_budget_continuation"]
    assert done.json_lines()[-1]["result"] == "A much fuller answer."


def test_token_budget_flag_and_no_budget_means_no_clause(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("ok"), reply("plain"))
    done = stayer("-p", "hi", "--token-budget", "5", cwd=tmp_path, env=server.env())
    assert done.status == 0, done.stderr
    done = stayer("-p", "hi", cwd=tmp_path, env=server.env())
    first, second = server.requests
    assert "budget of 5 output tokens" in json.dumps(first.body["system"])
    assert "Token budget" not in json.dumps(second.body["system"])


WINDOW_200K = ("--model", "claude-sonnet-4-5")
"""A model with a 200k window (today's default has 1M)."""


def test_a_long_run_compacts_inside_itself_and_says_so(
    server: FakeModelServer, tmp_path: Path
) -> None:
    full = Usage(input_tokens=170_000, output_tokens=100)  # past 83% of a 200k window
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo step"}), usage=full),
        reply("NOTES: ran echo."),
        reply("done"),
    )
    done = stayer("-p", "go", *STREAM, "--dangerously-skip-permissions", *WINDOW_200K,
                  cwd=tmp_path, env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    boundary = [line for line in done.json_lines() if line.get("subtype") == "compact_boundary"]
    assert [line["compact_metadata"]["trigger"] for line in boundary] == ["auto"]
    assert boundary[0]["compact_metadata"]["pre_tokens"] > 170_000
    first, summary, after = server.requests
    assert first.headers["x-stayer-purpose"] == "main"
    assert summary.headers["x-stayer-purpose"] == "compact"
    assert "tools" not in summary.body
    assert "NOTES: ran echo." in json.dumps(after.messages[0])

    server.enqueue(reply(ToolCall("toolu_2", "Bash", {"command": "true"}), usage=full), reply("ok"))
    done = stayer("-p", "go", "--dangerously-skip-permissions", *WINDOW_200K, cwd=tmp_path,
                  env={**server.env(), "DISABLE_AUTO_COMPACT": "1"})  # fmt: skip
    assert done.status == 0, done.stderr
    assert all(r.headers["x-stayer-purpose"] == "main" for r in server.requests[3:])


SAID = "The loader reads the old format, converts each record and hands it to the writer, "
REST = "which saves it in the new one."
ServerFault = Literal["overloaded_error", "api_error", "connection_cut"]


def broken_after_text(protocol: WireProtocol, fault: ServerFault) -> Stream:
    """An answer that streams `SAID`, then breaks off with `fault` instead of going on."""
    whole = (anthropic_text if protocol == "anthropic" else openai_text)(SAID + "never sent")
    at = whole.index_of("never")
    if fault == "connection_cut":
        return whole.cut(after=at)
    if protocol == "anthropic":
        error = anthropic_error_event(
            fault, "Overloaded" if fault == "overloaded_error" else "boom"
        )
    else:
        error = openai_error_chunk("boom", error_type=fault)
    return whole.truncated(at).with_frame(at, error)


@pytest.mark.parametrize(
    ("protocol", "fault", "status"),
    [
        ("anthropic", "overloaded_error", 529),
        ("anthropic", "api_error", 500),
        ("anthropic", "connection_cut", None),
        ("openai", "api_error", 500),
        ("openai", "connection_cut", None),
    ],
)
def test_text_broken_off_by_the_server_is_kept_and_the_model_goes_on_from_the_cut(
    server: FakeModelServer,
    tmp_path: Path,
    protocol: WireProtocol,
    fault: ServerFault,
    status: int | None,
) -> None:
    server.enqueue(broken_after_text(protocol, fault), reply(REST))
    done = stayer("-p", "explain", *STREAM, cwd=tmp_path, env=server.env(protocol))

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    assert kinds(lines) == [
        ("system", "init", None),
        ("assistant", None, None),
        ("system", "continuing", "truncated_response_recovery"),
        ("system", "api_retry", None),
        ("assistant", None, None),
        ("result", "success", None),
    ]
    kept, retry, rest = lines[1], lines[3], lines[4]
    assert kept["message"]["content"] == [{"type": "text", "text": SAID}]
    assert kept["message"]["stop_reason"] is None
    assert (retry["attempt"], retry["error_status"]) == (1, status)
    assert rest["message"]["content"] == [{"type": "text", "text": REST}]
    assert lines[-1]["result"] == SAID + REST
    first, second = server.requests
    said, note = (
        (SAID, STREAM_CUT_TEXT)
        if protocol == "openai"
        else ([text_block(SAID)], [text_block(STREAM_CUT_TEXT)])
    )
    assert uncached(second.messages) == [
        *uncached(first.messages),
        {"role": "assistant", "content": said},
        {"role": "user", "content": note},
    ]


def uncached(value: Any) -> Any:
    """`value` without its `cache_control` marks (they move to the newest message)."""
    if isinstance(value, dict):
        return {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [uncached(item) for item in value]
    return value


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def test_a_server_error_before_much_text_still_sends_the_request_again_whole(
    server: FakeModelServer, tmp_path: Path
) -> None:
    whole = anthropic_text("The loader reads never sent")
    at = whole.index_of("never")
    server.enqueue(whole.truncated(at).with_frame(at, anthropic_error_event()), reply(REST))
    done = stayer("-p", "explain", *STREAM, "--include-partial-messages", cwd=tmp_path,
                  env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    printed = [line for line in done.json_lines() if line["type"] != "stream_event"]
    assert [(line["type"], line.get("subtype")) for line in printed] == [
        ("system", "init"),
        ("system", "withdrawn"),
        ("system", "api_retry"),
        ("assistant", None),
        ("result", "success"),
    ]
    assert printed[-1]["result"] == REST
    first, second = server.requests
    assert second.messages == first.messages
