"""With partial messages, stream_event lines relay every server event, in Anthropic's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stayer.messages import RedactedThinkingBlock, TextBlock
from stayer.providers.scripted import Reply, ScriptedProvider, text
from tests.unit.core.test_stream_json import GLOB, THOUGHT, USAGE, printed


def first_message(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every line up to the first message's `message_stop`, that one included."""
    for end, line in enumerate(lines):
        if line["type"] == "stream_event" and line["event"]["type"] == "message_stop":
            return lines[: end + 1]
    raise AssertionError("no message_stop was printed")


def raw(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["event"] for line in lines if line["type"] == "stream_event"]


def delta(index: int, **fields: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def start(index: int, **block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


async def test_every_server_event_of_an_answer_is_relayed_in_order(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((THOUGHT, TextBlock("Let me look."), GLOB)), text("None.")])
    lines = first_message(await printed(model, tmp_path, partial=True))

    started: dict[str, Any] = {
        "id": "msg_scripted_1",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**USAGE, "output_tokens": 0},
    }
    assert raw(lines) == [
        {"type": "message_start", "message": started},
        start(0, type="thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="Look "),
        delta(0, type="thinking_delta", thinking="first."),
        delta(0, type="signature_delta", signature="sig-1"),
        stop(0),
        start(1, type="text", text=""),
        delta(1, type="text_delta", text="Let "),
        delta(1, type="text_delta", text="me "),
        delta(1, type="text_delta", text="look."),
        stop(1),
        start(2, type="tool_use", id="toolu_g", name="Glob", input={}),
        delta(2, type="input_json_delta", partial_json='{"pattern": "*.t'),
        delta(2, type="input_json_delta", partial_json='xt"}'),
        stop(2),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": USAGE,
        },
        {"type": "message_stop"},
    ]
    # The message's assistant lines are all out by its message_stop, as with Claude Code.
    assert [line["type"] for line in lines[-4:]] == [*["assistant"] * 3, "stream_event"]
    assert all(line["parent_tool_use_id"] is None for line in lines[1:])  # after init


async def test_every_answer_of_a_run_ends_with_message_stop(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((GLOB,)), text("None.")])
    lines = await printed(model, tmp_path, partial=True)

    kinds = [line["event"]["type"] for line in lines if line["type"] == "stream_event"]
    assert kinds.count("message_start") == kinds.count("message_stop") == 2
    assert kinds[-1] == "message_stop"


async def test_a_redacted_thinking_block_starts_with_its_data(tmp_path: Path) -> None:
    secret = RedactedThinkingBlock("opaque-bytes")
    lines = await printed(
        ScriptedProvider([Reply((secret, TextBlock("ok")))]), tmp_path, partial=True
    )

    blocks = raw(lines)[1:-2]  # between message_start and message_delta, message_stop
    assert blocks == [
        start(0, type="redacted_thinking", data="opaque-bytes"),
        stop(0),
        start(1, type="text", text=""),
        delta(1, type="text_delta", text="ok"),
        stop(1),
    ]


async def test_without_partial_messages_no_stream_event_is_printed(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((THOUGHT, TextBlock("Let me look."), GLOB)), text("None.")])
    lines = await printed(model, tmp_path)

    assert {line["type"] for line in lines} == {"system", "assistant", "user", "result"}
