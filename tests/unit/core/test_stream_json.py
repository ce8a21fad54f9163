"""stream-json lines have the shapes claude-agent-sdk parses (reference/protocols.md §1.6)."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from stayer.errors import RateLimited, ServerError
from stayer.events import BlockCompleted, Event, Finished, StreamEvent, Terminal
from stayer.loop.abort import AbortSignal
from stayer.loop.state import RetryPolicy
from stayer.messages import TextBlock, ThinkingBlock, ToolUseBlock, Usage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Cut, Reply, ScriptedProvider, Step, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.headless import Printer, print_run
from stayer.ui.stream_json import MAX_LINE_BYTES, StreamJsonWriter, dumps, result_line

RESULT_FIELDS = {
    "type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result",
    "session_id", "total_cost_usd", "usage", "terminal_reason", "stop_reason", "uuid",
    "modelUsage", "permission_denials",
}  # fmt: skip

SESSION = "5f0c3a1e-2b4d-4e6f-8a9b-0c1d2e3f4a5b"


SDK_BLOCK_FIELDS = {
    "text": {"text"},
    "thinking": {"thinking", "signature"},
    "tool_use": {"id", "name", "input"},
}


def check_sdk_shape(line: dict[str, Any]) -> None:
    """The fields claude-agent-sdk's parser requires, by message type."""
    kind = line["type"]
    assert isinstance(line["session_id"], str) and line["session_id"]
    if kind == "system":
        assert "subtype" in line
    elif kind == "assistant":
        content = line["message"]["content"]
        assert isinstance(content, list)
        assert len(content) <= 1, "Claude Code prints one content block per assistant line"
        assert "model" in line["message"]
        for block in content:
            assert SDK_BLOCK_FIELDS.get(block["type"], set()) <= set(block)
    elif kind == "user":
        for block in line["message"]["content"]:
            if block["type"] == "tool_result":
                assert block["tool_use_id"]
    elif kind == "stream_event":
        assert isinstance(line["uuid"], str) and line["uuid"]
        assert isinstance(line["event"], dict) and isinstance(line["event"]["type"], str)
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
    options = QueryOptions(cwd=tmp_path, provider=model, session_id=SESSION)
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
        assert line["session_id"] == SESSION
    init, call, answer, reply, result = lines
    assert init["claude_code_version"] >= "2.0.0"
    assert init["tools"] == [
        *("Agent", "Bash", "BashOutput", "KillShell", "Glob", "Grep", "Read", "Edit"),
        *("Write", "NotebookEdit", "WebFetch", "TodoWrite", "ExitPlanMode", "Skill", "Pin"),
    ]
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
    line = result_line(finished, "s")
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


# --- assistant messages: one line per content block, printed once the message is complete ----


class BreaksOnce:
    """A model whose first answer breaks (retryably) after `after_blocks` complete blocks; every
    call plays the next step of `script`, so the retry gets the script's next answer.
    """

    name = "breaks-once"

    def __init__(self, script: ScriptedProvider, *, after_blocks: int) -> None:
        self.script = script
        self.after_blocks = after_blocks
        self.broke = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        blocks = 0
        async for event in self.script.stream(request):
            if not self.broke and blocks == self.after_blocks:
                self.broke = True
                raise RateLimited("the connection dropped", retry_after=0.0)
            blocks += isinstance(event, BlockCompleted)
            yield event

    async def aclose(self) -> None:
        return None


async def printed(
    model: ScriptedProvider | BreaksOnce,
    cwd: Path,
    *,
    partial: bool = False,
    abort_when: Callable[[Event], bool] | None = None,
) -> list[dict[str, Any]]:
    """Every line a real run on `model` prints, each checked against the SDK's parser."""
    writer = StreamJsonWriter(include_partial=partial)
    # not kept: some tests print two runs under the one id
    options = QueryOptions(cwd=cwd, provider=model, session_id=SESSION, persist_session=False)
    lines: list[dict[str, Any]] = []
    async for event in query("go", options=options):
        if abort_when is not None and abort_when(event):
            options.abort.abort()
        lines.extend(json.loads(dumps(line)) for line in writer.lines(event))
    for line in lines:
        check_sdk_shape(line)
    return lines


