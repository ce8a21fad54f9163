"""PermissionRequest hooks from a project's settings answering in the person's place, and the
Notification hooks that hear only of questions really put (never of a re-check)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.events import Finished, PermissionRequested, Terminal, ToolCallFinished
from stayer.permissions import Decision
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.names import BASH
from tests.session.hook_kit import Kit, hook, kit, results, run

from .subagent_kit import Router, agent, nested, options


@pytest.fixture
def k(tmp_path: Path) -> Kit:
    return kit(tmp_path)


def decided(decision: dict[str, Any]) -> str:
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    )


def touch(name: str) -> list[Reply]:
    return [tool_call(BASH, {"command": f"touch {name}"}), text("done")]


async def test_a_question_put_is_notified_once_and_its_changed_input_not_again(k: Kit) -> None:
    k.install({"PreToolUse": [hook(k.command("ok"))], "Notification": [hook(k.command("ok"))]})
    asked: list[PermissionRequested] = []

    async def person(request: PermissionRequested) -> Decision:
        asked.append(request)
        return Decision("allow", updated_input={"command": "touch b"})

    await run(k, touch("a"), can_use_tool=person)

    assert len(asked) == 1 and (k.project / "b").exists()
    assert [data["tool_input"] for data in k.of("PreToolUse")] == [{"command": "touch a"}]
    assert len(k.of("Notification")) == 1


async def test_a_hooks_answer_asks_nobody_and_notifies_nobody(k: Kit) -> None:
    allow = decided({"behavior": "allow"})
    k.install(
        {
            "PermissionRequest": [hook(k.command("json", allow), matcher=BASH)],
            "Notification": [hook(k.command("ok"))],
        }
    )
    events, _ = await run(k, touch("a"))  # headless: nobody else would answer

    assert (k.project / "a").exists()
    (request,) = k.of("PermissionRequest")
    assert (request["tool_name"], request["tool_input"]) == (BASH, {"command": "touch a"})
    assert isinstance(request["permission_suggestions"], list)
    assert k.of("Notification") == []
    assert not any(isinstance(event, PermissionRequested) for event in events)


async def test_a_hook_that_blocks_denies_with_its_words(k: Kit) -> None:
    k.install({"PermissionRequest": [hook(k.command("block", "not on Fridays"))]})
    events, _ = await run(k, touch("a"))

    assert not (k.project / "a").exists()
    ((said, error),) = results(events[-1])
    assert error and "not on Fridays" in said


async def test_a_deny_that_interrupts_ends_the_run(k: Kit) -> None:
    deny = decided({"behavior": "deny", "message": "stop everything", "interrupt": True})
    k.install({"PermissionRequest": [hook(k.command("json", deny))]})
    events, _ = await run(k, [tool_call(BASH, {"command": "touch a"})])

    assert not (k.project / "a").exists()
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.terminal is Terminal.ABORTED_TOOLS
    ((said, error),) = results(finished)
    assert error and "stop everything" in said


async def test_a_subagents_changed_input_is_checked_by_its_own_stricter_mode(
    tmp_path: Path,
) -> None:
    hooks = kit(tmp_path)
    allow = decided({"behavior": "allow", "updatedInput": {"command": "touch made"}})
    hooks.install({"PermissionRequest": [hook(hooks.command("json", allow))]})
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "look", "subagent_type": "planner"}), text("ok")]
    )
    # reading outside the project asks even in plan mode; the answer turns it into a write
    planner = ScriptedProvider([tool_call(BASH, {"command": "cat /etc/hostname"}), text("looked")])
    router = Router(lead, PLANNER=planner)
    planning = agent("PLANNER", permissionMode="plan")
    opts = options(hooks.project, router, env=hooks.env, agents={"planner": planning})
    async with stayer.Session(opts) as session:  # the lead bypasses permissions
        events = [event async for event in session.submit("go")]

    assert not (hooks.project / "made").exists()
    (inner,) = [e.event for e in nested(events) if isinstance(e.event, ToolCallFinished)]
    assert inner.status == "denied" and "checked again and refused" in str(inner.result)
    assert len(hooks.of("PermissionRequest")) == 1
