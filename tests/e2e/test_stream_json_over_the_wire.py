"""stream-json as programs read it, from `stayer -p` against both wire protocols.

With `--include-partial-messages` every answer is relayed as Anthropic's raw server events,
whichever protocol the model spoke; every answer is printed one content block per line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import (
    Stream,
    Text,
    Thinking,
    ToolCall,
    WireProtocol,
    anthropic_block,
    anthropic_event,
    anthropic_message_delta,
    anthropic_message_start,
    anthropic_message_stop,
    anthropic_stream,
    reply,
)

STREAM = ("--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
PARTIAL = (*STREAM, "--include-partial-messages")
SIGNATURE = {"anthropic": "sig-fake", "openai": ""}  # OpenAI servers send no signature
MODEL = {"anthropic": (), "openai": ("--model", "openai:local-model")}


def kind(event: dict[str, Any]) -> tuple[str, str | None]:
    """An event's type, with the block or delta type it concerns."""
    if event["type"] == "content_block_start":
        return (event["type"], event["content_block"]["type"])
    if event["type"] == "content_block_delta":
        return (event["type"], event["delta"]["type"])
    return (event["type"], None)


def raw_type(line: dict[str, Any]) -> str | None:
    """The server event type a stream_event line relays (None for other lines)."""
    return line["event"]["type"] if line["type"] == "stream_event" else None


