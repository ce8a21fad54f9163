"""The SDK's permission prompt as the session's decider: what it asks over the control channel,
and what each answer does to the call, the session's rules and the run (a real Driver and
Session on the scripted model; the SDK's side is a channel whose writes are answered here)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk.types import PermissionUpdate
from msgspec.structs import replace

from stayer.driver import Close, Driver, Submit
from stayer.events import Event, Finished, ToolCallFinished
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.tools.names import BASH, WRITE
from stayer.ui.sdk.control import ControlChannel, Frame
from stayer.ui.sdk.permission_prompt import PermissionPrompt
from stayer.ui.sdk.prompt_tool import tool_asker

CLOSE = "close"
"""A reply that closes the channel instead of answering (standard input ended)."""


class Sdk:
    """The SDK's end of the control channel: every `can_use_tool` request it is sent is kept,
    and answered, as stdin would bring the answer, with the next of `replies` (a mapping: a
    success; a string: an error reply; `CLOSE`: the channel closes)."""

    def __init__(self, *replies: Mapping[str, Any] | str) -> None:
        self.replies = list(replies)
        self.asked: list[Mapping[str, Any]] = []
        self.frames: list[Frame] = []
        self.channel = ControlChannel(self._write)
        self.warnings: list[str] = []
        self.prompt = PermissionPrompt.over(self.channel, warn=self.warnings.append)

    def _write(self, frame: Frame) -> None:
        self.frames.append(frame)
        if frame["type"] != "control_request":
            return
        self.asked.append(frame["request"])
        reply = self.replies.pop(0)
        loop = asyncio.get_running_loop()
        if reply == CLOSE:
            loop.call_soon(self.channel.close, "standard input ended")
            return
        body: dict[str, Any] = {"request_id": frame["request_id"]}
        if isinstance(reply, str):
            body |= {"subtype": "error", "error": reply}
        else:
            body |= {"subtype": "success", "response": dict(reply)}
        loop.call_soon(self.channel.dispatch, {"type": "control_response", "response": body})


async def _sink(events: list[Event], event: Event) -> None:
    events.append(event)


async def session_run(
    tmp_path: Path, sdk: Sdk, model: ScriptedProvider, *prompts: str, **more: Any
) -> tuple[list[Event], Driver]:
    """Run `prompts` through a session that asks `sdk`, to the end; its events and driver."""
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    options = QueryOptions(cwd=tmp_path, provider=model, env=env, persist_session=False, **more)
    options = replace(options, can_use_tool=sdk.prompt)
    events: list[Event] = []
    driver = await Driver.open(options, lambda event: _sink(events, event))
    sdk.prompt.bind(driver)
    for prompt in prompts:
        driver.send(Submit(prompt))
    driver.send(Close())
    await driver.run()
    return events, driver


def results(events: list[Event]) -> list[tuple[str, str]]:
    """Each finished call's status and result text."""
    return [(e.status, e.result.text) for e in events if isinstance(e, ToolCallFinished)]


def allowed(driver: Driver) -> list[tuple[str, str]]:
    """The allow rules in force, with their origins, but the built-in ones."""
    rules = driver.session.rules().allow
    return [(entry.rule, entry.origin) for entry in rules if entry.origin != "built-in"]


def bash(command: str, id: str = "toolu_1") -> Any:
    return tool_call(BASH, {"command": command}, id=id)


async def test_the_request_carries_the_call_as_the_sdk_reads_it(tmp_path: Path) -> None:
    sdk = Sdk({"behavior": "allow", "updatedInput": {"command": "touch a"}})
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    (asked,) = sdk.asked
    assert asked["subtype"] == "can_use_tool"
    assert (asked["tool_name"], asked["input"], asked["tool_use_id"]) == (
        BASH,
        {"command": "touch a"},
        "toolu_1",
    )
    assert asked["blocked_path"] is None and asked["decision_reason"]
    # the SDK turns each suggestion into a PermissionUpdate, and can send it back as it is
    (suggested,) = [PermissionUpdate.from_dict(s) for s in asked["permission_suggestions"]]
    assert suggested.type == "addRules" and suggested.behavior == "allow"
    assert suggested.to_dict()["rules"][0]["toolName"] == BASH
    assert (tmp_path / "a").exists()
    assert results(events) == [("completed", "(Bash completed with no output)")]
    model.assert_done()


