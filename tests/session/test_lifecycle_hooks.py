"""Stop, UserPromptSubmit, SessionStart and SessionEnd hooks from a project's settings, run
as real processes in a run of the scripted model: their input, and what their replies do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inline_snapshot import snapshot

import stayer
from stayer.errors import ConfigError
from stayer.events import (
    Continue,
    Continuing,
    Finished,
    HookRan,
    SessionStarted,
    Terminal,
)
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import text
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.event_form import stream
from tests.session.hook_kit import Kit, hook, kit, run, user_texts


@pytest.fixture
def k(tmp_path: Path) -> Kit:
    return kit(tmp_path)


def last_user_text(message: object) -> str:
    assert isinstance(message, UserMessage)
    return "\n".join(block.text for block in message.content if isinstance(block, TextBlock))


async def test_a_blocking_stop_hook_sends_the_model_back_then_sees_stop_hook_active(
    k: Kit,
) -> None:
    k.install({"Stop": [hook(k.command("block-unless-active"))]})
    events, model = await run(k, [text("done"), text("tests pass, done")])

    first, second = k.of("Stop")
    assert (first["stop_hook_active"], first["last_assistant_message"]) == (False, "done")
    assert (second["stop_hook_active"], second["last_assistant_message"]) == (
        True,
        "tests pass, done",
    )
    command = k.command("block-unless-active")
    feedback = f"Stop hook feedback:\n[{command}]: run the tests first"
    assert last_user_text(model.requests[1].messages[-1]) == feedback
    assert Continuing(Continue.STOP_HOOK_BLOCKING) in events
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert (finished.terminal, finished.result_text) == (Terminal.COMPLETED, "tests pass, done")


async def test_a_stop_hook_that_never_approves_ends_the_run_as_stop_hook_prevented(
    k: Kit,
) -> None:
    k.install({"Stop": [hook(k.command("block", "never done"))]})
    k.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "2"
    events, model = await run(k, [text("one"), text("two"), text("three")])

    assert len(k.of("Stop")) == 3 and len(model.requests) == 3
    assert stream(events, {k.project.parent: "<tmp>"}) == snapshot(
        [
            {
                "type": "session_started",
                "model": "scripted",
                "provider": "scripted",
                "cwd": "<tmp>/project",
                "permission_mode": "default",
                "context_window": 32768,
                "max_output_tokens": 8192,
                "settings_files": ["<tmp>/project/.claude/settings.json"],
            },
            {"type": "request_started", "turn": 1},
            {
                "type": "hook_ran",
                "hook_event": "Stop",
                "hook_name": "Stop",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log block 'never done'",
                "exit_code": 2,
                "outcome": "blocked",
                "message": "never done",
                "stderr": "never done\n",
            },
            {"type": "continuing", "reason": "stop_hook_blocking"},
            {"type": "request_started", "turn": 1},
            {
                "type": "hook_ran",
                "hook_event": "Stop",
                "hook_name": "Stop",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log block 'never done'",
                "exit_code": 2,
                "outcome": "blocked",
                "message": "never done",
                "stderr": "never done\n",
            },
            {"type": "continuing", "reason": "stop_hook_blocking"},
            {"type": "request_started", "turn": 1},
            {
                "type": "hook_ran",
                "hook_event": "Stop",
                "hook_name": "Stop",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log block 'never done'",
                "exit_code": 2,
                "outcome": "blocked",
                "message": "never done",
                "stderr": "never done\n",
            },
            {
                "type": "finished",
                "terminal": "stop_hook_prevented",
                "message": (
                    "A Stop hook kept the turn from ending 2 times in a row with no tool call in "
                    "between, the most allowed (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2), so the run "
                    "ends without its approval. A Stop hook should check stop_hook_active in its "
                    "input and let the turn end while it is true. The hook's last words:\n"
                    "[<python> <tmp>/hook.py <tmp>/hooks.log block 'never done']: never done"
                ),
                "num_turns": 1,
                "usage": {
                    "input_tokens": 300,
                    "output_tokens": 60,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
                "cost_usd": 0.0,
                "result_text": "",
                "stop_reason": "end_turn",
                "model_usage": [
                    {
                        "model": "scripted",
                        "usage": {
                            "input_tokens": 300,
                            "output_tokens": 60,
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


async def test_the_default_cap_is_eight_blocks(k: Kit) -> None:
    k.install({"Stop": [hook(k.command("block", "never done"))]})
    events, model = await run(k, [text(f"answer {n}") for n in range(9)])
    finished = events[-1]
    assert len(model.requests) == 9
    assert isinstance(finished, Finished) and finished.terminal is Terminal.STOP_HOOK_PREVENTED
    assert "8 times in a row" in finished.message
    assert "(CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=8)" in finished.message


async def test_continue_false_from_a_stop_hook_ends_as_stop_hook_prevented(k: Kit) -> None:
    said = {"continue": False, "stopReason": "Out of credits for today."}
    k.install({"Stop": [hook(k.command("json", json.dumps(said)))]})
    events, _ = await run(k, [text("done")])
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert (finished.terminal, finished.message) == (
        Terminal.STOP_HOOK_PREVENTED,
        "Out of credits for today.",
    )


async def test_a_stop_hook_that_crashes_lets_the_turn_end(k: Kit) -> None:
    k.install({"Stop": [hook(k.command("crash"))]})
    events, _ = await run(k, [text("done")])
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.terminal is Terminal.COMPLETED
    (stop,) = [e for e in events if isinstance(e, HookRan)]
    assert (stop.hook_name, stop.outcome, stop.exit_code) == ("Stop", "error", 1)


async def test_user_prompt_submit_gets_the_prompt_and_can_add_context(k: Kit) -> None:
    k.install({"UserPromptSubmit": [hook(k.command("print", "Today is a holiday."))]})
    events, model = await run(k, [text("ok")], prompt="plan my day")

    (submitted,) = k.of("UserPromptSubmit")
    assert submitted["prompt"] == "plan my day"
    assert user_texts(events[-1]) == [
        "plan my day",
        "[Context a hook added to this prompt:]\nToday is a holiday.",
    ]
    assert len(model.requests) == 1


async def test_a_blocking_user_prompt_submit_keeps_the_prompt_out(k: Kit) -> None:
    k.install({"UserPromptSubmit": [hook(k.command("block", "no secrets in prompts"))]})
    events, model = await run(k, [], prompt="my password is hunter2")

    assert model.requests == []
    assert stream(events, {k.project.parent: "<tmp>"}) == snapshot(
        [
            {
                "type": "session_started",
                "model": "scripted",
                "provider": "scripted",
                "cwd": "<tmp>/project",
                "permission_mode": "default",
                "context_window": 32768,
                "max_output_tokens": 8192,
                "settings_files": ["<tmp>/project/.claude/settings.json"],
            },
            {
                "type": "hook_ran",
                "hook_event": "UserPromptSubmit",
                "hook_name": "UserPromptSubmit",
                "command": "<python> <tmp>/hook.py <tmp>/hooks.log block 'no secrets in prompts'",
                "exit_code": 2,
                "outcome": "blocked",
                "message": "no secrets in prompts",
                "stderr": "no secrets in prompts\n",
            },
            {
                "type": "finished",
                "terminal": "hook_stopped",
                "message": """\
