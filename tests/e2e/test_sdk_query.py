"""claude-agent-sdk's `query()` driving stayer (`--input-format stream-json`) end to end, against
the fake model server: the SDK's own handshake, message, result and exit on input closed."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    Message,
    ResultError,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


async def test_query_hi_gets_its_answer_and_result(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("Hello from stayer."))
    messages = [m async for m in query(prompt="hi", options=sdk_options(server, tmp_path))]

    assert [type(m) for m in messages] == [SystemMessage, AssistantMessage, ResultMessage]
    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["claude_code_version"] == "2.1.332"
    assert isinstance(answer, AssistantMessage)
    assert answer.content == [TextBlock("Hello from stayer.")]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == (
        "success",
        False,
        "Hello from stayer.",
    )
    assert result.session_id == init.data["session_id"]
    assert server.requests[0].messages[-1]["content"][0]["text"] == "hi"


async def test_query_runs_a_tool_round_trip(server: FakeModelServer, tmp_path: Path) -> None:
    call = ToolCall("call_1", "Bash", {"command": "echo round-trip"})
    server.enqueue(reply(call), reply("It printed round-trip."))
    options = sdk_options(server, tmp_path, permission_mode="bypassPermissions")
    messages = [m async for m in query(prompt="run it", options=options)]

    kinds = [type(m) for m in messages]
    assert kinds == [SystemMessage, AssistantMessage, UserMessage, AssistantMessage, ResultMessage]
    use = messages[1].content[0]  # type: ignore[union-attr]
    assert isinstance(use, ToolUseBlock) and use.input == {"command": "echo round-trip"}
    results = messages[2].content  # type: ignore[union-attr]
    assert isinstance(results, list) and isinstance(results[0], ToolResultBlock)
    assert results[0].tool_use_id == "call_1"
    assert "round-trip" in str(results[0].content)
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.is_error, result.num_turns, result.result) == (
        False,
        2,
        "It printed round-trip.",
    )


async def test_max_turns_ends_with_its_error_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    call = ToolCall("call_1", "Bash", {"command": "echo again"})
    server.enqueue(reply(call))
    options = sdk_options(server, tmp_path, max_turns=1, permission_mode="bypassPermissions")
    messages: list[Message] = []
    with pytest.raises(ResultError) as raised:
        async for message in query(prompt="loop", options=options):
            messages.append(message)

    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns) == ("error_max_turns", True, 1)
    assert raised.value.subtype == "error_max_turns"
    assert len(server.requests) == 1  # no second model call past the limit


async def test_resume_continues_the_first_conversation(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Noted: the code is 4417."), reply("The code was 4417."))
    first = [
        m async for m in query(prompt="the code is 4417", options=sdk_options(server, tmp_path))
    ]
    opened = first[-1]
    assert isinstance(opened, ResultMessage)

    options = sdk_options(server, tmp_path, resume=opened.session_id)
    second = [m async for m in query(prompt="what was the code?", options=options)]

    result = second[-1]
    assert isinstance(result, ResultMessage) and result.result == "The code was 4417."
    history = server.requests[1].messages
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content"][0]["text"] == "Noted: the code is 4417."


async def test_a_session_that_cannot_open_fails_initialize_with_the_reason(
    server: FakeModelServer, tmp_path: Path
) -> None:
    said: list[str] = []
    missing = "00000000-0000-4000-8000-000000000000"
    options = sdk_options(server, tmp_path, stderr=said, resume=missing)
    with pytest.raises(Exception, match=f"no session {missing} saved for this folder"):
        async for _ in query(prompt="hi", options=options):
            pass

    assert [line for line in said if line.startswith("stayer: ")] == [
        f"stayer: no session {missing} saved for this folder; `stayer --resume` lists them"
    ]
    assert server.requests == []
