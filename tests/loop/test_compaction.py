"""SPEC §3.1 and §3.6: a history that no longer fits is shrunk inside the run, cheapest way
first, and the run ends only when nothing could shrink it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from msgspec.structs import replace

from stayer.context.compact import CLEARED_PREFIX, SUMMARY_INTRO, SUMMARY_SYSTEM
from stayer.errors import InvalidRequest, PromptTooLong
from stayer.events import (
    Compacted,
    Continue,
    Continuing,
    Event,
    MessageCompleted,
    RequestStarted,
    Terminal,
)
from stayer.loop.state import CompactPolicy
from stayer.messages import AssistantMessage, TextBlock, ToolUseBlock, Usage, UserMessage
from stayer.providers.scripted import Fault, Reply, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo
from tests.loop.test_recovery import loop_events

TOO_LONG = PromptTooLong("prompt is too long: 210000 tokens > 200000 maximum", tokens=210_000)


def compactions(events: Sequence[Event]) -> list[tuple[str, str]]:
    return [(e.trigger, e.method) for e in events if isinstance(e, Compacted)]


def big_call(n: int, *, input_tokens: int = 100) -> Reply:
    block = ToolUseBlock(f"toolu_{n}", "Echo", {"text": f"output {n} " + "x" * 2_000})
    return Reply((block,), usage=Usage(input_tokens=input_tokens, output_tokens=20))


async def test_a_too_long_prompt_first_loses_old_tool_output(tmp_path: Path) -> None:
    model = ScriptedProvider([*[big_call(n) for n in range(5)], Fault(TOO_LONG), text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert compactions(events) == [("reactive", "cleared_tool_results")]
    assert Continuing(Continue.COLLAPSE_DRAIN_RETRY) in events
    assert finished(events).terminal is Terminal.COMPLETED
    retried = model.requests[6].messages
    texts = [r.text for m in retried if isinstance(m, UserMessage) for r in results_in(m)]
    assert [t.startswith(CLEARED_PREFIX) for t in texts] == [True, True, False, False, False]
    assert model.requests[6].messages[-1] == model.requests[5].messages[-1]


async def test_tool_output_shorter_than_its_marker_is_not_cleared(tmp_path: Path) -> None:
    """Clearing it would make the prompt longer: the history is summarised at once instead."""
    calls = [tool_call("Echo", {"text": f"ok {n}"}) for n in range(5)]
    model = ScriptedProvider([*calls, Fault(TOO_LONG), text("NOTES"), text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert compactions(events) == [("reactive", "summary")]
    assert Continuing(Continue.COLLAPSE_DRAIN_RETRY) not in events
    assert finished(events).terminal is Terminal.COMPLETED


async def test_then_the_history_is_summarised_and_the_run_goes_on(tmp_path: Path) -> None:
    model = ScriptedProvider([Fault(TOO_LONG), text("NOTES: the user wants X."), text("done")])
    events = await run(make_params(model, [Echo()], tmp_path), "please do X")

    assert loop_events(events) == [
        ("request", 1),
        Continue.REACTIVE_COMPACT_RETRY,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    assert compactions(events) == [("reactive", "summary")]
    summary_call, after = model.requests[1], model.requests[2]
    assert (summary_call.purpose, summary_call.tools, summary_call.system) == (
        "compact",
        (),
        SUMMARY_SYSTEM,
    )
    assert "User: please do X" in summary_call.messages[0].content[0].text  # type: ignore[union-attr]
    assert after.messages == (
        UserMessage((TextBlock(SUMMARY_INTRO + "NOTES: the user wants X."),)),
    )
    assert finished(events).usage.output_tokens == 40  # the summary's tokens count too


async def test_when_nothing_shrinks_it_enough_the_run_ends_as_prompt_too_long(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([Fault(TOO_LONG), text("NOTES"), Fault(TOO_LONG)])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert (end.terminal, end.error_status) == (Terminal.PROMPT_TOO_LONG, 400)
    assert "210000 tokens > 200000" in end.message
    assert compactions(events) == [("reactive", "summary")]


async def test_after_more_work_a_too_long_prompt_is_summarised_again(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            Fault(TOO_LONG),
            text("NOTES 1"),
            tool_call("Echo", {"text": "a"}),
            Fault(TOO_LONG),
            text("NOTES 2"),
            text("done"),
        ]
    )
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        Continue.REACTIVE_COMPACT_RETRY,
        ("request", 1),
        ("started", "Echo"),
        ("finished", "Echo", "completed"),
        "results",
        Continue.NEXT_TURN,
        ("request", 2),
        Continue.REACTIVE_COMPACT_RETRY,
        ("request", 2),
        Terminal.COMPLETED,
    ]
    assert compactions(events) == [("reactive", "summary")] * 2


async def test_after_more_work_old_tool_output_is_cleared_again(tmp_path: Path) -> None:
    first = [big_call(n) for n in range(5)]
    model = ScriptedProvider([*first, Fault(TOO_LONG), big_call(5), Fault(TOO_LONG), text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert compactions(events) == [("reactive", "cleared_tool_results")] * 2
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_failed_summary_ends_as_prompt_too_long_not_a_crash(tmp_path: Path) -> None:
    model = ScriptedProvider([Fault(TOO_LONG), Fault(InvalidRequest("no"))])
    events = await run(make_params(model, [Echo()], tmp_path))
    assert finished(events).terminal is Terminal.PROMPT_TOO_LONG


async def test_a_long_tool_loop_compacts_before_the_call_that_would_not_fit(
    tmp_path: Path,
) -> None:
    # A 40k window with 1k of output: the threshold is 40k - 1k - 13k = 26k tokens.
    model = ScriptedProvider([big_call(1, input_tokens=30_000), text("NOTES"), text("done")])
    params = replace(
        make_params(model, [Echo()], tmp_path), context_window=40_000, max_tokens=1_000
    )
    events = await run(params)

    assert compactions(events) == [("auto", "summary")]
    turns = [e.turn for e in events if isinstance(e, RequestStarted)]
    assert turns == [1, 2]  # no wasted call: the summary is not a turn, the next call goes on
    assert not [
        e for e in events if isinstance(e, Continuing) and e.reason is not Continue.NEXT_TURN
    ]
    after = model.requests[2].messages
    assert after[0] == UserMessage((TextBlock(SUMMARY_INTRO + "NOTES"),))
    assert [type(m).__name__ for m in after] == ["UserMessage", "AssistantMessage", "UserMessage"]
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_history_that_cannot_be_compacted_ends_at_the_blocking_limit(
    tmp_path: Path,
) -> None:
    failing = Fault(InvalidRequest("summary refused"))
    steps = [step for n in range(3) for step in (big_call(n, input_tokens=38_000), failing)]
    model = ScriptedProvider(steps)
    params = replace(
        make_params(model, [Echo()], tmp_path), context_window=40_000, max_tokens=1_000
    )
    events = await run(params)

    end = finished(events)
    assert end.terminal is Terminal.BLOCKING_LIMIT
    assert "summarising it failed 3 times" in end.message
    assert compactions(events) == []
    assert sum(1 for r in model.requests if r.purpose == "compact") == 3


async def test_autocompact_can_be_turned_off(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [big_call(1, input_tokens=30_000), tool_call("Echo", {"text": "a"}), text("done")]
    )
    params = replace(
        make_params(model, [Echo()], tmp_path),
        context_window=40_000,
        max_tokens=1_000,
        compaction=CompactPolicy(auto=False),
    )
    events = await run(params)
    assert compactions(events) == []
    assert all(r.purpose == "main" for r in model.requests)


async def test_a_huge_first_request_is_not_summarised_before_the_model_sees_it(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("read it all")])
    params = replace(
        make_params(model, [Echo()], tmp_path), context_window=40_000, max_tokens=1_000
    )
    events = await run(params, "x" * 120_000)  # about 30k tokens, past the 26k threshold

    assert compactions(events) == []
    assert [r.purpose for r in model.requests] == ["main"]


async def test_with_compaction_off_a_too_long_prompt_is_not_summarised(tmp_path: Path) -> None:
    model = ScriptedProvider([Fault(TOO_LONG)])
    params = replace(
        make_params(model, [Echo()], tmp_path),
        compaction=CompactPolicy(auto=False, reactive=False),
    )
    events = await run(params)
    assert finished(events).terminal is Terminal.PROMPT_TOO_LONG
    assert [r.purpose for r in model.requests] == ["main"]


async def test_an_answer_the_window_cut_off_is_dropped_and_the_history_shrunk(
    tmp_path: Path,
) -> None:
    # The call's input is invalid, so it never starts while the answer streams (one that
    # did start: tests/loop/test_streaming_executor.py).
    window_cut = Reply(
        (TextBlock("I will now"), ToolUseBlock("toolu_never", "Echo", {"txt": "never run"})),
        stop_reason="model_context_window_exceeded",
    )
    model = ScriptedProvider([*[big_call(n) for n in range(5)], window_cut, text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events)[-5:] == [
        ("request", 6),
        ("withdrawn", "msg_scripted_6"),
        Continue.COLLAPSE_DRAIN_RETRY,
        ("request", 6),
        Terminal.COMPLETED,
    ]
    assert compactions(events) == [("reactive", "cleared_tool_results")]
    assert model.requests[6].messages[-1] == model.requests[5].messages[-1]  # asked again
    assert "toolu_never" not in str(finished(events).messages)


async def test_a_window_cut_nothing_can_shrink_ends_keeping_what_was_written(
    tmp_path: Path,
) -> None:
    call = ToolUseBlock("toolu_never", "Echo", {"txt": "never run"})  # invalid: never starts
    cut = Reply((TextBlock("Half an answer"), call), stop_reason="model_context_window_exceeded")
    model = ScriptedProvider([cut, text("NOTES"), cut])
    events = await run(make_params(model, [Echo()], tmp_path))  # checks the history is valid

    end = finished(events)
    assert end.terminal is Terminal.PROMPT_TOO_LONG
    assert end.message.startswith(
        "Prompt is too long: the model ran into the end of its context window while answering"
    )
    assert compactions(events) == [("reactive", "summary")]
    last = end.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.content == (TextBlock("Half an answer"),)  # its call never ran: it is not kept
    shown = [e.message for e in events if isinstance(e, MessageCompleted)]
    assert shown == [last]  # what is printed is what the conversation holds


async def test_a_summary_that_comes_back_empty_is_still_paid_for(tmp_path: Path) -> None:
    empty_summary = Reply((TextBlock(""),), usage=Usage(input_tokens=30_000, output_tokens=5))
    model = ScriptedProvider([Fault(TOO_LONG), empty_summary])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.PROMPT_TOO_LONG
    assert (end.usage.input_tokens, end.usage.output_tokens) == (30_000, 5)


async def test_a_declined_summary_is_no_summary(tmp_path: Path) -> None:
    declined = Reply(
        (TextBlock("I can't summarise this."),),
        stop_reason="refusal",
        usage=Usage(input_tokens=30_000, output_tokens=7),
    )
    model = ScriptedProvider([Fault(TOO_LONG), declined])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.PROMPT_TOO_LONG
    assert compactions(events) == []
    assert all("I can't summarise" not in str(m) for m in end.messages)
    assert (end.usage.input_tokens, end.usage.output_tokens) == (30_000, 7)
