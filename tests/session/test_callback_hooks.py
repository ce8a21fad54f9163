"""A program's own hooks (`QueryOptions.hooks`: `CallbackMatcher`s of async callables) run
beside the settings' command hooks, on the same input, and what they answer is applied as a
command's JSON output is: blocks, rewritten input, context, `continue: false`, a Stop hook
sending the model back. A callable that raises, hangs or answers garbage is a failed hook,
reported in one line, and the action goes on (or is blocked, when its matcher says so)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer import CallbackMatcher
from stayer.events import Continue, Continuing, Event, Finished, HookRan, Terminal
from stayer.hooks.callbacks import HookCallback
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from tests.session.hook_kit import Kit, hook, kit, results, run, user_texts
from tests.session.subagent_kit import Router, agent, options
from tests.session.test_subagents import run as run_session


@pytest.fixture
def k(tmp_path: Path) -> Kit:
    return kit(tmp_path)


class Recorder:
    """A callback that keeps what it was given and answers `answer` (a callable of the input,
    or a fixed object)."""

    def __init__(self, answer: Any = None, name: str = "recorder") -> None:
        self.answer: Any = {} if answer is None else answer
        self.calls: list[tuple[dict[str, Any], str | None]] = []
        self.hook_name = name
        """What the user sees it called (`callback_name`)."""

    async def __call__(self, data: dict[str, Any], tool_use_id: str | None) -> Any:
        self.calls.append((data, tool_use_id))
        return self.answer(data) if callable(self.answer) else self.answer


def on(event: str, *calls: HookCallback, matcher: str = "", **more: Any) -> dict[str, Any]:
    return {"hooks": {event: [CallbackMatcher(hooks=calls, matcher=matcher, **more)]}}


def bash(command: str) -> list[Reply]:
    return [tool_call("Bash", {"command": command}, id="toolu_0"), text("done")]


def ran(events: list[Event]) -> list[tuple[str, str, int | None, str]]:
    return [
        (e.hook_name, e.outcome, e.exit_code, e.message) for e in events if isinstance(e, HookRan)
    ]


async def test_a_callback_runs_beside_a_command_hook_on_the_same_input(k: Kit) -> None:
    k.install({"PreToolUse": [hook(k.command("ok"))]})
    mine = Recorder()
    events, _ = await run(
        k, bash("echo hi"), permission_mode="bypassPermissions", **on("PreToolUse", mine)
    )

    ((given, tool_use_id),) = mine.calls
    assert k.of("PreToolUse") == [given]
    assert tool_use_id == "toolu_0"
    assert given["tool_input"] == {"command": "echo hi"}
    assert given["hook_event_name"] == "PreToolUse"
    assert [(name, outcome) for name, outcome, _, _ in ran(events)] == [
        ("PreToolUse:Bash", "success"),
        ("PreToolUse:Bash", "success"),
    ]
    assert results(events[-1]) == [("hi", False)]


async def test_a_blocking_callback_keeps_the_tool_from_running_and_the_model_reads_why(
    k: Kit,
) -> None:
    marker = k.project / "ran"
    no = Recorder({"decision": "block", "reason": "not on a Friday"}, name="guard")
    events, _ = await run(
        k,
        bash(f"touch {marker}"),
        permission_mode="bypassPermissions",
        **on("PreToolUse", no, matcher="Bash"),
    )

    assert not marker.exists()
    assert results(events[-1]) == [("PreToolUse:Bash hook error: [guard]: not on a Friday", True)]
    assert ran(events) == [("PreToolUse:Bash", "blocked", 0, "not on a Friday")]


async def test_a_deny_decision_denies_with_its_reason(k: Kit) -> None:
    marker = k.project / "ran"
    specific = {"permissionDecision": "deny", "permissionDecisionReason": "read-only today"}
    deny = Recorder({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})
    events, _ = await run(
        k, bash(f"touch {marker}"), permission_mode="bypassPermissions", **on("PreToolUse", deny)
    )

    assert not marker.exists()
    assert results(events[-1]) == [("read-only today", True)]


async def test_a_matcher_that_names_another_tool_leaves_the_call_alone(k: Kit) -> None:
    no = Recorder({"decision": "block", "reason": "no"})
    events, _ = await run(
        k,
        bash("echo hi"),
        permission_mode="bypassPermissions",
        **on("PreToolUse", no, matcher="Write|Edit"),
    )

    assert no.calls == []
    assert results(events[-1]) == [("hi", False)]


async def test_updated_input_rewrites_the_call_before_it_runs(k: Kit) -> None:
    specific = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "echo rewritten"},
    }
    rewrite = Recorder({"hookSpecificOutput": specific})
    events, _ = await run(k, bash("echo original"), **on("PreToolUse", rewrite))

    assert results(events[-1]) == [("rewritten", False)]


async def test_post_tool_use_sees_the_output_and_its_context_reaches_the_model(k: Kit) -> None:
    after = Recorder(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "noted"}}
    )
    events, _ = await run(
        k, bash("echo hi"), permission_mode="bypassPermissions", **on("PostToolUse", after)
    )

    ((given, _),) = after.calls
    assert given["tool_response"]["stdout"] == "hi\n"
    assert results(events[-1]) == [("hi\n\nnoted", False)]


async def test_user_prompt_submit_adds_context_and_a_block_keeps_the_prompt_out(k: Kit) -> None:
    add = Recorder(
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Tue"}}
    )
    events, model = await run(k, [text("ok")], prompt="plan", **on("UserPromptSubmit", add))
    assert add.calls[0][0]["prompt"] == "plan"
    assert add.calls[0][1] is None
    assert user_texts(events[-1]) == ["plan", "[Context a hook added to this prompt:]\nTue"]

    keep_out = Recorder({"decision": "block", "reason": "no secrets"}, name="secrets")
    events, model = await run(k, [], prompt="the key is 42", **on("UserPromptSubmit", keep_out))
    assert model.requests == []
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.message == "UserPromptSubmit operation blocked by hook:\n[secrets]: no secrets"


async def test_a_stop_callback_sends_the_model_back_once(k: Kit) -> None:
    def verdict(data: Mapping[str, Any]) -> dict[str, Any]:
        if data["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "run the tests first"}

    stop = Recorder(verdict)
    events, model = await run(k, [text("done"), text("tested, done")], **on("Stop", stop))

    assert [data["stop_hook_active"] for data, _ in stop.calls] == [False, True]
    assert len(model.requests) == 2
    assert Continuing(Continue.STOP_HOOK_BLOCKING) in events
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert (finished.terminal, finished.result_text) == (Terminal.COMPLETED, "tested, done")


async def test_continue_false_in_python_spelling_ends_the_run_after_the_tool(k: Kit) -> None:
    halt = Recorder({"continue_": False, "stopReason": "enough for today"})
    events, model = await run(
        k, bash("echo hi"), permission_mode="bypassPermissions", **on("PostToolUse", halt)
    )

    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.terminal is Terminal.HOOK_STOPPED
    assert len(model.requests) == 1


class Hangs:
    """A callback that never answers until the test lets it (it never does)."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.never = asyncio.Event()

    async def __call__(self, data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        self.called.set()
        await self.never.wait()
        return {}


async def test_a_callback_that_does_not_answer_in_time_is_passed_over(k: Kit) -> None:
    marker = k.project / "ran"
    hangs = Hangs()
    events, _ = await run(
        k,
        bash(f"touch {marker}"),
        permission_mode="bypassPermissions",
        **on("PreToolUse", hangs, timeout=0.2),
    )

    assert hangs.called.is_set() and marker.exists()
    assert ran(events) == [("PreToolUse:Bash", "timeout", None, "did not answer within 0.2 s")]


async def test_a_failing_callback_blocks_when_its_matcher_says_so(k: Kit) -> None:
    marker = k.project / "ran"
    events, _ = await run(
        k,
        bash(f"touch {marker}"),
        permission_mode="bypassPermissions",
        **on("PreToolUse", Hangs(), timeout=0.2, on_failure="block"),
    )

    assert not marker.exists()
    ((name, outcome, _, message),) = ran(events)
    assert (name, outcome) == ("PreToolUse:Bash", "blocked")
    assert message == "did not answer within 0.2 s (its matcher blocks on failure)"


async def test_a_failing_stop_callback_never_keeps_the_model_going(k: Kit) -> None:
    async def broken(data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        raise RuntimeError("the checker is down")

    events, model = await run(k, [text("done")], **on("Stop", broken, on_failure="block"))

    assert len(model.requests) == 1
    ((_, outcome, code, message),) = ran(events)
    assert (outcome, code, message) == ("error", 1, "failed: the checker is down")


class Weird:
    """Not a JSON object's worth of data."""


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (None, "answered nothing, not a JSON object (answer {} to say nothing)"),
        (["block"], "answered a list, not a JSON object (answer {} to say nothing)"),
        ({"continue": "maybe"}, "its JSON output is not usable: continue: input should be a "
         'valid boolean (got "maybe")'),
        ({"hookSpecificOutput": {"permissionDecision": "Deny"}},
         "its JSON output is not usable: hookSpecificOutput.permissionDecision: input should "
         "be 'allow', 'deny' or 'ask' (got \"Deny\")"),
        ({"reason": Weird()}, "its answer is not JSON data (Object of type Weird is not JSON "
         "serializable)"),
    ],
)  # fmt: skip
async def test_a_garbage_answer_is_a_failed_hook_and_the_call_goes_on(
    k: Kit, answer: object, said: str
) -> None:
    marker = k.project / "ran"
    garbage = Recorder(lambda _: answer)
    events, _ = await run(
        k, bash(f"touch {marker}"), permission_mode="bypassPermissions", **on("PreToolUse", garbage)
    )

    assert marker.exists()
    assert ran(events) == [("PreToolUse:Bash", "error", 0, said)]


