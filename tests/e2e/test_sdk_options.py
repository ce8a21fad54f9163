"""claude-agent-sdk's options through its public `query()`, end to end over stayer's stdin
protocol and the fake model server: the agents it sends in `initialize` run as subagents,
`thinking` and `effort` reach the request body, and `output_format` comes back as the
result's `structured_output`."""

from __future__ import annotations

from pathlib import Path

from claude_agent_sdk import AgentDefinition, ResultMessage, query

from stayer.tools.names import AGENT, STRUCTURED_OUTPUT
from tests.e2e.sdk_client import sdk_options
from tests.e2e.test_agent_flag import system_text
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


async def test_the_sdks_agents_are_the_subagents_the_model_can_start(
    server: FakeModelServer, tmp_path: Path
) -> None:
    call = {"description": "check", "prompt": "check README", "subagent_type": "checker",
            "run_in_background": False}  # fmt: skip
    server.enqueue(reply(ToolCall("toolu_1", AGENT, call)), reply("all fine"), reply("done"))
    checker = AgentDefinition(description="Checks spelling.", prompt="You check spelling.")
    options = sdk_options(
        server, tmp_path, agents={"checker": checker}, permission_mode="bypassPermissions"
    )
    messages = [m async for m in query(prompt="check the spelling", options=options)]

    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    parent, child, _ = server.requests
    assert "You check spelling." in system_text(child)
    assert "You check spelling." not in system_text(parent)


async def test_thinking_and_effort_reach_the_request_body(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("ok"))
    options = sdk_options(
        server, tmp_path, thinking={"type": "enabled", "budget_tokens": 3000}, effort="medium"
    )
    _ = [m async for m in query(prompt="think", options=options)]

    body = server.requests[0].body
    assert isinstance(body, dict)
    assert (body["thinking"], body["output_config"]) == (
        {"type": "enabled", "budget_tokens": 3000},
        {"effort": "medium"},
    )


async def test_an_output_format_answer_is_the_results_structured_output(
    server: FakeModelServer, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    server.enqueue(reply(ToolCall("toolu_1", STRUCTURED_OUTPUT, {"ok": True})), reply("Yes."))
    options = sdk_options(server, tmp_path, output_format={"type": "json_schema", "schema": schema})
    messages = [m async for m in query(prompt="is it ok?", options=options)]

    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.result, result.structured_output) == ("Yes.", {"ok": True})
