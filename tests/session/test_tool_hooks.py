"""PreToolUse, PostToolUse, PostToolUseFailure and Notification hooks from a project's
`.claude/settings.json`, run as real processes around real tools (the scripted model): what
each gets on stdin, what each exit status and JSON reply does, and hooks that misbehave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inline_snapshot import snapshot

import stayer
from stayer.events import (
    Event,
    Finished,
    HookRan,
    PermissionRequested,
    SessionStarted,
    Terminal,
)
from stayer.permissions import Decision
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from tests.event_form import stream
from tests.session.hook_kit import Kit, hook, kit, results, run


@pytest.fixture
def k(tmp_path: Path) -> Kit:
    return kit(tmp_path)


def bash(command: str) -> list[Reply]:
    return [tool_call("Bash", {"command": command}, id="toolu_0"), text("done")]


def ran(events: list[Event]) -> list[tuple[str, str, int | None, str]]:
    return [
        (e.hook_name, e.outcome, e.exit_code, e.message) for e in events if isinstance(e, HookRan)
    ]


async def test_pre_and_post_tool_use_get_the_call_as_json_on_stdin(k: Kit) -> None:
    k.install({"PreToolUse": [hook(k.command("ok"))], "PostToolUse": [hook(k.command("ok"))]})
    events, _ = await run(k, bash("echo hi"), permission_mode="bypassPermissions")

    started = events[0]
    assert isinstance(started, SessionStarted)
    common = {
        "session_id": started.session_id,
        "transcript_path": "",
        "cwd": str(k.project.resolve()),
        "permission_mode": "bypassPermissions",
    }
    call = {"tool_name": "Bash", "tool_input": {"command": "echo hi"}, "tool_use_id": "toolu_0"}
    response = {"stdout": "hi\n", "stderr": "", "exit_code": 0, "interrupted": False}
    assert k.inputs() == [
        {**common, "hook_event_name": "PreToolUse", **call},
        {**common, "hook_event_name": "PostToolUse", **call, "tool_response": response},
    ]
    # Each hook is shown before the call's result.
    assert stream(events, {k.project.parent: "<tmp>"}) == snapshot(
        [
            {
                "type": "session_started",
                "model": "scripted",
                "provider": "scripted",
                "cwd": "<tmp>/project",
                "permission_mode": "bypassPermissions",
                "context_window": 32768,
                "max_output_tokens": 8192,
                "settings_files": ["<tmp>/project/.claude/settings.json"],
            },
            {"type": "request_started", "turn": 1},
            {
                "type": "tool_call_started",
                "tool_use_id": "toolu_0",
                "name": "Bash",
                "input": {"command": "echo hi"},
            },
            {
                "type": "hook_ran",
                "hook_event": "PreToolUse",
                "hook_name": "PreToolUse:Bash",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log ok",
                "exit_code": 0,
                "outcome": "success",
            },
            {"type": "tool_call_progress", "tool_use_id": "toolu_0", "text": "hi\n"},
            {
                "type": "hook_ran",
                "hook_event": "PostToolUse",
                "hook_name": "PostToolUse:Bash",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log ok",
                "exit_code": 0,
                "outcome": "success",
            },
            {
                "type": "tool_call_finished",
                "tool_use_id": "toolu_0",
                "name": "Bash",
                "status": "completed",
                "result": {
                    "tool_use_id": "toolu_0",
                    "content": [{"text": "hi", "type": "text"}],
                    "is_error": False,
                    "type": "tool_result",
                },
                "data": {"stdout": "hi\n", "stderr": "", "exit_code": 0, "interrupted": False},
            },
            {
                "type": "tool_results_appended",
                "message": {
                    "content": [
                        {
                            "tool_use_id": "toolu_0",
                            "content": [{"text": "hi", "type": "text"}],
                            "is_error": False,
                            "type": "tool_result",
                        }
                    ],
                    "role": "user",
                },
                "data": [{"stdout": "hi\n", "stderr": "", "exit_code": 0, "interrupted": False}],
            },
            {"type": "continuing", "reason": "next_turn"},
            {"type": "request_started", "turn": 2},
            {
                "type": "finished",
                "terminal": "completed",
                "message": "done",
                "num_turns": 2,
                "usage": {
                    "input_tokens": 200,
                    "output_tokens": 40,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
                "cost_usd": 0.0,
                "result_text": "done",
                "stop_reason": "end_turn",
                "model_usage": [
                    {
                        "model": "scripted",
                        "usage": {
                            "input_tokens": 200,
                            "output_tokens": 40,
                            "cache_read_input_tokens": 0,
                            "cache_creation_input_tokens": 0,
                        },
                        "cost_usd": 0.0,
                        "context_window": 32768,
                        "max_output_tokens": 8192,
                    }
                ],
            },
        ]
    )


async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(k: Kit) -> None:
    marker = k.project / "ran"
    k.install({"PreToolUse": [hook(k.command("block", "no touching today"), "Bash")]})
    events, _ = await run(k, bash(f"touch {marker}"), permission_mode="bypassPermissions")

    command = k.command("block", "no touching today")
    assert results(events[-1]) == [
        (f"PreToolUse:Bash hook error: [{command}]: no touching today", True)
    ]
    assert not marker.exists()
    assert ran(events) == [("PreToolUse:Bash", "blocked", 2, "no touching today")]


@pytest.mark.parametrize(
    ("mode", "outcome", "said"),
    [
        ("fail", "error", "just a warning"),
        ("crash", "error", "RuntimeError: the hook broke"),
        ("garbage", "error", "its output looks like JSON but is not"),
        ("print", "success", ""),
    ],
)
async def test_a_hook_that_fails_or_prints_garbage_blocks_nothing(
    k: Kit, mode: str, outcome: str, said: str
) -> None:
    marker = k.project / "ran"
    k.install({"PreToolUse": [hook(k.command(mode, "just a warning"))]})
    events, _ = await run(k, bash(f"touch {marker}"), permission_mode="bypassPermissions")

    assert marker.exists()
    assert isinstance(events[-1], Finished) and events[-1].terminal is Terminal.COMPLETED
    ((name, got, _, message),) = ran(events)
    assert (name, got, said in message) == ("PreToolUse:Bash", outcome, True)


async def test_a_hook_that_hangs_is_stopped_at_its_timeout_and_the_call_goes_on(k: Kit) -> None:
    marker, hung = k.project / "ran", k.project / "hook-started"
    k.install({"PreToolUse": [hook(f"touch {hung}; exec sleep 60", timeout=1)]})
    events, _ = await run(k, bash(f"touch {marker}"), permission_mode="bypassPermissions")

    assert hung.exists() and marker.exists()
    ((name, outcome, _, message),) = ran(events)  # its exit status: the signal's
    assert (name, outcome, message) == (
        "PreToolUse:Bash",
        "timeout",
        "did not finish within 1 s and was stopped",
    )


async def test_the_hooks_of_an_event_run_side_by_side(k: Kit) -> None:
    a, b = k.project / "a", k.project / "b"
    k.install(
        {
            "PreToolUse": [
                hook(k.command("meet", f"{a},{b}"), timeout=20),
                hook(k.command("meet", f"{b},{a}"), "Bash", timeout=20),
            ]
        }
    )
    events, _ = await run(k, bash("true"), permission_mode="bypassPermissions")
    # each waits for the other to start: run one after the other, the first would fail
    assert [outcome for _, outcome, _, _ in ran(events)] == ["success", "success"]


async def test_a_deny_from_a_hook_denies_with_its_reason(k: Kit) -> None:
    said = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "Use the make target instead."}}  # fmt: skip
    k.install({"PreToolUse": [hook(k.command("json", json.dumps(said)))]})
    events, _ = await run(k, bash("true"), permission_mode="bypassPermissions")
    assert results(events[-1]) == [("Use the make target instead.", True)]


async def test_an_allow_from_a_hook_answers_what_the_mode_would_ask(k: Kit) -> None:
    said = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    k.install({"PreToolUse": [hook(k.command("json", json.dumps(said)), "Write")]})
    target = k.project / "new.txt"
    steps = [tool_call("Write", {"file_path": str(target), "content": "x"}), text("done")]
    events, _ = await run(k, steps)  # default mode: nobody to approve a write
    assert target.read_text() == "x"
    assert [error for _, error in results(events[-1])] == [False]


async def test_an_allow_from_a_hook_does_not_beat_a_deny_rule(k: Kit) -> None:
    said = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    k.install(
        {"PreToolUse": [hook(k.command("json", json.dumps(said)))]},
        permissions={"deny": ["Write(./new.txt)"]},
    )
    target = k.project / "new.txt"
    steps = [tool_call("Write", {"file_path": str(target), "content": "x"}), text("done")]
    events, _ = await run(k, steps, permission_mode="bypassPermissions")
    assert not target.exists()
    ((said_back, error),) = results(events[-1])
    assert error and "denied by a deny rule" in said_back


async def test_ask_leaves_the_call_to_the_rules_and_notification_hears_the_denial(k: Kit) -> None:
    said = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    k.install(
        {
            "PreToolUse": [hook(k.command("json", json.dumps(said)))],
            "Notification": [hook(k.command("ok"))],
        }
    )
    target = k.project / "new.txt"
    steps = [tool_call("Write", {"file_path": str(target), "content": "x"}), text("done")]
    events, _ = await run(k, steps)

    assert not target.exists()
    ((denial, error),) = results(events[-1])
    assert error and "nobody is here to approve it" in denial
    (notification,) = k.of("Notification")
    assert (notification["notification_type"], notification["message"]) == (
        "permission_prompt",
        denial,
    )


async def test_a_hooks_ask_puts_a_call_the_rules_allow_to_a_person(k: Kit) -> None:
    said = {
        "hookSpecificOutput": {
            "permissionDecision": "ask",
            "permissionDecisionReason": "check this one first",
        }
    }
    k.install({"PreToolUse": [hook(k.command("json", json.dumps(said)))]})
    target = k.project / "new.txt"
    steps = [tool_call("Write", {"file_path": str(target), "content": "x"}), text("done")]
    events, _ = await run(k, steps, permission_mode="bypassPermissions")

    assert not target.exists()  # headless: nobody answers, so it is denied in the hook's words
    ((denial, error),) = results(events[-1])
    assert error and denial == "check this one first"


async def test_updated_input_runs_the_call_with_it(k: Kit) -> None:
    said = {"hookSpecificOutput": {"updatedInput": {"command": "echo rewritten"}}}
    k.install({"PreToolUse": [hook(k.command("json", json.dumps(said)))]})
    events, _ = await run(k, bash("echo original"), permission_mode="bypassPermissions")
    assert results(events[-1]) == [("rewritten", False)]


async def test_updated_input_the_tool_refuses_denies_the_call(k: Kit) -> None:
    said = {"hookSpecificOutput": {"updatedInput": {"command": 5}}}
    k.install({"PreToolUse": [hook(k.command("json", json.dumps(said)))]})
    events, _ = await run(k, bash("echo original"), permission_mode="bypassPermissions")
    ((denial, error),) = results(events[-1])
    assert error and denial.startswith("A PreToolUse hook rewrote the input into one that is not")


async def test_a_post_tool_use_block_and_context_are_added_to_the_result(k: Kit) -> None:
    context = {"hookSpecificOutput": {"additionalContext": "The linter is strict here."}}
    k.install(
        {
            "PostToolUse": [
                hook(k.command("block", "lint failed: line 3")),
                hook(k.command("json", json.dumps(context)), "Bash"),
            ]
        }
    )
    events, _ = await run(k, bash("echo hi"), permission_mode="bypassPermissions")
    command = k.command("block", "lint failed: line 3")
    assert results(events[-1]) == [
        (
            f"hi\n\nPostToolUse hook blocking error:\n[{command}]: lint failed: line 3\n\n"
            "The linter is strict here.",
            False,
        )
    ]


async def test_post_tool_use_failure_fires_for_a_failed_call(k: Kit) -> None:
    k.install(
        {"PostToolUse": [hook(k.command("ok"))], "PostToolUseFailure": [hook(k.command("ok"))]}
    )
    await run(k, bash("echo broken >&2; exit 3"), permission_mode="bypassPermissions")
    (failure,) = k.inputs()
    assert (failure["hook_event_name"], "broken" in failure["error"]) == (
        "PostToolUseFailure",
        True,
    )


@pytest.mark.parametrize(
    ("matcher", "fires"),
    [("", True), ("*", True), ("Bash", True), ("Read|Bash", True), ("Write|Edit", False),
     ("^Ba", True)],
)  # fmt: skip
# a matcher that does not compile is refused where it is given: tests/e2e/test_hook_matchers.py
async def test_matchers_pick_tools_as_claude_code_does(k: Kit, matcher: str, fires: bool) -> None:
    k.install({"PreToolUse": [hook(k.command("ok"), matcher)]})
    await run(k, bash("true"), permission_mode="bypassPermissions")
    assert len(k.inputs()) == (1 if fires else 0)


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
async def test_continue_false_from_a_tool_hook_ends_the_run_after_the_round(
    k: Kit, event: str
) -> None:
    marker = k.project / "ran"
    said = {"continue": False, "stopReason": "The build is broken; stopping."}
    k.install({event: [hook(k.command("json", json.dumps(said)))]})
    events, model = await run(
        k, [tool_call("Bash", {"command": f"touch {marker}"})], permission_mode="bypassPermissions"
    )
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert (finished.terminal, finished.message) == (
        Terminal.HOOK_STOPPED,
        "The build is broken; stopping.",
    )
    assert marker.exists() and len(model.requests) == 1  # the call ran; no model call after


async def test_hooks_get_the_permission_mode_in_force_when_they_run(k: Kit) -> None:
    k.install({"PreToolUse": [hook(k.command("ok"))]})
    (k.project / "notes.md").write_text("notes\n")

    async def accept(request: PermissionRequested) -> Decision:
        return Decision("allow")

    model = ScriptedProvider(
        [
            tool_call("Glob", {"pattern": "*.md"}, id="toolu_plan"),
            tool_call("ExitPlanMode", {"plan": "1. Read notes.md."}, id="toolu_exit"),
            tool_call("Read", {"file_path": str(k.project / "notes.md")}, id="toolu_accepted"),
            text("planned and read"),
            tool_call("Glob", {"pattern": "*.md"}, id="toolu_switched"),
            text("done"),
        ]
    )
    opts = QueryOptions(
        cwd=k.project,
        env=k.env,
        provider=model,
        persist_session=False,
        permission_mode="plan",
        allow_dangerously_skip_permissions=True,  # the switch below needs it
        can_use_tool=accept,
    )
    async with stayer.Session(opts) as session:
        [_ async for _ in session.submit("plan it")]
        session.set_permission_mode("bypassPermissions")
        [_ async for _ in session.submit("go on")]

    seen = [(data["tool_use_id"], data["permission_mode"]) for data in k.of("PreToolUse")]
    assert seen == [
        ("toolu_plan", "plan"),
        ("toolu_exit", "plan"),
        ("toolu_accepted", "default"),  # the accepted plan left plan mode
        ("toolu_switched", "bypassPermissions"),
    ]