UserPromptSubmit operation blocked by hook:
[<python> <tmp>/hook.py <tmp>/hooks.log block 'no secrets in prompts']: no secrets in prompts\
""",
                "num_turns": 0,
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
                "cost_usd": 0.0,
                "result_text": "",
                "stop_reason": None,
            },
        ]
    )


async def test_session_start_and_end_fire_once_with_their_source_and_reason(k: Kit) -> None:
    k.install(
        {
            "SessionStart": [hook(k.command("print", "Branch main is frozen."), "startup")],
            "SessionEnd": [hook(k.command("ok"))],
        }
    )
    events, _ = await run(k, [text("ok")])

    started = events[0]
    assert isinstance(started, SessionStarted)
    assert [(d["hook_event_name"], d.get("source"), d.get("reason")) for d in k.inputs()] == [
        ("SessionStart", "startup", None),
        ("SessionEnd", None, "other"),
    ]
    assert user_texts(events[-1]) == [
        "go",
        "[Context a hook added to this prompt:]\nBranch main is frozen.",
    ]


async def test_a_session_start_matcher_for_resume_does_not_fire_at_startup(k: Kit) -> None:
    k.install({"SessionStart": [hook(k.command("ok"), "resume")]})
    await run(k, [text("ok")])
    assert k.inputs() == []


async def test_a_bad_block_cap_is_one_clear_line(k: Kit) -> None:
    k.install({"Stop": [hook(k.command("ok"))]})
    k.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "lots"
    with pytest.raises(ConfigError, match="must be a whole number of blocks"):
        await run(k, [text("ok")])


async def test_session_start_says_resume_when_a_saved_session_goes_on(k: Kit) -> None:
    k.install({"SessionStart": [hook(k.command("ok"))]})
    first = QueryOptions(cwd=k.project, env=k.env, provider=stayer.ScriptedProvider([text("a")]))
    async with Session(first) as session:
        _ = [event async for event in session.submit("one")]
        saved = session.session_id
    again = QueryOptions(
        cwd=k.project, env=k.env, provider=stayer.ScriptedProvider([text("b")]), resume=saved
    )
    async with Session(again) as session:
        _ = [event async for event in session.submit("two")]
    assert [(d["source"], d["session_id"]) for d in k.of("SessionStart")] == [
        ("startup", saved),
        ("resume", saved),
    ]
    assert k.of("SessionStart")[0]["transcript_path"].endswith(f"{saved}.jsonl")
