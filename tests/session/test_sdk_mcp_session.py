"""A Session given an SDK program's in-process MCP server: the first model call already offers
its tools (the session waits for it to list them), a call runs the program's function and its
result reaches the model, and a function that raises is an error result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import stayer
from stayer.events import Event, Finished
from stayer.session.options import QueryOptions
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply
from tests.mcp.sdk_program import Program, calculator

SDK_CONFIG = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})


def options(tmp_path: Path, server: FakeModelServer, program: Program) -> QueryOptions:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    return QueryOptions(
        cwd=work,
        env=env,
        mcp_config=[SDK_CONFIG],
        allowed_tools=["mcp__calc"],
        sdk_mcp=program.send,
    )


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    last = request.messages[-1]
    assert isinstance(last, dict)
    return [block for block in last["content"] if block.get("type") == "tool_result"]


async def test_the_first_call_offers_the_programs_tools_and_reaches_them(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.enqueue(
            reply(
                ToolCall("toolu_1", "mcp__calc__add", {"a": 1, "b": 2}),
                ToolCall("toolu_2", "mcp__calc__fail", {}),
            ),
            reply("it said 3"),
        )
        async with Program(calculator()).running() as program:
            session = await stayer.Session.open(options(tmp_path, server, program))
            async with session:
                events: list[Event] = [event async for event in session.submit("add 1 and 2")]
        body = server.requests[0].body
        assert isinstance(body, dict)
        offered = [tool["name"] for tool in body["tools"] if tool["name"].startswith("mcp__")]
        assert offered == ["mcp__calc__add", "mcp__calc__wait", "mcp__calc__fail"]
        added, failed = tool_results(server.requests[1])
        assert (added["content"][0]["text"], added.get("is_error", False)) == ("3", False)
        assert failed["is_error"] is True
        assert "the calculator broke" in failed["content"][0]["text"]
        assert isinstance(events[-1], Finished) and not events[-1].is_error
