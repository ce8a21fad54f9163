"""SPEC §3: a response without a tool call is a signal to recover from. One test per continue
and terminal reason of the recovery tree, each asserting the loop's whole sequence of loop-level
events (stream events are left out: they are the scripted replies themselves)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from msgspec.structs import replace

from stayer.events import (
    Continue,
    Continuing,
    Event,
    Finished,
    MessageCompleted,
    RequestStarted,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.loop.abort import AbortSignal
from stayer.loop.recovery import (
    CUT_CALL_TEXT,
    EMPTY_TEXT,
    MALFORMED_TEXT,
    OUTPUT_RECOVERY_TEXT,
    REPEAT_TEXT,
    STOP_CHECK_TEXT,
)
from stayer.loop.state import StopCheck
from stayer.messages import (
    AssistantMessage,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo, Refuse

CUT: StopReason = "max_tokens"


def loop_events(events: Sequence[Event]) -> list[object]:
    """The loop's own events, in order, reduced to what each test compares."""
    shown: list[object] = []
    for event in events:
        match event:
            case RequestStarted(turn=turn):
                shown.append(("request", turn))
            case Withdrawn(message_id=message_id):
                shown.append(("withdrawn", message_id))
            case Continuing(reason=reason):
                shown.append(reason)
            case ToolCallStarted(name=name):
                shown.append(("started", name))
            case ToolCallFinished(name=name, status=status):
                shown.append(("finished", name, status))
            case ToolResultsAppended():
                shown.append("results")
            case Finished(terminal=terminal):
                shown.append(terminal)
            case _:
                pass
    return shown


def cut_call(raw: str, *, id: str = "toolu_cut") -> Reply:
    """A reply whose one tool call the output limit cut inside its JSON input."""
    return Reply((ToolUseBlock(id, "Echo", {}, unparsed=raw),), stop_reason=CUT)


async def test_a_cut_reply_is_asked_again_once_with_a_larger_output_limit(tmp_path: Path) -> None:
    model = ScriptedProvider([text("The answer is", stop_reason=CUT), text("The answer is 42.")])
    params = replace(make_params(model, [Echo()], tmp_path), escalated_max_tokens=64_000)
    events = await run(params)

    assert loop_events(events) == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    first, second = model.requests
    assert (first.max_tokens, second.max_tokens) == (32_000, 64_000)
    assert second.messages == first.messages  # the cut answer is not in the conversation
    assert finished(events).result_text == "The answer is 42."


async def test_a_cut_reply_is_continued_from_where_it_stopped(tmp_path: Path) -> None:
    model = ScriptedProvider([text("The answer", stop_reason=CUT), text(" is 42.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    assert model.requests[1].messages[1:] == (
        AssistantMessage(
            (TextBlock("The answer"),),
            id="msg_scripted_1",
            model="scripted",
            stop_reason=CUT,
            usage=model.requests[1].messages[1].usage,  # type: ignore[union-attr]
        ),
        UserMessage((TextBlock(OUTPUT_RECOVERY_TEXT),)),
    )
    end = finished(events)
    assert end.terminal is Terminal.COMPLETED and end.result_text == " is 42."


async def test_after_three_continuations_the_run_ends_keeping_what_was_written(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text(f"part {n}", stop_reason=CUT) for n in range(1, 5)])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        *[Continue.MAX_OUTPUT_TOKENS_RECOVERY, ("request", 1)] * 3,
        Terminal.MAX_OUTPUT_TOKENS,
    ]
    end = finished(events)
    assert "cut off by the output limit 4 times" in end.message
    written = [m.text for m in end.messages if isinstance(m, AssistantMessage)]
    assert written == ["part 1", "part 2", "part 3", "part 4"]


