"""Every line stayer prints for the SDK is one the SDK's own parser accepts (protocols.md §1.6).

`claude_agent_sdk._internal.message_parser.parse_message` is what the SDK runs over each line
that is not a control frame (those it routes to its control protocol first); a line it rejects
ends its caller's iteration with an exception. A line of a type the SDK knows must parse into a
message; a type it does not know (stayer's `tool_progress`) it skips, which is allowed.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk._internal.message_parser import parse_message

from tests.e2e.sdk_process import initialize, session, user
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import HttpError, Thinking, ToolCall, reply

ROUTED = {"control_request", "control_response", "control_cancel_request"}
KNOWN = {"user", "assistant", "system", "result", "stream_event", "rate_limit_event"}
PIXEL = base64.b64encode(bytes.fromhex("89504e470d0a1a0a")).decode()


def assert_all_parse(frames: list[dict[str, Any]]) -> list[str]:
    """Run the SDK's parser over every frame; returns the types seen, in order."""
    for frame in frames:
        if frame["type"] in ROUTED:
            continue
        parsed = parse_message(frame)  # raises MessageParseError on a line it rejects
        assert parsed is not None or frame["type"] not in KNOWN, frame
    return [frame["type"] for frame in frames]


def test_a_text_session_parses(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("One."), reply("Two."))
    image = [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]
    lines = [initialize(), user("hi"), user(image)]
    status, frames, err = session(tmp_path, server, lines, "--replay-user-messages")

    assert status == 0, err
    kinds = assert_all_parse(frames)
    assert kinds.count("result") == 2 and kinds.count("user") == 2  # the two replayed
    sent = server.requests[1].messages[-1]["content"]
    assert [block["type"] for block in sent] == ["text", "image"]


@pytest.mark.parametrize("partial", [False, True])
def test_a_tool_round_trip_parses(server: FakeModelServer, tmp_path: Path, partial: bool) -> None:
    call = ToolCall("call_1", "Bash", {"command": "echo parsed"})
    server.enqueue(reply(Thinking("Let me run it."), "Running.", call), reply("It said parsed."))
    args = ["--dangerously-skip-permissions", *(["--include-partial-messages"] if partial else [])]
    status, frames, err = session(tmp_path, server, [initialize(), user("go")], *args)

    assert status == 0, err
    kinds = assert_all_parse(frames)
    assert ("stream_event" in kinds) is partial
    assert {"assistant", "user", "result"} <= set(kinds)


def test_an_error_session_parses(server: FakeModelServer, tmp_path: Path) -> None:
    body = b'{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}'
    server.enqueue(HttpError(400, body))
    lines = [initialize(), "not json at all", user([]), user("fail please")]
    status, frames, err = session(tmp_path, server, lines)

    assert status == 1, err  # the last result was an error
    kinds = assert_all_parse(frames)
    assert kinds.count("result") == 2
    assert all(frame["is_error"] for frame in frames if frame["type"] == "result")
