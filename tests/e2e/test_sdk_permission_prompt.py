"""claude-agent-sdk's `can_use_tool` callback answering stayer's permission questions
(`--permission-prompt-tool stdio`), and the values of that flag stayer cannot ask through."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    query,
)
from claude_agent_sdk.types import (
    CanUseTool,
    PermissionResult,
    PermissionRuleValue,
    PermissionUpdate,
)

from stayer.tools.names import BASH
from tests.e2e.cli import stayer
from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (
            ("--permission-prompt-tool", "approver"),
            "--permission-prompt-tool approver: give stdio (claude-agent-sdk) or an MCP tool",
        ),
        (("--permission-prompt-tool", "stdio"), "--permission-prompt-tool stdio asks over"),
    ],
)
def test_a_prompt_tool_stayer_cannot_ask_through_is_refused_in_one_line(
    server: FakeModelServer, tmp_path: Path, flags: tuple[str, ...], complaint: str
) -> None:
    done = stayer("-p", "say hi", *flags, cwd=tmp_path, env=server.env())

    assert done.status == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"stayer: {complaint}")
    assert server.requests == []


Asked = list[tuple[str, dict[str, Any]]]


def asking(asked: Asked, *answers: PermissionResult) -> CanUseTool:
    """A `can_use_tool` callback that keeps what it is asked and gives `answers` in turn."""
    given = list(answers)

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        asked.append((name, tool_input))
        assert context.tool_use_id  # the SDK hands on the call's id
        return given.pop(0)

    return can_use_tool


async def prompt(text: str) -> AsyncIterator[dict[str, Any]]:
    """The prompt as a stream (the SDK needs one with `can_use_tool`)."""
    yield {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None}


async def run(
    server: FakeModelServer, cwd: Path, callback: CanUseTool, **given: Any
) -> tuple[list[Message], list[str]]:
    """One `query()` with `callback` answering; its messages and what stayer said on stderr."""
    stderr: list[str] = []
    options = sdk_options(server, cwd, stderr=stderr, can_use_tool=callback, **given)
    messages = [m async for m in query(prompt=prompt("go"), options=options)]
    return messages, stderr


def tool_results(messages: list[Message]) -> list[ToolResultBlock]:
    return [
        block
        for message in messages
        if isinstance(message, UserMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_a_denied_tool_is_what_the_model_reads_and_it_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Understood."))
    asked: Asked = []
    callback = asking(asked, PermissionResultDeny(message="not in this folder"))
    messages, _ = await run(server, tmp_path, callback)

    assert asked == [(BASH, {"command": "touch a"})]
    assert not (tmp_path / "a").exists()
    (denied,) = tool_results(messages)
    assert denied.is_error and "not in this folder" in str(denied.content)
    assert "not in this folder" in json.dumps(server.requests[1].messages[-1])
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert result.result == "Understood."


async def test_the_tool_runs_with_the_input_it_was_allowed_with(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Done."))
    asked: Asked = []
    callback = asking(asked, PermissionResultAllow(updated_input={"command": "touch b"}))
    messages, _ = await run(server, tmp_path, callback)

    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()
    assert [bool(r.is_error) for r in tool_results(messages)] == [False]


async def test_an_allowed_input_the_rules_deny_still_does_not_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / "keep").write_text("precious")
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Oh well."))
    asked: Asked = []
    callback = asking(asked, PermissionResultAllow(updated_input={"command": "rm keep"}))
    messages, _ = await run(server, tmp_path, callback, disallowed_tools=[f"{BASH}(rm:*)"])

    assert (tmp_path / "keep").read_text() == "precious"
    (refused,) = tool_results(messages)
    assert refused.is_error and "checked again and refused" in str(refused.content)


async def test_an_allow_rule_the_answer_adds_means_the_next_call_is_not_asked(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("call_1", BASH, {"command": "touch a"})),
        reply(ToolCall("call_2", BASH, {"command": "touch b"})),
        reply("Both made."),
    )
    rule = PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(BASH, "touch:*")],
        behavior="allow",
        destination="session",
    )
    asked: Asked = []
    callback = asking(asked, PermissionResultAllow(updated_permissions=[rule]))
    messages, stderr = await run(server, tmp_path, callback)

    assert asked == [(BASH, {"command": "touch a"})]  # asked once
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()
    assert [bool(r.is_error) for r in tool_results(messages)] == [False, False]
    assert stderr == []


async def test_a_destination_stayer_cannot_write_is_said_on_stderr(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
    rule = PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(BASH, "touch:*")],
        behavior="allow",
        destination="userSettings",
    )
    callback = asking([], PermissionResultAllow(updated_permissions=[rule]))
    _, stderr = await run(server, tmp_path, callback)

    (line,) = stderr
    assert line.startswith("stayer: allow rule Bash(touch:*) holds for this session only")


async def test_a_denial_that_interrupts_ends_the_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})))
    callback = asking([], PermissionResultDeny(message="stop right there", interrupt=True))
    messages: list[Message] = []
    options = sdk_options(server, tmp_path, can_use_tool=callback)
    with contextlib.suppress(ProcessError):  # an interrupted run's result is an error one
        async for message in query(prompt=prompt("go"), options=options):
            messages.append(message)

    assert not (tmp_path / "a").exists()
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.terminal_reason == "aborted_tools"
    assert result.permission_denials == [
        {"tool_name": BASH, "tool_use_id": "call_1", "tool_input": {"command": "touch a"}}
    ]
    (denied,) = tool_results(messages)
    assert "stop right there" in str(denied.content)
    assert len(server.requests) == 1  # the model was not asked again


APPROVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "approver.py"


def test_an_mcp_tool_answers_the_questions_of_a_headless_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(
            ToolCall("call_1", BASH, {"command": "touch a"}),
            ToolCall("call_2", BASH, {"command": "rm -f keep"}),
            ToolCall("call_3", BASH, {"command": "say garbage"}),
        ),
        reply("Done what I was let do."),
    )
    (tmp_path / "keep").write_text("precious")
    config = {"mcpServers": {"approver": {"command": sys.executable, "args": [str(APPROVER)]}}}
    done = stayer(
        "-p", "go", "--mcp-config", json.dumps(config),
        "--permission-prompt-tool", "mcp__approver__decide",
        cwd=tmp_path, env={**server.env(), "MCP_CONNECTION_NONBLOCKING": "0"},
    )  # fmt: skip

    assert (done.status, done.stdout) == (0, "Done what I was let do.\n"), done.stderr
    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()  # as the tool changed it
    assert (tmp_path / "keep").read_text() == "precious"
    said = json.dumps(server.requests[1].messages[-1])
    assert "no removing (call_2)" in said
    assert "mcp__approver__decide answered 'sure, why not', not a JSON object" in said


async def test_an_interrupt_while_the_callback_decides_withdraws_the_question(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})))
    asked, withdrawn = asyncio.Event(), asyncio.Event()

    async def undecided(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        asked.set()
        try:
            await asyncio.Event().wait()  # a person who never answers
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        raise AssertionError("never answered")

    options = sdk_options(server, tmp_path, can_use_tool=undecided)
    async with ClaudeSDKClient(options) as client:
        await client.query("go")
        await asked.wait()
        await client.interrupt()
        messages = [m async for m in client.receive_response()]
        await asyncio.wait_for(withdrawn.wait(), 30)  # stayer's control_cancel_request

    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.terminal_reason == "aborted_tools"
    assert not (tmp_path / "a").exists()
    assert len(server.requests) == 1
