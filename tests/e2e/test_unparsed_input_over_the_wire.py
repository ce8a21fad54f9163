"""Tool arguments that are not a JSON object, from `stayer -p` against both wire protocols.

The model is told why the call did not run and what it wrote; everything printed, sent and
saved shows the call with an empty input and nothing of stayer's own making.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.e2e.conversations import transcript_of
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, WireProtocol, reply

STREAM = ("--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions")
PARTIAL = (*STREAM, "--include-partial-messages")
MODEL = {"anthropic": (), "openai": ("--model", "openai:local-model")}
RAW = '{"command": "echo hi" "there"}'
REFUSAL = (
    "InputValidationError: the input was not a JSON object (Expecting ',' delimiter at line 1 "
    "column 23), so Bash did not run. Call it again with the whole input as one JSON object. "
    f"The input as received:\n{RAW}"
)
EMPTY_CALL = {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {}}


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_unparsed_arguments_reach_the_model_as_a_refusal_and_nowhere_else(
    server: FakeModelServer, tmp_path: Path, protocol: WireProtocol
) -> None:
    server.enqueue(reply(ToolCall("call_1", "Bash", raw_input=RAW)), reply("Fixed."))
    done = stayer("-p", "hi", *MODEL[protocol], *PARTIAL, cwd=tmp_path, env=server.env(protocol))

    assert done.status == 0, done.stderr
    lines = done.json_lines()
    assistant = [line["message"]["content"] for line in lines if line["type"] == "assistant"]
    assert assistant == [[EMPTY_CALL], [{"type": "text", "text": "Fixed."}]]
    (user,) = [line["message"]["content"] for line in lines if line["type"] == "user"]
    assert user == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": [{"type": "text", "text": REFUSAL}],
            "is_error": True,
        }
    ]

    follow: Any = server.requests[1].messages
    if protocol == "anthropic":
        assert follow[1]["content"] == [EMPTY_CALL]
    else:  # after the system message
        function = {"name": "Bash", "arguments": "{}"}
        assert follow[2]["tool_calls"] == [
            {"id": "call_1", "type": "function", "function": function}
        ]

    transcript = transcript_of(tmp_path, lines[0]["session_id"]).read_text()
    records = [json.loads(line) for line in transcript.splitlines()]
    saved = [r["message"]["content"] for r in records if r.get("type") == "assistant"]
    assert saved == [[EMPTY_CALL], [{"type": "text", "text": "Fixed."}]]
    assert REFUSAL in transcript.replace("\\n", "\n").replace('\\"', '"')

    for text in (done.stdout, transcript, *(r.raw.decode() for r in server.requests)):
        assert "__stayer" not in text
        assert '"unparsed"' not in text  # the field's name as a JSON key