def assistant_messages(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["message"] for line in lines if line["type"] == "assistant"]


THOUGHT = ThinkingBlock("Look first.", "sig-1")
GLOB = ToolUseBlock("toolu_g", "Glob", {"pattern": "*.txt"})
NO_RETRIES = RetryPolicy(max_retries=0)
VARYING = {"uuid", "duration_ms", "duration_api_ms"}
"""Fields that differ between two runs of one script."""
USAGE = {
    "input_tokens": 100,
    "output_tokens": 20,
    "cache_read_input_tokens": 0,
    "cache_creation_input_tokens": 0,
}


def api_message(block: dict[str, Any] | None, stop_reason: str | None, number: int = 1) -> Any:
    return {
        "role": "assistant",
        "content": [] if block is None else [block],
        "id": f"msg_scripted_{number}",
        "type": "message",
        "model": "scripted",
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": USAGE,
    }


async def test_each_content_block_is_its_own_assistant_line(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply((THOUGHT, TextBlock("Let me look."), GLOB)), text("None.")])
    lines = await printed(model, tmp_path)

    assert [line["type"] for line in lines] == [
        "system", "assistant", "assistant", "assistant", "user", "assistant", "result",
    ]  # fmt: skip
    thinking = {"type": "thinking", "thinking": "Look first.", "signature": "sig-1"}
    said = {"type": "text", "text": "Let me look."}
    call = {"type": "tool_use", "id": "toolu_g", "name": "Glob", "input": {"pattern": "*.txt"}}
    assert assistant_messages(lines) == [
        api_message(thinking, None),
        api_message(said, None),
        api_message(call, "tool_use"),
        api_message({"type": "text", "text": "None."}, "end_turn", number=2),
    ]
    assert lines[-1]["result"] == "None."


async def test_an_answer_with_no_blocks_still_prints_one_valid_line(tmp_path: Path) -> None:
    lines = await printed(ScriptedProvider([Reply(()), Reply(()), Reply(())]), tmp_path)

    # The first two empty replies are dropped by recovery, so they are withheld, never shown;
    # the last one stays in the conversation as the run ends, and gets its one line.
    kinds = [(line["type"], line.get("subtype"), line.get("reason")) for line in lines]
    assert kinds == [
        ("system", "init", None),
        ("system", "continuing", "empty_response_nudge"),
        ("system", "continuing", "empty_response_resend"),
        ("assistant", None, None),
        ("result", "error_during_execution", None),
    ]
    assert assistant_messages(lines) == [api_message(None, "end_turn", number=3)]
    assert lines[-1]["terminal_reason"] == "empty_response"


async def test_blocks_of_an_answer_a_retry_replaced_are_never_printed(tmp_path: Path) -> None:
    for partial in (False, True):
        # A whole tool call streamed before the break that never started (no such tool): the
        # answer is asked again, not kept.
        never = ToolUseBlock("toolu_n", "NoSuchTool", {"pattern": "*.txt"})
        script = ScriptedProvider([Reply((TextBlock("First try."), never)), text("Second try.")])
        lines = await printed(BreaksOnce(script, after_blocks=2), tmp_path, partial=partial)

        assert assistant_messages(lines) == [
            api_message({"type": "text", "text": "Second try."}, "end_turn", number=2)
        ]
        kinds = [(line["type"], line.get("subtype")) for line in lines]
        if partial:  # the raw events of the broken answer did go out: they are withdrawn
            withdrawn = kinds.index(("system", "withdrawn"))
            assert lines[withdrawn]["message_id"] == "msg_scripted_1"
            assert withdrawn < kinds.index(("assistant", None))
        else:
            assert kinds == [
                ("system", "init"),
                ("system", "api_retry"),
                ("assistant", None),
                ("result", "success"),
            ]


