"""A running Bash command's lines reach stream-json consumers as they are printed, before its
result, when partial messages are asked for; the text output shows only the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

STREAM = ("--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
COUNTING = "for i in 1 2 3; do echo line$i; sleep 0.05; done"


def _content_type(line: dict[str, Any]) -> str | None:
    """The type of the one block an assistant or user line holds."""
    if line["type"] not in ("assistant", "user") or not line["message"]["content"]:
        return None
    return str(line["message"]["content"][0]["type"])


def test_bash_lines_are_tool_progress_lines_in_order_before_the_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    call = ToolCall("call_1", "Bash", {"command": COUNTING})
    server.enqueue(reply(call), reply("Counted."))
    done = stayer(
        "-p", "count", *STREAM, "--include-partial-messages", cwd=tmp_path, env=server.env()
    )

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    progress = [line for line in lines if line["type"] == "tool_progress"]
    at = [i for i, line in enumerate(lines) if line["type"] == "tool_progress"]
    call_at = next(i for i, line in enumerate(lines) if _content_type(line) == "tool_use")
    result_at = next(i for i, line in enumerate(lines) if _content_type(line) == "tool_result")
    assert at and call_at < at[0] and at[-1] < result_at, [line["type"] for line in lines]
    assert "".join(line["output"] for line in progress) == "line1\nline2\nline3\n"
    elapsed = [line["elapsed_time_seconds"] for line in progress]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0
    session = lines[0]["session_id"]
    assert {
        (line["tool_use_id"], line["tool_name"], line["parent_tool_use_id"], line["session_id"])
        for line in progress
    } == {("call_1", "Bash", None, session)}
    result = lines[result_at]["message"]["content"][0]["content"]
    assert result == [{"type": "text", "text": "line1\nline2\nline3"}]


def test_without_partial_messages_and_in_text_output_progress_is_not_printed(
    server: FakeModelServer, tmp_path: Path
) -> None:
    call = ToolCall("call_1", "Bash", {"command": COUNTING})
    server.enqueue(reply(call), reply("Counted."), reply(call), reply("Counted."))
    streamed = stayer("-p", "count", *STREAM, cwd=tmp_path, env=server.env())
    texted = stayer("-p", "count", "--dangerously-skip-permissions", cwd=tmp_path, env=server.env())

    assert streamed.status == 0, streamed.stderr
    assert "tool_progress" not in {line["type"] for line in streamed.json_lines()}
    assert (texted.status, texted.stdout, texted.stderr) == (0, "Counted.\n", "")
