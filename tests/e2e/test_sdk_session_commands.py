"""`/clear` and `/compact` sent as claude-agent-sdk user messages are carried out by the
session, as Claude Code does in stream-json input, each answered by one `result`; other slash
messages still go to the session (custom commands, skills)."""

from __future__ import annotations

import json
from pathlib import Path

from claude_agent_sdk import ClaudeSDKClient, Message, ResultMessage, SystemMessage

from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


async def asked(client: ClaudeSDKClient, text: str) -> list[Message]:
    await client.query(text)
    return [message async for message in client.receive_response()]


def subtypes(messages: list[Message]) -> list[str]:
    return [m.subtype for m in messages if isinstance(m, SystemMessage)]


async def test_compact_and_clear_are_the_sessions_own_each_with_one_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("First answer."), reply("Summary: one question so far."))
    server.enqueue(reply("Answer after clearing."))
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        await asked(client, "the first question")
        compacted = await asked(client, "/compact keep the numbers")
        cleared = await asked(client, "/clear")
        after = await asked(client, "a fresh question")

    summary_request = json.dumps(server.requests[1].messages)
    assert "keep the numbers" in summary_request  # the instructions went to the summary
    assert "compact_boundary" in subtypes(compacted)
    assert isinstance(compacted[-1], ResultMessage) and not compacted[-1].is_error
    assert "conversation_reset" in subtypes(cleared)
    assert [type(m).__name__ for m in cleared if not isinstance(m, SystemMessage)] == [
        "ResultMessage"
    ]
    assert isinstance(cleared[-1], ResultMessage) and not cleared[-1].is_error
    assert cleared[-1].session_id != compacted[-1].session_id  # a new session after /clear
    assert len(server.requests) == 3  # neither command went to the model as text
    fresh = json.dumps(server.requests[2].messages)
    assert "a fresh question" in fresh and "one question so far" not in fresh
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "Answer after clearing."


async def test_compact_with_nothing_to_compact_is_an_error_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        messages = await asked(client, "/compact")

    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert "nothing to compact" in str(result.result)
    assert server.requests == []
