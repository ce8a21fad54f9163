"""A call the policy asks about: the request, the decider's answer, and what the model reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from msgspec.structs import replace

from stayer.events import (
    BlockCompleted,
    Event,
    PermissionDenial,
    PermissionRequested,
    PermissionResolved,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
)
from stayer.loop.abort import AbortSignal
from stayer.loop.state import Decide, LoopParams, ToolCall
from stayer.loop.tool_exec import ASKING_TEXT
from stayer.messages import TextBlock, ToolUseBlock
from stayer.permissions import Decision
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo

UNANSWERED = "Nobody is here to approve Echo; the user can allow it with --allowedTools Echo."


async def ask_about_echo(call: ToolCall) -> Decision:
    """A policy that asks about every Echo call, suggesting the rule that would allow it."""
    if call.tool.name == "Echo":
        return Decision("ask", UNANSWERED, rule="Echo(ask)", suggestions=("Echo",))
    return Decision("allow")


def params(tmp_path: Path, model: ScriptedProvider, decide: Decide | None) -> LoopParams:
    base = make_params(model, [Echo()], tmp_path, can_use_tool=ask_about_echo)
    return replace(base, decide=decide)


def echo_events(events: list[Event]) -> list[object]:
    """The call's own events, in order, as plain values."""
    shown: list[object] = []
    for event in events:
        match event:
            case ToolCallStarted():
                shown.append(("started", event.input))
            case PermissionRequested() | PermissionResolved():
                shown.append(event)
            case ToolCallFinished():
                shown.append(("finished", event.status, event.result.text))
            case _:
                pass
    return shown


REQUEST = PermissionRequested(
    "toolu_echo", "Echo", {"text": "hi"}, UNANSWERED, "Echo(ask)", ("Echo",), None
)


async def test_an_allowed_call_asks_then_runs(tmp_path: Path) -> None:
    asked: list[PermissionRequested] = []

    async def decide(request: PermissionRequested) -> Decision:
        asked.append(request)
        return Decision("allow")

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    events = await run(params(tmp_path, model, decide))

    assert asked == [REQUEST]
    assert echo_events(events) == [
        ("started", {"text": "hi"}),
        REQUEST,
        PermissionResolved("toolu_echo", "Echo", "allow", "user"),
        ("finished", "completed", "hi"),
    ]
    assert finished(events).terminal is Terminal.COMPLETED
    assert finished(events).permission_denials == ()


async def test_a_denial_is_an_error_result_listed_in_the_denials_and_the_loop_goes_on(
    tmp_path: Path,
) -> None:
    async def decide(request: PermissionRequested) -> Decision:
        return Decision("deny", "not on a Friday")

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("fine, I will not")])
    events = await run(params(tmp_path, model, decide))

    said = (
        "The user denied permission to use Echo, saying: not on a Friday\n"
        "Follow that; do not make the same call another way."
    )
    assert echo_events(events)[2:] == [
        PermissionResolved("toolu_echo", "Echo", "deny", "user", said),
        ("finished", "denied", said),
    ]
    (result,) = results_in(model.requests[1].messages[-1])
    assert (result.text, result.is_error) == (said, True)
    end = finished(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "fine, I will not")
    assert end.permission_denials == (PermissionDenial("Echo", "toolu_echo", {"text": "hi"}),)


async def test_an_allow_with_new_input_runs_with_it(tmp_path: Path) -> None:
    async def decide(request: PermissionRequested) -> Decision:
        return Decision("allow", updated_input={"text": "softened"})

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    events = await run(params(tmp_path, model, decide))

    assert echo_events(events)[2:] == [
        PermissionResolved(
            "toolu_echo", "Echo", "allow", "user", updated_input={"text": "softened"}
        ),
        ("finished", "completed", "softened"),
    ]


async def test_new_input_that_breaks_the_schema_is_refused_and_nothing_runs(
    tmp_path: Path,
) -> None:
    async def decide(request: PermissionRequested) -> Decision:
        return Decision("allow", updated_input={"text": 5})

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    events = await run(params(tmp_path, model, decide))

    assert echo_events(events)[-1] == (
        "finished",
        "failed",
        "InputValidationError: the input Echo was approved with does not fit its schema "
        "(text: Input should be a valid string), so it did not run.",
    )