async def test_text_kept_at_a_cut_is_printed_once_and_never_withdrawn(tmp_path: Path) -> None:
    said = "The loader reads the old format, converts each record and hands it to the writer, "
    cut = Cut(ServerError("server error (500)", status=500, retry_after=0.0), open=TextBlock(said))
    for partial in (False, True):
        lines = await printed(ScriptedProvider([cut, text("which saves it.")]), tmp_path,
                              partial=partial)  # fmt: skip

        printed_lines = [line for line in lines if line["type"] != "stream_event"]
        kinds = [(line["type"], line.get("subtype"), line.get("reason")) for line in printed_lines]
        assert kinds == [
            ("system", "init", None),
            ("assistant", None, None),
            ("system", "continuing", "truncated_response_recovery"),
            ("system", "api_retry", None),
            ("assistant", None, None),
            ("result", "success", None),
        ]
        kept = {**api_message({"type": "text", "text": said}, None), "usage": CUT_USAGE}
        assert assistant_messages(lines) == [
            kept,
            api_message({"type": "text", "text": "which saves it."}, "end_turn", number=2),
        ]
        assert printed_lines[3]["error_status"] == 500
        assert lines[-1]["result"] == said + "which saves it."


CUT_USAGE = {**USAGE, "output_tokens": 0}
"""What a scripted stream cut before its message_delta has billed: its input only."""


async def test_an_interrupted_answer_prints_its_complete_blocks_before_their_results(
    tmp_path: Path,
) -> None:
    long_text = TextBlock("and then some more words " * 40)
    model = ScriptedProvider([Reply((GLOB, long_text))], chunk_delay_s=0.01)

    def tool_use_done(event: Event) -> bool:
        return isinstance(event, BlockCompleted) and isinstance(event.block, ToolUseBlock)

    lines = await printed(model, tmp_path, abort_when=tool_use_done)

    assert [line["type"] for line in lines] == ["system", "assistant", "user", "user", "result"]
    (message,) = assistant_messages(lines)
    assert message["content"] == [
        {"type": "tool_use", "id": "toolu_g", "name": "Glob", "input": {"pattern": "*.txt"}}
    ]
    assert (message["id"], message["stop_reason"]) == ("msg_scripted_1", None)
    assert lines[2]["message"]["content"][0]["tool_use_id"] == "toolu_g"
    assert lines[-1]["terminal_reason"] == "aborted_streaming"


async def test_a_failed_answer_prints_no_blocks(tmp_path: Path) -> None:
    script = ScriptedProvider([Reply((TextBlock("Half an answer."), GLOB))])
    model = BreaksOnce(script, after_blocks=1)
    writer = StreamJsonWriter()
    options = QueryOptions(cwd=tmp_path, provider=model, session_id=SESSION, retry=NO_RETRIES)
    lines = [line async for event in query("go", options=options) for line in writer.lines(event)]

    assert [line["type"] for line in lines] == ["system", "result"]
    assert lines[-1]["terminal_reason"] == "model_error"


async def test_big_blocks_each_fit_a_line_of_their_own(tmp_path: Path) -> None:
    halves = (TextBlock("x" * 600_000), TextBlock("y" * 600_000))
    lines = await printed(ScriptedProvider([Reply(halves)]), tmp_path)

    texts = [message["content"][0]["text"] for message in assistant_messages(lines)]
    assert texts == ["x" * 600_000, "y" * 600_000]


async def test_json_verbose_collects_the_lines_stream_json_prints(tmp_path: Path) -> None:
    def script() -> list[Step]:
        return [Reply((THOUGHT, TextBlock("Let me look."), GLOB)), text("None.")]

    async def output(printer: Printer) -> list[dict[str, Any]]:
        options = QueryOptions(
            cwd=tmp_path,
            provider=ScriptedProvider(script()),
            session_id=SESSION,
            persist_session=False,  # run twice under the one id
        )
        out = io.StringIO()
        status = await print_run(query("go", options=options), printer, AbortSignal(), out)
        assert status == 0
        written = out.getvalue()
        lines = (
            json.loads(written)
            if printer.output_format == "json"
            else [json.loads(line) for line in written.splitlines()]
        )
        return [{k: v for k, v in line.items() if k not in VARYING} for line in lines]

    streamed = await output(Printer(output_format="stream-json", verbose=True))
    collected = await output(Printer(output_format="json", verbose=True))
    assert collected == streamed
    assert [line["type"] for line in collected].count("assistant") == 4
