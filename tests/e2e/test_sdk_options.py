"""claude-agent-sdk's options through its public `query()`, end to end over stayer's stdin
protocol and the fake model server: the agents it sends in `initialize` run as subagents,
`thinking` and `effort` reach the request body, `output_format` comes back as the result's
`structured_output`, and `set_max_thinking_tokens` changes the budget of the next call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import AgentDefinition, ResultMessage, query

from stayer.tools.names import AGENT, STRUCTURED_OUTPUT
from tests.e2e.sdk_client import sdk_options
from tests.e2e.sdk_process import initialize, start, user
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


def test_set_max_thinking_tokens_over_the_stdin_protocol(
    server: FakeModelServer, tmp_path: Path
) -> None:
    # the Python SDK has no method for it (the TypeScript one has); sent as it would send it
    server.enqueue(reply("ok"))
    process = start(tmp_path, server, "--thinking", "adaptive")
    assert process.stdin is not None and process.stdout is not None
    request = {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 2048}
    asked = {"type": "control_request", "request_id": "req_2", "request": request}
    process.stdin.write(initialize() + "\n" + json.dumps(asked) + "\n")
    process.stdin.flush()
    replies: dict[str, Any] = {}
    while "req_2" not in replies:  # each reply is a line: wait for the one that says it holds
        frame = json.loads(process.stdout.readline())
        if frame["type"] == "control_response":
            replies[frame["response"]["request_id"]] = frame["response"]
    out, err = process.communicate(user("think") + "\n", timeout=60)

    assert process.returncode == 0, err
    assert replies["req_2"] == {"subtype": "success", "request_id": "req_2", "response": {}}
    assert json.loads(out.splitlines()[-1])["subtype"] == "success"
    body = server.requests[0].body
    assert isinstance(body, dict)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
