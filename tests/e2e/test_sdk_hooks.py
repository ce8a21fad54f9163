"""claude-agent-sdk's hooks (`ClaudeAgentOptions(hooks=...)`) driving stayer end to end, against
the fake model server: the SDK registers its callbacks at `initialize`, stayer asks for each
with `hook_callback` as the event fires, and applies the answer as a settings hook's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    query,
)

from tests.e2e.sdk_client import sdk_options
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


def sent_texts(request_messages: list[dict[str, Any]]) -> str:
    """Everything the model was sent in a request's messages, as one text (to search)."""
    return json.dumps(request_messages)


async def test_a_blocking_pre_tool_use_callback_keeps_the_tool_from_running(
    server: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def guard(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        seen.append((dict(data), tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no files are made here today",
            }
        }

    server.enqueue(
        reply(ToolCall("call_1", "Bash", {"command": f"touch {marker}"})), reply("Understood.")
    )
    options = sdk_options(
        server,
        tmp_path,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )
    messages = [m async for m in query(prompt="make the file", options=options)]

    assert not marker.exists()
    ((given, tool_use_id),) = seen
    assert (given["hook_event_name"], given["tool_name"], tool_use_id) == (
        "PreToolUse",
        "Bash",
        "call_1",
    )
    assert given["tool_input"] == {"command": f"touch {marker}"}
    (result_block,) = [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]
    assert result_block.is_error
    assert "no files are made here today" in str(result_block.content)
    assert "no files are made here today" in sent_texts(server.requests[1].messages)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Understood."


async def test_a_post_tool_use_callback_sees_the_tools_output(
    server: FakeModelServer, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    async def watch(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        seen.append(dict(data))
        return {}

    server.enqueue(reply(ToolCall("call_1", "Bash", {"command": "echo watched"})), reply("Done."))
    options = sdk_options(
        server,
        tmp_path,
        permission_mode="bypassPermissions",
        hooks={"PostToolUse": [HookMatcher(hooks=[watch])]},
    )
    messages = [m async for m in query(prompt="run it", options=options)]

    ((given),) = seen
    assert (given["hook_event_name"], given["tool_use_id"]) == ("PostToolUse", "call_1")
    assert given["tool_response"]["stdout"] == "watched\n"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error


async def test_a_user_prompt_submit_callback_adds_context_the_model_reads(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async def remind(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        assert data["hook_event_name"] == "UserPromptSubmit" and tool_use_id is None
        return {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": f"The prompt was {data['prompt']!r}; the sprint ends Friday.",
            }
        }

    server.enqueue(reply("Noted."))
    options = sdk_options(
        server, tmp_path, hooks={"UserPromptSubmit": [HookMatcher(hooks=[remind])]}
    )
    messages = [m async for m in query(prompt="plan the week", options=options)]

    assert "The prompt was 'plan the week'; the sprint ends Friday." in sent_texts(
        server.requests[0].messages
    )
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Noted."


async def test_a_stop_callback_sends_the_model_back_and_a_raising_one_blocks_nothing(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async def not_yet(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        if data.get("stop_hook_active"):
            return {}
        return {"decision": "block", "reason": "say that the tests passed"}

    async def broken(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        raise RuntimeError("the checker is down")

    server.enqueue(reply("Done."), reply("Done, and the tests passed."))
    options = sdk_options(
        server,
        tmp_path,
        hooks={"Stop": [HookMatcher(hooks=[not_yet]), HookMatcher(hooks=[broken])]},
    )
    messages = [m async for m in query(prompt="finish", options=options)]

    assert len(server.requests) == 2
    assert "say that the tests passed" in sent_texts(server.requests[1].messages)
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.is_error, result.result) == (False, "Done, and the tests passed.")
    failed = [m.data for m in messages if isinstance(m, SystemMessage)]
    failed = [data for data in failed if data["subtype"] == "hook_failed"]
    assert [(f["hook_event"], f["command"], f["reason"], f["error"]) for f in failed] == [
        ("Stop", "SDK callback hook_1", "exit_status", "failed: the checker is down")
    ] * 2  # once as the model would stop, once again after it went back


async def test_a_hook_for_an_event_stayer_never_fires_is_named_on_stderr(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async def never(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        raise AssertionError("stayer does not fire PostCompact")

    server.enqueue(reply("Hi."))
    stderr: list[str] = []
    # an event of a later Claude Code, which this SDK's types do not name yet
    hooks: Any = {"PostCompact": [HookMatcher(hooks=[never])]}
    options = sdk_options(server, tmp_path, stderr=stderr, hooks=hooks)
    messages = [m async for m in query(prompt="hi", options=options)]

    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert (
        "stayer: the SDK registered hooks for PostCompact, which stayer never fires; "
        "they will not run"
    ) in stderr


async def test_a_failing_callback_whose_matcher_blocks_on_failure_keeps_the_tool_from_running(
    server: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"

    async def broken(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        raise RuntimeError("the policy service is down")

    server.enqueue(reply(ToolCall("call_1", "Bash", {"command": f"touch {marker}"})), reply("Ok."))
    options = sdk_options(
        server,
        tmp_path,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(hooks=[broken], on_failure="block")]},
    )
    messages = [m async for m in query(prompt="make the file", options=options)]

    assert not marker.exists()
    assert "the policy service is down" in sent_texts(server.requests[1].messages)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Ok."
