"""claude-agent-sdk's in-process MCP servers (`create_sdk_mcp_server` + `@tool`) driving stayer
end to end: the model sees the program's tools as `mcp__<server>__<tool>` from its first call,
a call runs the Python function in this test's process and its result reaches the model, a
function that raises is an error result, and a deny rule hides the tool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tests.e2e.cli import stayer
from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply

added: list[dict[str, Any]] = []


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    added.append(args)
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a'] / args['b']:g}"}]}


def calculator() -> dict[str, Any]:
    return {"calc": create_sdk_mcp_server("calculator", tools=[add, divide])}


def offered(request: RecordedRequest) -> list[str]:
    body = request.body
    assert isinstance(body, dict)
    return [t["name"] for t in body.get("tools", []) if t["name"].startswith("mcp__")]


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    last = request.messages[-1]
    assert isinstance(last, dict)
    return [block for block in last["content"] if block.get("type") == "tool_result"]


async def test_the_model_calls_the_programs_function_and_reads_its_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    added.clear()
    server.enqueue(
        reply(ToolCall("toolu_1", "mcp__calc__add", {"a": 1, "b": 2})), reply("It is 3.")
    )
    options = sdk_options(
        server, tmp_path, mcp_servers=calculator(), allowed_tools=["mcp__calc__add"]
    )
    messages = [m async for m in query(prompt="add 1 and 2", options=options)]

    assert added == [{"a": 1, "b": 2}]  # ran here, in the program's own process
    assert offered(server.requests[0]) == ["mcp__calc__add", "mcp__calc__divide"]
    [result] = tool_results(server.requests[1])
    assert (result["content"][0]["text"], result.get("is_error", False)) == ("3", False)
    init = messages[0]
    assert isinstance(init, SystemMessage)
    assert {"name": "calc", "status": "connected", "tools": 2} in [
        {k: s[k] for k in ("name", "status", "tools") if k in s} for s in init.data["mcp_servers"]
    ]
    done = messages[-1]
    assert isinstance(done, ResultMessage)
    assert (done.is_error, done.result) == (False, "It is 3.")


async def test_a_function_that_raises_is_an_error_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "mcp__calc__divide", {"a": 1, "b": 0})), reply("Cannot.")
    )
    options = sdk_options(server, tmp_path, mcp_servers=calculator(), allowed_tools=["mcp__calc"])
    messages = [m async for m in query(prompt="divide 1 by 0", options=options)]

    [result] = tool_results(server.requests[1])
    assert result["is_error"] is True
    assert "division by zero" in result["content"][0]["text"]
    blocks = [
        block
        for message in messages
        if isinstance(message, UserMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    assert [block.is_error for block in blocks] == [True]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


async def test_a_deny_rule_hides_the_programs_tool(server: FakeModelServer, tmp_path: Path) -> None:
    server.enqueue(reply("Only division here."))
    options = sdk_options(
        server,
        tmp_path,
        mcp_servers=calculator(),
        disallowed_tools=["mcp__calc__add"],
        allowed_tools=["mcp__calc"],
    )
    messages = [m async for m in query(prompt="what can you do?", options=options)]

    assert offered(server.requests[0]) == ["mcp__calc__divide"]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


async def test_the_program_sees_turns_off_and_restarts_its_servers(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "mcp__calc__add", {"a": 2, "b": 2})),
        reply("It is 4."),
        reply("No calculator now."),
        reply("Back."),
    )
    options = sdk_options(server, tmp_path, mcp_servers=calculator(), allowed_tools=["mcp__calc"])
    async with ClaudeSDKClient(options) as client:
        await client.query("add 2 and 2")
        [m async for m in client.receive_response()]
        status = await client.get_mcp_status()
        [calc] = status["mcpServers"]
        assert {key: calc.get(key) for key in ("name", "status", "serverInfo", "scope")} == {
            "name": "calc",
            "status": "connected",
            "serverInfo": {"name": "calculator", "version": "1.0.0"},
            "scope": "flag",
        }
        assert [(t["name"], t["description"]) for t in calc.get("tools", [])] == [
            ("add", "Add two numbers"),
            ("divide", "Divide a by b"),
        ]

        await client.toggle_mcp_server("calc", False)
        [calc] = (await client.get_mcp_status())["mcpServers"]
        assert (calc["status"], "tools" in calc) == ("disabled", False)
        await client.query("add again")
        [m async for m in client.receive_response()]
        assert offered(server.requests[2]) == []

        await client.toggle_mcp_server("calc", True)
        await client.reconnect_mcp_server("calc")
        await client.query("and now?")
        [m async for m in client.receive_response()]
        assert offered(server.requests[3]) == ["mcp__calc__add", "mcp__calc__divide"]

        with pytest.raises(Exception, match="no MCP server named nope in this session"):
            await client.reconnect_mcp_server("nope")


def test_without_the_sdk_an_sdk_server_is_refused_in_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Nothing to call."))
    config = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    done = stayer("-p", "hi", "--mcp-config", config, cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    assert done.stdout.strip() == "Nothing to call."
    [said] = [line for line in done.stderr.splitlines() if "calc" in line]
    assert said == (
        'stayer: MCP server calc failed: "type": "sdk" names a server inside a claude-agent-sdk '
        'program, and none runs stayer here to reach it through; give it a "command" or a "url" '
        "instead (in --mcp-config)"
    )


async def test_an_interrupt_during_a_slow_tool_cancels_it_in_the_program(
    server: FakeModelServer, tmp_path: Path
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool("slow", "Takes forever", {})
    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"content": []}

    server.enqueue(reply(ToolCall("toolu_1", "mcp__calc__slow", {})), reply("Still here."))
    servers = {"calc": create_sdk_mcp_server("calculator", tools=[slow, add])}
    options = sdk_options(server, tmp_path, mcp_servers=servers, allowed_tools=["mcp__calc"])
    async with ClaudeSDKClient(options) as client:
        await client.query("be slow")
        await asyncio.wait_for(started.wait(), 30)
        await client.interrupt()
        first = [m async for m in client.receive_response()]
        await asyncio.wait_for(cancelled.wait(), 30)  # the program's handler was told

        await client.query("are you there?")
        second = [m async for m in client.receive_response()]
    assert isinstance(first[-1], ResultMessage)
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "Still here."
    assert offered(server.requests[1]) == ["mcp__calc__slow", "mcp__calc__add"]