async def test_a_bad_timeout_is_refused_when_the_matcher_is_made() -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        CallbackMatcher(hooks=(), timeout=0)


async def test_callbacks_fire_for_a_subagent_as_it_starts_works_and_stops(tmp_path: Path) -> None:
    started, used, stopped = Recorder(), Recorder(), Recorder()
    lead = ScriptedProvider(
        [tool_call("Spawn", {"prompt": "look", "subagent_type": "scout"}, id="t1"), text("ok")]
    )
    scout = ScriptedProvider(
        [tool_call("Bash", {"command": "echo inside"}, id="t2"), text("found it")]
    )
    router = Router(lead, SCOUT=scout)
    hooks = {
        "SubagentStart": [CallbackMatcher(hooks=(started,), matcher="scout")],
        "PreToolUse": [CallbackMatcher(hooks=(used,), matcher="Bash")],
        "SubagentStop": [CallbackMatcher(hooks=(stopped,))],
    }
    opts = options(tmp_path, router, agents={"scout": agent("SCOUT")}, hooks=hooks)
    async with stayer.Session(opts) as session:
        await run_session(session, "go")

    ((start, _),) = started.calls
    ((call, call_id),) = used.calls
    ((stop, _),) = stopped.calls
    assert start["agent_type"] == stop["agent_type"] == "scout"
    assert start["agent_id"] == stop["agent_id"]
    assert (call["tool_input"], call_id) == ({"command": "echo inside"}, "t2")
    router.assert_done()