class Broken(Exception):
    pass


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            Broken("the dialog closed"),
            "Permission to use Echo was not granted: asking for approval failed "
            "(Broken: the dialog closed), so the call did not run. Do not try another way to "
            "do the same; if it is essential, stop and say so.",
        ),
        (
            Decision("ask"),
            "Permission to use Echo was not granted: the approval answered 'ask', not allow "
            "or deny, so the call did not run.",
        ),
        (
            None,
            "Permission to use Echo was not granted: the approval answered NoneType, not allow "
            "or deny, so the call did not run.",
        ),
    ],
    ids=["raises", "answers-ask", "answers-none"],
)
async def test_a_decider_that_breaks_denies_the_call_and_the_run_goes_on(
    tmp_path: Path, answer: Exception | Decision | None, said: str
) -> None:
    async def decide(request: PermissionRequested) -> Decision:
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]  # a caller's callback may break its type

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    events = await run(params(tmp_path, model, decide))

    assert echo_events(events)[2:] == [
        PermissionResolved("toolu_echo", "Echo", "deny", "policy", said),
        ("finished", "denied", said),
    ]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_with_nobody_to_ask_the_call_is_denied_in_the_policys_words(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    events = await run(params(tmp_path, model, None))

    assert echo_events(events) == [
        ("started", {"text": "hi"}),
        ("finished", "denied", UNANSWERED),
    ]
    assert len(finished(events).permission_denials) == 1


async def test_the_answer_streams_on_while_the_decider_takes_its_time(tmp_path: Path) -> None:
    """The rest of the answer is held until the request is out, and the decider until the
    rest has streamed: were the stream waiting on the decider, this would never end."""
    asked, streamed = asyncio.Event(), asyncio.Event()

    async def decide(request: PermissionRequested) -> Decision:
        asked.set()
        await streamed.wait()
        return Decision("allow")

    async def after_block(index: int) -> None:
        if index == 0:
            await asked.wait()
        else:
            streamed.set()

    reply = Reply(
        (ToolUseBlock("toolu_echo", "Echo", {"text": "hi"}), TextBlock("while you decide")),
        after_block=after_block,
    )
    model = ScriptedProvider([reply, text("done")])
    events = await run(params(tmp_path, model, decide))

    order = [
        type(event).__name__
        for event in events
        if isinstance(event, PermissionRequested | PermissionResolved)
        or (isinstance(event, BlockCompleted) and isinstance(event.block, TextBlock))
    ]
    assert order[:3] == ["PermissionRequested", "BlockCompleted", "PermissionResolved"]


async def test_an_interrupt_while_asking_says_the_call_never_ran(tmp_path: Path) -> None:
    abort = AbortSignal()

    async def decide(request: PermissionRequested) -> Decision:
        abort.abort()
        await asyncio.Event().wait()  # nobody ever answers
        raise AssertionError("unreachable")

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"})])
    base = make_params(model, [Echo()], tmp_path, can_use_tool=ask_about_echo, abort=abort)
    events = await run(replace(base, decide=decide))

    assert echo_events(events)[1:] == [REQUEST, ("finished", "failed", ASKING_TEXT)]
    assert finished(events).terminal is Terminal.ABORTED_TOOLS


async def test_new_input_is_checked_again_and_refused_when_the_policy_denies_it(
    tmp_path: Path,
) -> None:
    async def policy(call: ToolCall) -> Decision:
        if call.input.text == "forbidden":
            return Decision("deny", "Echo may not say that.")
        if call.input.text == "rough":
            return Decision("allow", updated_input={"text": "smoothed"})  # as a hook rewrites
        return Decision("ask", UNANSWERED)

    answers = iter([{"text": "forbidden"}, {"text": "rough"}])

    async def decide(request: PermissionRequested) -> Decision:
        return Decision("allow", updated_input=next(answers))

    model = ScriptedProvider(
        [
            tool_call("Echo", {"text": "hi"}, id="toolu_1"),
            tool_call("Echo", {"text": "hey"}, id="toolu_2"),
            text("done"),
        ]
    )
    base = make_params(model, [Echo()], tmp_path, can_use_tool=policy)
    events = await run(replace(base, decide=decide))

    finished_calls = [e for e in echo_events(events) if isinstance(e, tuple) and e[0] == "finished"]
    assert finished_calls == [
        (
            "finished",
            "denied",
            "Echo did not run: the input it was approved with was checked again and refused. "
            "Echo may not say that.",
        ),
        ("finished", "completed", "smoothed"),
    ]
