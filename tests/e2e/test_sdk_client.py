"""claude-agent-sdk's `ClaudeSDKClient` driving stayer over one long session: several queries
on one process, control requests answered while it runs, an interrupt during a slow tool."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    Message,
    ResultMessage,
    SystemMessage,
    TextBlock,
)

from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


async def _response(client: ClaudeSDKClient) -> list[Message]:
    return [message async for message in client.receive_response()]


def _texts(messages: list[Message]) -> list[str]:
    return [
        block.text
        for message in messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, TextBlock)
    ]


async def test_two_queries_share_one_conversation(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("The word is apricot."), reply("You said apricot."))
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        info = await client.get_server_info()
        await client.query("remember apricot")
        first = await _response(client)
        await client.query("what was the word?")
        second = await _response(client)

    assert info is not None and info["output_style"] == "default"
    assert {"value", "displayName", "description"} <= set(info["models"][0])
    assert [type(m) for m in first] == [SystemMessage, AssistantMessage, ResultMessage]
    assert [type(m) for m in second] == [AssistantMessage, ResultMessage]  # init came once
    assert (_texts(first), _texts(second)) == (["The word is apricot."], ["You said apricot."])
    ends = [first[-1], second[-1]]
    assert all(isinstance(m, ResultMessage) and not m.is_error for m in ends)
    assert len({m.session_id for m in ends if isinstance(m, ResultMessage)}) == 1
    history = server.requests[1].messages
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content"][0]["text"] == "The word is apricot."
    assert history[2]["content"][-1]["text"] == "what was the word?"


async def test_a_message_sent_while_a_run_goes_gets_a_run_and_result_of_its_own(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Answer to A."), reply("Answer to B."))
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        await client.query("message A")
        await client.query("message B")  # before A's result
        first = await _response(client)
        second = await _response(client)

    assert (_texts(first), _texts(second)) == (["Answer to A."], ["Answer to B."])
    assert [m.result for m in (first[-1], second[-1]) if isinstance(m, ResultMessage)] == [
        "Answer to A.",
        "Answer to B.",
    ]
    asked = [
        [block.get("text") for block in request.messages[-1]["content"]]
        for request in server.requests
    ]
    assert "message A" in asked[0] and "message B" not in asked[0]  # B did not join A's run
    assert asked[1] == ["message B"]


async def test_interrupt_stops_a_slow_tool_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    os.mkfifo(started)
    slow = ToolCall("call_slow", "Bash", {"command": f"echo go > {started}; sleep 60"})
    server.enqueue(reply(slow), reply("Back after the interrupt."))
    options = sdk_options(server, tmp_path, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options) as client:
        await client.query("run the slow command")
        await asyncio.to_thread(started.read_text)  # the command runs: its own signal
        await client.interrupt()
        stopped = await _response(client)
        await client.query("are you there?")
        after = await _response(client)

    result = stopped[-1]
    assert isinstance(result, ResultMessage)
    assert (result.is_error, result.subtype) == (True, "error_during_execution")
    assert result.terminal_reason == "aborted_tools"
    assert _texts(after) == ["Back after the interrupt."]
    assert isinstance(after[-1], ResultMessage) and not after[-1].is_error
    closed = server.requests[1].messages  # the interrupted call was answered before going on
    assert any(
        block.get("type") == "tool_result" and block.get("tool_use_id") == "call_slow"
        for message in closed
        for block in message["content"]
        if isinstance(block, dict)
    )


async def test_control_requests_switch_mode_and_model_and_report_context(
    server: FakeModelServer, tmp_path: Path
) -> None:
    written = tmp_path / "out.txt"
    write = ToolCall("call_write", "Write", {"file_path": str(written), "content": "edited"})
    server.enqueue(reply("First."), reply(write), reply("Second."), reply("Third."))
    (tmp_path / "CLAUDE.md").write_text("Always answer in haiku.\n")
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        await client.query("one")
        await _response(client)
        usage = await client.get_context_usage()
        unknown: Any = "nonsense"  # not one of the SDK's modes: stayer says so
        with pytest.raises(Exception, match="nonsense"):  # the SDK raises a bare Exception
            await client.set_permission_mode(unknown)
        await client.set_permission_mode("acceptEdits")  # the write below needs no question
        await client.set_model("claude-haiku-5-5")
        await client.query("two")
        second = await _response(client)
        await client.set_model(None)  # back to the model the session opened with
        await client.query("three")
        await _response(client)

    assert usage["totalTokens"] == sum(c["tokens"] for c in usage["categories"][:-1])
    assert usage["rawMaxTokens"] > 0 and 0 < usage["percentage"] < 100
    assert usage["apiUsage"] is not None and usage["apiUsage"]["output_tokens"] == 7
    memory = [(Path(m["path"]).name, m["type"]) for m in usage["memoryFiles"]]
    assert ("CLAUDE.md", "project") in memory
    assert written.read_text() == "edited"
    assert isinstance(second[-1], ResultMessage) and not second[-1].is_error
    opened = server.requests[0].model
    models = [request.model for request in server.requests]
    assert models == [opened, "claude-haiku-5-5", "claude-haiku-5-5", opened]
    assert opened != "claude-haiku-5-5"