async def test_an_async_answer_says_nothing_and_the_call_goes_on(k: Kit) -> None:
    later = Recorder({"async_": True, "asyncTimeout": 1000})
    events, _ = await run(
        k, bash("echo hi"), permission_mode="bypassPermissions", **on("PreToolUse", later)
    )

    assert results(events[-1]) == [("hi", False)]
    assert ran(events) == [("PreToolUse:Bash", "success", 0, "")]


@pytest.mark.parametrize(
    ("hooks", "said"),
    [
        ({"PreToolUse": CallbackMatcher(hooks=())}, "give a list of CallbackMatcher"),
        ({"PreToolUse": [{"matcher": "Bash"}]}, "dict is not a CallbackMatcher"),
        ({"Stop": [CallbackMatcher(hooks=("not callable",))]}, "must be callable"),  # type: ignore[arg-type]
    ],
)
async def test_hooks_of_the_wrong_shape_are_refused_before_anything_runs(
    k: Kit, hooks: Any, said: str
) -> None:
    with pytest.raises(stayer.ConfigError, match=f"^QueryOptions.hooks\\[.*{said}"):
        await run(k, [], hooks=hooks)


async def test_post_tool_use_failure_hears_of_a_failed_call_with_its_error(k: Kit) -> None:
    failed = Recorder()
    events, _ = await run(
        k,
        bash("echo broken >&2; exit 3"),
        permission_mode="bypassPermissions",
        **on("PostToolUseFailure", failed),
    )

    ((given, tool_use_id),) = failed.calls
    assert (given["hook_event_name"], tool_use_id) == ("PostToolUseFailure", "toolu_0")
    assert "broken" in given["error"]
    assert results(events[-1])[0][1] is True