async def test_the_continuation_count_starts_again_after_a_tool_turn(tmp_path: Path) -> None:
    cuts = [text("cut", stop_reason=CUT)] * 3
    model = ScriptedProvider([*cuts, tool_call("Echo", {"text": "x"}), *cuts, text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert finished(events).terminal is Terminal.COMPLETED
    reasons = [e.reason for e in events if isinstance(e, Continuing)]
    assert reasons == [
        *[Continue.MAX_OUTPUT_TOKENS_RECOVERY] * 3,
        Continue.NEXT_TURN,
        *[Continue.MAX_OUTPUT_TOKENS_RECOVERY] * 3,
    ]


async def test_a_tool_call_cut_inside_its_input_never_runs_and_the_model_is_told_why(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([cut_call('{"text": "a very long te'), text("I will split it.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("finished", "Echo", "failed"),
        "results",
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        ("request", 2),
        Terminal.COMPLETED,
    ]
    (result,) = results_in(model.requests[1].messages[-1])
    assert (result.tool_use_id, result.text, result.is_error) == ("toolu_cut", CUT_CALL_TEXT, True)
    assert "JSON" not in result.text


async def test_complete_calls_before_a_cut_one_still_run(tmp_path: Path) -> None:
    both = Reply(
        (
            ToolUseBlock("toolu_ok", "Echo", {"text": "first"}),
            ToolUseBlock("toolu_cut", "Echo", {}, unparsed='{"text": "sec'),
        ),
        stop_reason=CUT,
    )
    model = ScriptedProvider([both, text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    # the whole call started as soon as its block streamed; the cut one never starts
    assert loop_events(events)[:2] == [("request", 1), ("started", "Echo")]
    assert sorted(map(str, loop_events(events)[2:4])) == [
        "('finished', 'Echo', 'completed')",
        "('finished', 'Echo', 'failed')",
    ]
    assert loop_events(events)[4] == "results"
    first, cut = results_in(model.requests[1].messages[-1])
    assert (first.tool_use_id, first.text) == ("toolu_ok", "first")
    assert (cut.tool_use_id, cut.text) == ("toolu_cut", CUT_CALL_TEXT)


async def test_a_cut_call_is_asked_again_with_a_larger_limit_first(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [cut_call('{"text": "lo'), tool_call("Echo", {"text": "long"}), text("ok")]
    )
    params = replace(make_params(model, [Echo()], tmp_path), escalated_max_tokens=64_000)
    events = await run(params)

    assert loop_events(events)[:4] == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
        ("request", 1),
    ]
    assert [e.status for e in events if isinstance(e, ToolCallFinished)] == ["completed"]


async def test_cut_calls_end_the_run_after_three_recoveries(tmp_path: Path) -> None:
    model = ScriptedProvider([cut_call('{"text": "x', id=f"toolu_{n}") for n in range(4)])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.MAX_OUTPUT_TOKENS
    assert not [e for e in events if isinstance(e, ToolCallStarted)]


async def test_a_tool_use_stop_without_a_call_is_asked_again(tmp_path: Path) -> None:
    model = ScriptedProvider([text("Let me run it.", stop_reason="tool_use"), text("Done.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        Continue.MALFORMED_TOOL_USE_RETRY,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    last = model.requests[1].messages[-1]
    assert isinstance(last, UserMessage) and last.content == (TextBlock(MALFORMED_TEXT),)


async def test_a_model_that_keeps_promising_calls_it_never_makes_is_stopped(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("Running it.", stop_reason="tool_use")] * 3)
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        *[Continue.MALFORMED_TOOL_USE_RETRY, ("request", 1)] * 2,
        Terminal.MALFORMED_TOOL_USE_EXHAUSTED,
    ]


async def test_an_empty_reply_is_nudged_then_sent_again_then_reported(tmp_path: Path) -> None:
    model = ScriptedProvider([Reply(()), Reply(()), Reply((TextBlock("  "),))])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        Continue.EMPTY_RESPONSE_NUDGE,
        ("request", 1),
        ("withdrawn", "msg_scripted_2"),
        Continue.EMPTY_RESPONSE_RESEND,
        ("request", 1),
        Terminal.EMPTY_RESPONSE,
    ]
    nudge, resend, again = model.requests
    assert nudge.messages == (UserMessage((TextBlock("go"),)),)
    assert (
        resend.messages
        == again.messages
        == (UserMessage((TextBlock("go"), TextBlock(EMPTY_TEXT))),)
    )
    end = finished(events)
    assert end.result_text == "" and "no visible answer 3 times" in end.message


async def test_a_thinking_only_reply_keeps_its_thinking_and_is_nudged(tmp_path: Path) -> None:
    thought = Reply((ThinkingBlock("hmm", "sig"),))
    model = ScriptedProvider([thought, text("Here it is.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        Continue.EMPTY_RESPONSE_NUDGE,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    kept = model.requests[1].messages[1]
    assert isinstance(kept, AssistantMessage) and kept.content == (ThinkingBlock("hmm", "sig"),)
    assert finished(events).result_text == "Here it is."


def checks_answering(*reports: str | None) -> tuple[StopCheck, ...]:
    """One stop check that answers with `reports` in turn, and fails the test past them."""
    answers = iter(reports)

    async def check() -> str | None:
        return next(answers)

    return (check,)


async def test_a_failing_stop_check_sends_the_model_back_to_work(tmp_path: Path) -> None:
    model = ScriptedProvider([text("Done!"), tool_call("Echo", {"text": "fix"}), text("Now done.")])
    params = replace(
        make_params(model, [Echo()], tmp_path),
        stop_checks=checks_answering("2 tests failed", None),
    )
    events = await run(params)

    assert loop_events(events) == [
        ("request", 1),
        Continue.STOP_HOOK_BLOCKING,
        ("request", 1),
        ("started", "Echo"),
        ("finished", "Echo", "completed"),
        "results",
        Continue.NEXT_TURN,
        ("request", 2),
        Terminal.COMPLETED,
    ]
    told = model.requests[1].messages[-1]
    assert told == UserMessage((TextBlock(f"{STOP_CHECK_TEXT}\n\n2 tests failed"),))
    assert finished(events).result_text == "Now done."


async def test_a_check_that_never_passes_ends_the_run_with_its_last_report(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("Done!")] * 4)
    params = replace(
        make_params(model, [Echo()], tmp_path),
        stop_checks=checks_answering("fail 1", "fail 2", "fail 3", "fail 4"),
    )
    events = await run(params)

    assert loop_events(events) == [
        ("request", 1),
        *[Continue.STOP_HOOK_BLOCKING, ("request", 1)] * 3,
        Terminal.DONE_CHECK_FAILED,
    ]
    end = finished(events)
    assert end.message.endswith("Its last report: fail 4")
    assert end.result_text == ""


async def test_an_interrupt_while_checking_ends_the_run_cleanly(tmp_path: Path) -> None:
    abort = AbortSignal()

    async def check() -> str | None:
        abort.abort()
        await asyncio.Event().wait()  # a check that would never end on its own
        return None

    model = ScriptedProvider([text("Done!")])
    params = replace(make_params(model, [Echo()], tmp_path, abort=abort), stop_checks=(check,))
    events = await run(params)

    assert loop_events(events) == [("request", 1), Terminal.ABORTED_TOOLS]
    assert "checking whether the work is done" in finished(events).message


async def test_a_run_that_passes_its_budget_ends_after_the_round_that_did_it(
    tmp_path: Path,
) -> None:
    # At Sonnet's list prices each scripted call (100 in, 20 out) costs $0.0006.
    calls = [tool_call("Echo", {"text": str(n)}, id=f"toolu_{n}") for n in range(2)]
    model = ScriptedProvider(calls)
    params = replace(
        make_params(model, [Echo()], tmp_path), model="claude-sonnet-4-5", max_budget_usd=0.001
    )
    events = await run(params)

    end = finished(events)
    assert (end.terminal, end.message) == (
        Terminal.BUDGET_EXHAUSTED,
        "Reached maximum budget ($0.001)",
    )
    assert len(model.requests) == 2
    assert end.cost_usd >= 0.001


async def test_recoveries_stop_at_the_budget_too(tmp_path: Path) -> None:
    model = ScriptedProvider([text("cut", stop_reason=CUT)] * 2)
    params = replace(
        make_params(model, [Echo()], tmp_path), model="claude-sonnet-4-5", max_budget_usd=0.001
    )
    events = await run(params)

    assert loop_events(events) == [
        ("request", 1),
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        ("request", 1),
        Terminal.BUDGET_EXHAUSTED,
    ]


async def test_the_same_call_failing_the_same_way_gets_a_nudge_then_ends_the_run(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([tool_call("Refuse", {}, id=f"toolu_{n}") for n in range(5)])
    events = await run(make_params(model, [Refuse()], tmp_path))

    reasons = [e.reason for e in events if isinstance(e, Continuing)]
    assert reasons == [
        Continue.NEXT_TURN,
        Continue.NEXT_TURN,
        Continue.REPEATED_FAILURE_NUDGE,
        Continue.NEXT_TURN,
    ]
    third_results = model.requests[3].messages[-1]
    assert isinstance(third_results, UserMessage)
    assert third_results.content[-1] == TextBlock(REPEAT_TEXT)
    end = finished(events)
    assert end.terminal is Terminal.REPEATED_FAILURE
    assert "failed the same way 5 times in a row" in end.message


async def test_progress_between_failures_resets_the_count(tmp_path: Path) -> None:
    fail = [tool_call("Refuse", {}, id=f"toolu_f{n}") for n in range(8)]
    steps = [*fail[:2], tool_call("Echo", {"text": "ok"}), *fail[2:4], text("stuck, giving up")]
    model = ScriptedProvider(steps)
    events = await run(make_params(model, [Refuse(), Echo()], tmp_path))

    assert finished(events).terminal is Terminal.COMPLETED
    assert Continuing(Continue.REPEATED_FAILURE_NUDGE) not in events


async def test_a_stop_below_the_token_budget_is_continued_until_returns_diminish(
    tmp_path: Path,
) -> None:
    # Each scripted reply produces 20 output tokens: far below the budget, always.
    model = ScriptedProvider([text(f"step {n}") for n in range(1, 5)])
    params = replace(make_params(model, [Echo()], tmp_path), token_budget=100_000)
    events = await run(params)

    # After three continuations, each adding 20 tokens, the model has nothing more to give.
    assert loop_events(events) == [
        ("request", 1),
        *[Continue.TOKEN_BUDGET_CONTINUATION, ("request", 1)] * 3,
        Terminal.COMPLETED,
    ]
    nudge = model.requests[1].messages[-1]
    assert isinstance(nudge, UserMessage)
    last = nudge.content[-1]
    assert isinstance(last, TextBlock)
    assert last.text.startswith("[You stopped at 0% of the token budget (20 of 100,000")
    assert finished(events).result_text == "step 4"


async def test_a_run_past_ninety_percent_of_its_budget_completes(tmp_path: Path) -> None:
    model = ScriptedProvider([text("all of it")])
    params = replace(make_params(model, [Echo()], tmp_path), token_budget=20)
    events = await run(params)
    assert loop_events(events) == [("request", 1), Terminal.COMPLETED]


async def test_a_cut_reply_with_a_cut_call_asked_again_larger_is_never_shown(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([cut_call('{"text": "a lo'), text("Done.")])
    params = replace(make_params(model, [Echo()], tmp_path), escalated_max_tokens=64_000)
    events = await run(params)

    assert loop_events(events)[:3] == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
    ]
    shown = [e.message.id for e in events if isinstance(e, MessageCompleted)]
    assert shown == ["msg_scripted_2"]


async def test_calls_cut_at_different_points_are_not_the_same_failure(tmp_path: Path) -> None:
    # Their results are all the one cut-call text and their inputs all empty: only what the
    # model wrote tells them apart.
    raws = ['{"text": "a', '{"text": "ab', '{"text": "abc']
    cuts = [cut_call(raw, id=f"toolu_{n}") for n, raw in enumerate(raws)]
    model = ScriptedProvider([*cuts, text("done")])
    params = replace(make_params(model, [Echo()], tmp_path), repeat_nudge_after=2)
    events = await run(params)

    assert Continuing(Continue.REPEATED_FAILURE_NUDGE) not in events
    assert finished(events).terminal is Terminal.COMPLETED
