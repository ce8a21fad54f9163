"""stream-json lines have the shapes claude-agent-sdk parses (reference/protocols.md §1.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stayer.events import Finished, Terminal
from stayer.messages import Usage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.stream_json import MAX_LINE_BYTES, StreamJsonWriter, dumps, result_line

RESULT_FIELDS = {
    "type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result",
    "session_id", "total_cost_usd", "usage", "terminal_reason", "stop_reason", "uuid",
    "modelUsage", "permission_denials",
}  # fmt: skip


def check_sdk_shape(line: dict[str, Any]) -> None:
    """The fields claude-agent-sdk's parser requires, by message type."""
    kind = line["type"]
    assert isinstance(line["session_id"], str) and line["session_id"]
    if kind == "system":
        assert "subtype" in line
    elif kind == "assistant":
        assert isinstance(line["message"]["content"], list)
        assert "model" in line["message"]
        for block in line["message"]["content"]:
            required = {"text": {"text"}, "tool_use": {"id", "name", "input"}}
            assert required.get(block["type"], set()) <= set(block)
    elif kind == "user":
        for block in line["message"]["content"]:
            if block["type"] == "tool_result":
                assert block["tool_use_id"]
    elif kind == "result":
        assert set(line) >= RESULT_FIELDS
    else:
        raise AssertionError(f"unexpected line type {kind}")


async def test_a_run_prints_init_assistant_user_and_result_lines(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    model = ScriptedProvider(
        [
            tool_call("Read", {"file_path": str(tmp_path / "notes.txt")}, id="toolu_r"),
            text("It says to remember the milk."),
        ]
    )
    writer = StreamJsonWriter()
    options = QueryOptions(cwd=tmp_path, provider=model, session_id="sess-1")
    lines = [
        json.loads(dumps(line))
        async for event in query("what do my notes say?", options=options)
        for line in writer.lines(event)
    ]

    assert [(line["type"], line.get("subtype")) for line in lines] == [
        ("system", "init"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    for line in lines:
        check_sdk_shape(line)
        assert line["session_id"] == "sess-1"
    init, call, answer, reply, result = lines
    assert init["claude_code_version"] >= "2.0.0"
    assert init["tools"] == ["Bash", "Glob", "Grep", "Read", "Edit", "Write"]
    assert init["cwd"] == str(tmp_path.resolve())
    assert call["message"]["content"][0]["name"] == "Read"
    assert answer["message"]["content"][0]["tool_use_id"] == "toolu_r"
    assert "remember the milk" in json.dumps(answer["message"]["content"][0]["content"])
    assert reply["message"]["stop_reason"] == "end_turn"
    assert result["result"] == "It says to remember the milk."
    assert (result["is_error"], result["num_turns"], result["terminal_reason"]) == (
        False,
        2,
        "completed",
    )
    assert result["usage"]["input_tokens"] == 200


def test_error_results_carry_their_subtype_and_errors() -> None:
    finished = Finished(
        terminal=Terminal.MAX_TURNS,
        message="Reached maximum number of turns (3)",
        num_turns=3,
        usage=Usage(),
        cost_usd=0.0,
        result_text="",
        stop_reason="tool_use",
        duration_ms=12.4,
        duration_api_ms=3.2,
    )
    line = result_line(finished, "s", "m")
    assert line["subtype"] == "error_max_turns"
    assert line["is_error"] is True
    assert line["errors"] == ["Reached maximum number of turns (3)"]
    assert line["stop_reason"] == "tool_use"
    assert line["terminal_reason"] == "max_turns"
    model_error = result_line(
        Finished(
            Terminal.MODEL_ERROR, "overloaded", 1, Usage(), 0.0, "", None, 1, 1, error_status=529
        ),
        "s",
        "m",
    )
    assert model_error["subtype"] == "error_during_execution"
    assert model_error["api_error_status"] == 529


def test_many_small_items_are_cut_to_fit_the_sdk_buffer_too() -> None:
    files = [f"/repo/src/module_{i}/file_{i}.py" for i in range(60_000)]
    line = {"type": "user", "tool_use_result": {"filenames": files, "mode": "files"}}
    printed = dumps(line)
    assert len(printed.encode()) < MAX_LINE_BYTES
    parsed = json.loads(printed)
    assert parsed["tool_use_result"]["mode"] == "files"
    assert parsed["tool_use_result"]["filenames"][0] == files[0]
    assert "more items cut" in parsed["tool_use_result"]["filenames"][-1]


def test_huge_lines_are_cut_to_fit_the_sdk_buffer() -> None:
    line = {"type": "user", "message": {"content": [{"type": "text", "text": "x" * 3_000_000}]}}
    printed = dumps(line)
    assert len(printed.encode()) < MAX_LINE_BYTES
    assert "characters cut to fit the output line limit" in printed
    assert json.loads(printed)["type"] == "user"