def joined(events: list[dict[str, Any]], index: int, field: str) -> str:
    """Everything the deltas of block `index` said in `field`."""
    return "".join(
        e["delta"].get(field, "")
        for e in events
        if e["type"] == "content_block_delta" and e["index"] == index
    )


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_partial_messages_relay_every_server_event_in_anthropic_shape(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol
) -> None:
    call = ToolCall("call_1", "Bash", {"command": "echo hi"})
    server.enqueue(reply(Thinking("Plan the call."), "Checking now.", call), reply("Done."))
    done = stayer("-p", "hi", *MODEL[protocol], *PARTIAL, cwd=tmp_path, env=server.env(protocol))

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    first_stop = next(i for i, line in enumerate(lines) if raw_type(line) == "message_stop")
    first = lines[1 : first_stop + 1]
    events = [line["event"] for line in first if line["type"] == "stream_event"]
    # One message_delta, as Anthropic sends, though OpenAI's usage comes after finish_reason.
    assert [kind(event) for event in events] == [
        ("message_start", None),
        ("content_block_start", "thinking"),
        *[("content_block_delta", "thinking_delta")] * 3,
        ("content_block_delta", "signature_delta"),
        ("content_block_stop", None),
        ("content_block_start", "text"),
        *[("content_block_delta", "text_delta")] * 2,
        ("content_block_stop", None),
        ("content_block_start", "tool_use"),
        *[("content_block_delta", "input_json_delta")] * 3,
        ("content_block_stop", None),
        ("message_delta", None),
        ("message_stop", None),
    ]
    assert joined(events, 0, "thinking") == "Plan the call."
    assert joined(events, 0, "signature") == SIGNATURE[protocol]
    assert joined(events, 1, "text") == "Checking now."
    assert joined(events, 2, "partial_json") == '{"command": "echo hi"}'
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"]["output_tokens"] == 7
    assert [line["type"] for line in first[-4:]] == [*["assistant"] * 3, "stream_event"]
    assert {line["session_id"] for line in lines} == {lines[0]["session_id"]}
    assert all(line["uuid"] and "parent_tool_use_id" in line for line in first)
    relayed = [raw_type(line) for line in lines if line["type"] == "stream_event"]
    assert relayed.count("message_start") == relayed.count("message_stop") == 2
    assert (relayed[-1], lines[-1]["type"]) == ("message_stop", "result")


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_each_content_block_is_its_own_assistant_line(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol
) -> None:
    call = ToolCall("call_1", "Bash", {"command": "echo hi"})
    server.enqueue(reply(Thinking("Plan the call."), "Checking now.", call), reply("Done."))
    done = stayer("-p", "hi", *MODEL[protocol], *STREAM, cwd=tmp_path, env=server.env(protocol))

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    assert [line["type"] for line in lines] == [
        "system", "assistant", "assistant", "assistant", "user", "assistant", "result",
    ]  # fmt: skip
    messages = [line["message"] for line in lines[1:4]]
    assert [m["content"] for m in messages] == [
        [{"type": "thinking", "thinking": "Plan the call.", "signature": SIGNATURE[protocol]}],
        [{"type": "text", "text": "Checking now."}],
        [{"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "echo hi"}}],
    ]
    assert [m["stop_reason"] for m in messages] == [None, None, "tool_use"]
    assert len({m["id"] for m in messages}) == 1
    assert all(m["usage"] == messages[0]["usage"] and m["model"] for m in messages)
    assert messages[0]["usage"]["output_tokens"] == 7  # the final count, not message_start's


def test_an_answer_a_retry_replaced_is_withdrawn_and_never_printed(
    server: FakeModelServer, tmp_path: Path
) -> None:
    # A whole tool call streamed before the cut, but one that never started (there is no such
    # tool): such an answer is never kept, only asked again.
    broken = anthropic_stream(
        Text("First try."), ToolCall("toolu_old", "NoSuchTool", {"command": "echo no"})
    )
    server.enqueue(broken.cut(after=broken.index_of("message_delta")), reply("Second."))
    done = stayer("-p", "hi", *PARTIAL, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    printed = [line for line in lines if line["type"] != "stream_event"]
    assert [(line["type"], line.get("subtype")) for line in printed] == [
        ("system", "init"),
        ("system", "withdrawn"),
        ("system", "api_retry"),
        ("assistant", None),
        ("result", "success"),
    ]
    first_start = next(
        line for line in lines if line.get("event", {}).get("type") == "message_start"
    )
    assert printed[1]["message_id"] == first_start["event"]["message"]["id"]
    assert printed[3]["message"]["content"] == [{"type": "text", "text": "Second."}]
    assert printed[-1]["result"] == "Second."


def test_an_answer_cut_after_its_call_started_is_kept_up_to_the_call_and_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    broken = anthropic_stream(
        Text("First try."), ToolCall("toolu_ran", "Bash", {"command": "echo ran >> ran.txt"})
    )
    server.enqueue(broken.cut(after=broken.index_of("message_delta")), reply("Second."))
    done = stayer("-p", "hi", *PARTIAL, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    printed = [line for line in done.json_lines() if line["type"] != "stream_event"]
    assert [(line["type"], line.get("subtype")) for line in printed] == [
        ("system", "init"),
        ("assistant", None),
        ("assistant", None),
        ("user", None),
        ("user", None),
        ("system", "continuing"),
        ("assistant", None),
        ("result", "success"),
    ]
    kept = [line["message"]["content"] for line in printed[1:3]]
    assert kept == [
        [{"type": "text", "text": "First try."}],
        [{"type": "tool_use", "id": "toolu_ran", "name": "Bash",
          "input": {"command": "echo ran >> ran.txt"}}],
    ]  # fmt: skip
    assert printed[3]["message"]["content"][0]["tool_use_id"] == "toolu_ran"
    assert printed[4]["message"]["content"][0]["text"].startswith("[Your reply above broke off")
    assert printed[5]["reason"] == "truncated_response_recovery"
    assert printed[-1]["result"] == "Second."
    assert (tmp_path / "ran.txt").read_text() == "ran\n"  # once


def test_a_redacted_thinking_block_is_relayed_with_its_data_at_its_start(
    server: FakeModelServer, tmp_path: Path
) -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque-bytes"}
    frames = (
        anthropic_message_start(),
        anthropic_event("content_block_start", {"index": 0, "content_block": redacted}),
        anthropic_event("content_block_stop", {"index": 0}),
        *anthropic_block(1, Text("ok")),
        anthropic_message_delta("end_turn", output_tokens=3),
        anthropic_message_stop(),
    )
    server.enqueue(Stream(frames, protocol="anthropic"))
    done = stayer("-p", "hi", *PARTIAL, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    events = [line["event"] for line in done.json_lines() if line["type"] == "stream_event"]
    assert events[1:3] == [
        {"type": "content_block_start", "index": 0, "content_block": redacted},
        {"type": "content_block_stop", "index": 0},
    ]
    assistant = [line["message"] for line in done.json_lines() if line["type"] == "assistant"]
    assert [m["content"] for m in assistant] == [[redacted], [{"type": "text", "text": "ok"}]]