async def test_a_denial_is_what_the_model_reads_and_the_run_goes_on(tmp_path: Path) -> None:
    sdk = Sdk({"behavior": "deny", "message": "not in this folder"})
    model = ScriptedProvider([bash("touch a"), text("understood")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    ((status, said),) = results(events)
    assert status == "denied" and "not in this folder" in said
    assert not (tmp_path / "a").exists()
    assert "not in this folder" in json.dumps(str(model.requests[1].messages[-1]))
    assert [e.terminal.value for e in events if isinstance(e, Finished)] == ["completed"]
    model.assert_done()


async def test_the_call_runs_with_the_input_it_was_approved_with(tmp_path: Path) -> None:
    sdk = Sdk({"behavior": "allow", "updatedInput": {"command": "touch b"}})
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()
    assert results(events)[0][0] == "completed"


async def test_an_approved_input_the_rules_deny_does_not_run(tmp_path: Path) -> None:
    sdk = Sdk(
        {
            "behavior": "allow",
            "updatedInput": {"command": "rm -f keep"},
            "updatedPermissions": [
                {"type": "addRules", "rules": [{"toolName": BASH}], "behavior": "allow"}
            ],
        }
    )
    (tmp_path / "keep").write_text("precious")
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, driver = await session_run(
        tmp_path, sdk, model, "go", disallowed_tools=[f"{BASH}(rm:*)"]
    )

    ((status, said),) = results(events)
    assert status == "denied" and "checked again and refused" in said
    assert (tmp_path / "keep").read_text() == "precious" and not (tmp_path / "a").exists()
    # the rule the answer added holds, and the deny rule still wins over it
    assert allowed(driver) == [(BASH, "session")]


@pytest.mark.parametrize(
    ("tool", "asked", "approved", "deny"),
    [
        (BASH, {"command": "touch a"}, {"command": "touch a && rm -f keep"}, f"{BASH}(rm:*)"),
        (BASH, {"command": "touch a"}, {"command": "echo $(rm -f keep)"}, f"{BASH}(rm:*)"),
        (
            WRITE,
            {"file_path": "a", "content": "x"},
            {"file_path": "keep", "content": "overwritten"},
            f"{WRITE}(./keep)",
        ),
    ],
)
async def test_an_approval_cannot_smuggle_in_what_a_deny_rule_names(
    tmp_path: Path, tool: str, asked: dict[str, Any], approved: dict[str, Any], deny: str
) -> None:
    (tmp_path / "keep").write_text("precious")
    sdk = Sdk({"behavior": "allow", "updatedInput": approved})
    model = ScriptedProvider([tool_call(tool, asked, id="toolu_1"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go", disallowed_tools=[deny])

    ((status, said),) = results(events)
    assert status == "denied" and "checked again and refused" in said
    assert (tmp_path / "keep").read_text() == "precious" and not (tmp_path / "a").exists()


async def test_an_approved_input_is_not_put_to_the_pre_tool_hooks_again(tmp_path: Path) -> None:
    heard = tmp_path / "heard"
    guard = f"cat >> {heard}; echo >> {heard}"
    settings = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": guard}]}]}}
    sdk = Sdk({"behavior": "allow", "updatedInput": {"command": "touch b"}})
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go", settings=settings)

    ((ran, _),) = results(events)
    assert ran == "completed" and (tmp_path / "b").exists()
    lines = [line for line in heard.read_text().splitlines() if line]
    inputs = [json.loads(line)["tool_input"] for line in lines]
    assert inputs == [{"command": "touch a"}]  # once, for the call the model made


async def test_an_approved_input_that_breaks_the_schema_does_not_run(tmp_path: Path) -> None:
    sdk = Sdk({"behavior": "allow", "updatedInput": {"command": 7, "sneaky": True}})
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    ((status, said),) = results(events)
    assert status == "failed" and said.startswith("InputValidationError")
    assert not (tmp_path / "a").exists()


async def test_an_allow_rule_added_for_the_session_stops_the_asking(tmp_path: Path) -> None:
    rule = {"toolName": BASH, "ruleContent": "touch:*"}
    update = {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}
    sdk = Sdk({"behavior": "allow", "updatedPermissions": [update]})
    model = ScriptedProvider([bash("touch a"), bash("touch b", "toolu_2"), text("done")])
    events, driver = await session_run(tmp_path, sdk, model, "go")

    assert len(sdk.asked) == 1  # the second call was not asked about
    assert [status for status, _ in results(events)] == ["completed", "completed"]
    assert allowed(driver) == [(f"{BASH}(touch:*)", "session")]
    assert sdk.warnings == []


async def test_the_suggestions_handed_back_are_saved_to_the_local_settings(tmp_path: Path) -> None:
    sdk = Sdk({})  # answered below, with the suggestions the request carried

    async def back(fields: Mapping[str, Any], driver: Driver) -> Mapping[str, Any]:
        sdk.asked.append(fields)
        return {"behavior": "allow", "updatedPermissions": fields["permission_suggestions"]}

    sdk.prompt = PermissionPrompt(back, warn=sdk.warnings.append)
    model = ScriptedProvider([bash("touch a"), text("done")])
    await session_run(tmp_path, sdk, model, "go")

    saved = json.loads((tmp_path / ".stayer" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == [f"{BASH}(touch a)"]


async def test_what_stayer_cannot_write_or_change_is_reported(tmp_path: Path) -> None:
    rule = {"toolName": BASH, "ruleContent": "touch:*"}
    updates = [
        {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "userSettings"},
        {"type": "addDirectories", "directories": ["/"], "destination": "session"},
        {"type": "removeRules", "rules": [{"toolName": BASH, "ruleContent": "rm:*"}],
         "behavior": "deny", "destination": "session"},
        {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "cloud"},
        {"type": "grantEverything"},
    ]  # fmt: skip
    sdk = Sdk({"behavior": "allow", "updatedPermissions": updates})
    model = ScriptedProvider([bash("touch a"), text("done")])
    _, driver = await session_run(tmp_path, sdk, model, "go", disallowed_tools=[f"{BASH}(rm:*)"])

    assert len(sdk.warnings) == 5
    held, directories, deny, destination, kind = sdk.warnings
    assert "this session only" in held and "userSettings" in held
    assert "addDirectories" in directories and "--add-dir" in directories
    assert "not removed" in deny and "deny from flag" in deny
    assert "unknown destination 'cloud'" in destination
    assert "unknown update type 'grantEverything'" in kind
    assert allowed(driver) == [(f"{BASH}(touch:*)", "session")]  # for the session
    assert [e.rule for e in driver.session.rules().deny] == [f"{BASH}(rm:*)"]  # it stays


async def test_rules_the_session_added_can_be_replaced_and_removed(tmp_path: Path) -> None:
    def rules(*contents: str) -> list[dict[str, str]]:
        return [{"toolName": BASH, "ruleContent": content} for content in contents]

    add = {"type": "addRules", "rules": rules("touch:*", "ls:*"), "behavior": "allow"}
    replacing = {"type": "replaceRules", "rules": rules("mkdir:*"), "behavior": "allow"}
    remove = {"type": "removeRules", "rules": rules("mkdir:*"), "behavior": "allow"}
    sdk = Sdk(
        {"behavior": "allow", "updatedPermissions": [add]},
        {"behavior": "allow", "updatedPermissions": [replacing]},
        {"behavior": "allow", "updatedPermissions": [remove]},
    )
    model = ScriptedProvider(
        [bash("cp x y"), bash("cp x z", "toolu_2"), bash("cp x w", "toolu_3"), text("done")]
    )
    _, driver = await session_run(tmp_path, sdk, model, "go")

    assert len(sdk.asked) == 3 and sdk.warnings == []
    assert allowed(driver) == []


async def test_a_mode_the_answer_sets_holds_for_the_calls_after(tmp_path: Path) -> None:
    update = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    sdk = Sdk({"behavior": "allow", "updatedPermissions": [update]})
    model = ScriptedProvider([bash("touch a"), text("done")])
    _, driver = await session_run(tmp_path, sdk, model, "go")

    assert driver.session.permission_mode == "acceptEdits"


async def test_a_denial_that_interrupts_ends_the_run(tmp_path: Path) -> None:
    sdk = Sdk({"behavior": "deny", "message": "stop everything", "interrupt": True})
    model = ScriptedProvider([bash("touch a"), text("never said")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    ((status, said),) = results(events)
    assert status == "denied" and "stop everything" in said
    (finished,) = [e for e in events if isinstance(e, Finished)]
    assert finished.terminal.value.startswith("aborted")
    assert model.remaining == 1  # the model was not asked again


async def test_anything_but_a_clear_answer_denies_the_call(tmp_path: Path) -> None:
    sdk = Sdk(
        "canUseTool callback is not provided",
        {"behavior": "maybe"},
        {"behavior": "allow", "updatedInput": "touch a"},
        CLOSE,
    )
    calls = [bash("touch a", f"toolu_{n}") for n in range(4)]
    model = ScriptedProvider([*calls, text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    found = results(events)
    assert [status for status, _ in found] == ["denied"] * 4
    provided, maybe, updated, closed = (said for _, said in found)
    assert "canUseTool callback is not provided" in provided
    assert "'maybe', not allow or deny" in maybe
    assert "updatedInput is 'touch a', not an object" in updated
    assert "standard input ended" in closed
    assert not (tmp_path / "a").exists()


async def test_a_prompt_not_bound_to_a_session_denies(tmp_path: Path) -> None:
    sdk = Sdk()
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    model = ScriptedProvider([bash("touch a"), text("done")])
    options = QueryOptions(
        cwd=tmp_path, provider=model, env=env, persist_session=False, can_use_tool=sdk.prompt
    )
    events: list[Event] = []
    driver = await Driver.open(options, lambda event: _sink(events, event))
    driver.send(Submit("go"))
    driver.send(Close())
    await driver.run()

    ((status, said),) = results(events)
    assert status == "denied" and "not connected to a session" in said
    assert sdk.asked == []


async def test_a_rule_saved_to_the_local_settings_can_be_removed_from_them(tmp_path: Path) -> None:
    rules = [{"toolName": BASH, "ruleContent": "cp:*"}]
    saved = {"rules": rules, "behavior": "allow", "destination": "localSettings"}
    sdk = Sdk(
        {"behavior": "allow", "updatedPermissions": [{"type": "addRules", **saved}]},
        {"behavior": "allow", "updatedPermissions": [{"type": "removeRules", **saved}]},
    )
    model = ScriptedProvider([bash("cp x y"), bash("mv x z", "toolu_2"), text("done")])
    _, driver = await session_run(tmp_path, sdk, model, "go")

    assert len(sdk.asked) == 2 and sdk.warnings == []
    assert allowed(driver) == []
    kept = json.loads((tmp_path / ".stayer" / "settings.local.json").read_text())
    assert kept["permissions"]["allow"] == []


async def test_a_prompt_tool_the_session_does_not_have_denies(tmp_path: Path) -> None:
    sdk = Sdk()
    sdk.prompt = PermissionPrompt(tool_asker("mcp__gone__decide"), warn=sdk.warnings.append)
    model = ScriptedProvider([bash("touch a"), text("done")])
    events, _ = await session_run(tmp_path, sdk, model, "go")

    ((status, said),) = results(events)
    assert status == "denied" and "mcp__gone__decide is not among the session's tools" in said
    assert not (tmp_path / "a").exists()
