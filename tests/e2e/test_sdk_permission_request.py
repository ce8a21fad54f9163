"""PermissionRequest hooks answering in the person's place (the SDK's callbacks, and a
settings command hook in a headless run), a changed input re-checked against the rules but not
put to the PreToolUse hooks twice, and the gate on switching into bypassPermissions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
)
from claude_agent_sdk.types import PermissionUpdate

from stayer.tools.names import BASH
from tests.e2e.cli import stayer
from tests.e2e.sdk_client import sdk_options
from tests.e2e.test_sdk_permission_prompt import Asked, asking, run, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

Heard = list[dict[str, Any]]


def answering(heard: Heard, decision: object, event: str = "PermissionRequest") -> Any:
    """A hook callback that keeps its input and answers `decision` (None: says nothing)."""

    async def hook(data: HookInput, tool_use_id: str | None, _: HookContext) -> HookJSONOutput:
        heard.append(dict(data))
        if decision is None:
            return {}
        output: Any = {"hookEventName": event, "decision": decision}  # garbage too, at times
        return {"hookSpecificOutput": output}

    return hook


def request_hook(heard: Heard, decision: object) -> dict[str, Any]:
    return {"PermissionRequest": [HookMatcher(hooks=[answering(heard, decision)])]}


async def test_a_hooks_allow_answers_instead_of_the_sdk_callback(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
    heard: Heard = []
    asked: Asked = []
    allow = {"behavior": "allow", "updatedInput": {"command": "touch b"}}
    messages, stderr = await run(server, tmp_path, asking(asked), hooks=request_hook(heard, allow))

    assert asked == []  # nobody was asked: the hook answered
    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()
    ((event, tool, given),) = [
        (h["hook_event_name"], h["tool_name"], h["tool_input"]) for h in heard
    ]
    assert (event, tool, given) == ("PermissionRequest", BASH, {"command": "touch a"})
    assert [bool(r.is_error) for r in tool_results(messages)] == [False]
    assert not any("never fires" in line for line in stderr)


async def test_a_hooks_deny_is_what_the_model_reads(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Fine."))
    asked: Asked = []
    deny = {"behavior": "deny", "message": "no files today"}
    messages, _ = await run(server, tmp_path, asking(asked), hooks=request_hook([], deny))

    assert asked == [] and not (tmp_path / "a").exists()
    (denied,) = tool_results(messages)
    assert denied.is_error and "no files today" in str(denied.content)


async def test_no_decision_puts_the_question_to_the_sdk_as_before(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
    asked: Asked = []
    heard: Heard = []
    callback = asking(asked, PermissionResultAllow())
    await run(server, tmp_path, callback, hooks=request_hook(heard, None))

    assert len(heard) == 1
    assert asked == [(BASH, {"command": "touch a"})]
    assert (tmp_path / "a").exists()


@pytest.mark.parametrize(
    "garbage",
    [
        "allow",
        {"behavior": "maybe"},
        {"behavior": "allow", "updatedInput": "touch b"},
        {"behavior": "deny", "interrupt": "yes"},
    ],
)
async def test_a_decision_stayer_cannot_read_refuses_the_call(
    server: FakeModelServer, tmp_path: Path, garbage: object
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Oh."))
    asked: Asked = []
    messages, _ = await run(server, tmp_path, asking(asked), hooks=request_hook([], garbage))

    assert asked == [] and not (tmp_path / "a").exists()
    (refused,) = tool_results(messages)
    assert refused.is_error and "could not be read" in str(refused.content)


async def test_a_hooks_allowed_input_the_rules_deny_does_not_run(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / "keep").write_text("precious")
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Oh well."))
    allow = {"behavior": "allow", "updatedInput": {"command": "rm keep"}}
    messages, _ = await run(
        server,
        tmp_path,
        asking([]),
        hooks=request_hook([], allow),
        disallowed_tools=[f"{BASH}(rm:*)"],
    )

    assert (tmp_path / "keep").read_text() == "precious"
    (refused,) = tool_results(messages)
    assert refused.is_error and "checked again and refused" in str(refused.content)


async def test_a_changed_input_is_not_put_to_the_pre_tool_use_hooks_twice(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
    heard: Heard = []
    pre = {"PreToolUse": [HookMatcher(hooks=[answering(heard, None, "PreToolUse")])]}
    callback = asking([], PermissionResultAllow(updated_input={"command": "touch b"}))
    await run(server, tmp_path, callback, hooks=pre)

    assert (tmp_path / "b").exists()
    assert [h["tool_input"] for h in heard] == [{"command": "touch a"}]


def test_a_settings_command_hook_answers_a_headless_runs_question(
    server: FakeModelServer, tmp_path: Path
) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                     "decision": {"behavior": "allow"}}}  # fmt: skip
    command = f"cat > /dev/null; echo '{json.dumps(answer)}'"
    settings = {"hooks": {"PermissionRequest": [{"hooks": [{"type": "command",
                                                            "command": command}]}]}}  # fmt: skip
    server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
    done = stayer("-p", "go", "--settings", json.dumps(settings), cwd=tmp_path, env=server.env())

    assert done.status == 0, done.stderr
    assert (tmp_path / "a").exists()


BYPASS_REFUSED = "bypassPermissions can only be switched to in a session started in it"


async def test_switching_into_bypass_is_refused_unless_allowed(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async with ClaudeSDKClient(sdk_options(server, tmp_path)) as client:
        with pytest.raises(Exception, match=BYPASS_REFUSED):
            await client.set_permission_mode("bypassPermissions")
        server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("No."))
        await client.query("go")
        messages = [m async for m in client.receive_response()]

    assert not (tmp_path / "a").exists()  # still asked, and nobody answers: denied
    assert isinstance(messages[-1], ResultMessage)


async def test_allow_dangerously_skip_permissions_makes_the_switch_possible(
    server: FakeModelServer, tmp_path: Path
) -> None:
    flag = {"allow-dangerously-skip-permissions": None}
    async with ClaudeSDKClient(sdk_options(server, tmp_path, extra_args=flag)) as client:
        await client.set_permission_mode("bypassPermissions")
        server.enqueue(reply(ToolCall("call_1", BASH, {"command": "touch a"})), reply("Made."))
        await client.query("go")
        [m async for m in client.receive_response()]

    assert (tmp_path / "a").exists()


async def test_a_set_mode_into_bypass_from_an_answer_is_refused_in_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("call_1", BASH, {"command": "touch a"})),
        reply(ToolCall("call_2", BASH, {"command": "touch b"})),
        reply("Done."),
    )
    bypass = PermissionUpdate(type="setMode", mode="bypassPermissions", destination="session")
    asked: Asked = []
    callback = asking(
        asked, PermissionResultAllow(updated_permissions=[bypass]), PermissionResultAllow()
    )
    _, stderr = await run(server, tmp_path, callback)

    assert len(asked) == 2  # the second call was asked too: the mode did not change
    assert any(BYPASS_REFUSED in line for line in stderr)
