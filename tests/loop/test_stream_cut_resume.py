"""A stream that a server error cuts after some text keeps the text, and the model goes on from
the cut (`truncated_response_recovery`); a cut before any text worth keeping, or after a whole
tool call that never started, is withdrawn and asked again whole, as before. Resumes are bounded
per model call."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from msgspec.structs import replace

from stayer.errors import ConnectionLost, Overloaded, ServerError
from stayer.events import (
    Continue,
    Continuing,
    Event,
    Finished,
    MessageCompleted,
    ModelSwitched,
    PartialKept,
    RequestStarted,
    Retrying,
    Terminal,
    ToolCallFinished,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.loop.run import query
from stayer.loop.state import FallbackModel, RetryPolicy
from stayer.loop.stream_cut import MIN_OPEN_TEXT_CHARS, STREAM_CUT_TEXT
from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from stayer.providers.scripted import Cut, Fault, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import assert_valid_history, finished, make_params, run
from tests.fakes.tools import Echo

SAID = (
    "The migration touches three modules. First, the loader reads the old format and "
    "converts each record"
)
assert len(SAID) >= MIN_OPEN_TEXT_CHARS
REST = " before the writer sees it."
NOTE = UserMessage((TextBlock(STREAM_CUT_TEXT),))
SERVER_ERROR = ServerError("server error (500)", status=500)
OVERLOADED = Overloaded("overloaded_error during the stream", status=529)


def loop_events(events: Sequence[Event]) -> list[object]:
    """The loop's own events, in order, reduced to what the tests compare."""
    shown: list[object] = []
    for event in events:
        match event:
            case RequestStarted(turn=turn):
                shown.append(("request", turn))
            case PartialKept(message=message, reason=reason):
                shown.append(("kept", message.id, message.text, reason))
            case Withdrawn(message_id=message_id):
                shown.append(("withdrawn", message_id))
            case Retrying(attempt=attempt, max_retries=limit, status=status):
                shown.append(("retrying", attempt, limit, status))
            case Continuing(reason=reason):
                shown.append(reason)
            case ModelSwitched(to_model=model):
                shown.append(("switched", model))
            case ToolCallFinished(name=name, status=status):
                shown.append(("ran", name, status))
            case Finished(terminal=terminal):
                shown.append(terminal)
            case _:
                pass
    return shown


def kept(said: str, number: int, *blocks: TextBlock) -> AssistantMessage:
    """The partial answer of call `number` as the conversation keeps it."""
    return AssistantMessage(
        blocks or (TextBlock(said),),
        id=f"msg_scripted_{number}",
        model="scripted",
        usage=Usage(input_tokens=100),
    )


def without_usage(messages: Sequence[Message]) -> list[Message]:
    """The conversation with each answer's usage blanked (what a scripted reply bills)."""
    return [
        replace(message, usage=Usage()) if isinstance(message, AssistantMessage) else message
        for message in messages
    ]


async def test_text_cut_by_a_server_error_is_kept_and_the_model_goes_on_from_the_cut(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([Cut(SERVER_ERROR, open=TextBlock(SAID)), text(REST)])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("kept", "msg_scripted_1", SAID, "server error (500)"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", 1, 10, 500),
        Terminal.COMPLETED,
    ]
    first, second = model.requests
    assert second.messages == (*first.messages, kept(SAID, 1), NOTE)
    end = finished(events)
    assert without_usage(end.messages) == [
        UserMessage.of_text("go"),
        replace(kept(SAID, 1), usage=Usage()),
        NOTE,
        AssistantMessage(
            (TextBlock(REST),), id="msg_scripted_2", model="scripted", stop_reason="end_turn"
        ),
    ]
    assert (end.result_text, end.message) == (SAID + REST, SAID + REST)
    assert end.usage == Usage(input_tokens=200, output_tokens=20)  # the cut attempt is billed


async def test_only_visible_text_is_kept_never_thinking_or_a_call_cut_in_its_input(
    tmp_path: Path,
) -> None:
    blocks = (ThinkingBlock("Plan the reply.", "sig"), TextBlock("Let me look."))
    half_call = ToolUseBlock("toolu_cut", "Echo", {"text": "never sent whole"})
    model = ScriptedProvider(
        [
            Cut(OVERLOADED, blocks=blocks, open=half_call),
            tool_call("Echo", {"text": "hi"}, id="toolu_whole"),
            text("Echoed."),
        ]
    )
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("kept", "msg_scripted_1", "Let me look.", "overloaded_error during the stream"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", 1, 10, 529),
        ("ran", "Echo", "completed"),
        Continue.NEXT_TURN,
        ("request", 2),
        Terminal.COMPLETED,
    ]
    assert model.requests[1].messages[1:] == (kept("", 1, TextBlock("Let me look.")), NOTE)
    ran = [e.result.text for e in events if isinstance(e, ToolCallFinished)]
    assert ran == ["hi"]
    assert finished(events).result_text == "Echoed."


async def test_a_cut_before_enough_text_is_withdrawn_and_asked_again_whole(
    tmp_path: Path,
) -> None:
    short = TextBlock("The migration")
    thinking = ThinkingBlock("Plan the reply at length.", "sig")
    model = ScriptedProvider(
        [
            Cut(SERVER_ERROR, open=short),
            Cut(ConnectionLost("the connection was cut"), blocks=(thinking,), open=short),
            text("The whole answer."),
        ]
    )
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        ("retrying", 1, 10, 500),
        ("withdrawn", "msg_scripted_2"),
        ("retrying", 2, 10, None),
        Terminal.COMPLETED,
    ]
    first, second, third = model.requests
    assert first.messages == second.messages == third.messages
    end = finished(events)
    assert [m.role for m in end.messages] == ["user", "assistant"]
    assert end.result_text == "The whole answer."


async def test_an_answer_with_a_whole_tool_call_that_never_started_is_asked_again_whole(
    tmp_path: Path,
) -> None:
    # Its input is invalid, so it waits for the end of the answer (tests/loop/
    # test_streaming_executor.py has the answer whose call did start).
    call = ToolUseBlock("toolu_early", "Echo", {"wrong": "not from a broken answer"})
    model = ScriptedProvider(
        [Cut(SERVER_ERROR, blocks=(TextBlock(SAID), call)), text("The whole answer.")]
    )
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("withdrawn", "msg_scripted_1"),
        ("retrying", 1, 10, 500),
        Terminal.COMPLETED,
    ]
    assert model.requests[0].messages == model.requests[1].messages
    assert finished(events).result_text == "The whole answer."


async def test_at_most_three_resumes_per_call_then_the_cut_answer_is_asked_again_whole(
    tmp_path: Path,
) -> None:
    parts = [f"Part {n}: {SAID}. " for n in range(1, 5)]
    model = ScriptedProvider([*[Cut(SERVER_ERROR, open=TextBlock(p)) for p in parts], text("End.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        *[event for n in (1, 2, 3) for event in resumed_at(n, parts)],
        ("withdrawn", "msg_scripted_4"),
        ("retrying", 4, 10, 500),
        Terminal.COMPLETED,
    ]
    fourth, fifth = model.requests[3:]
    assert fourth.messages == fifth.messages  # the fourth cut is sent again as it was
    assert fifth.messages[1:] == (
        kept(parts[0], 1),
        NOTE,
        kept(parts[1], 2),
        NOTE,
        kept(parts[2], 3),
        NOTE,
    )
    assert finished(events).result_text == parts[0] + parts[1] + parts[2] + "End."


def resumed_at(n: int, parts: list[str]) -> list[object]:
    """The events of the `n`-th resume, of `parts[n - 1]`."""
    return [
        ("kept", f"msg_scripted_{n}", parts[n - 1], "server error (500)"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", n, 10, 500),
    ]


async def test_every_model_call_may_resume_again_after_a_tool_round(tmp_path: Path) -> None:
    cut = Cut(SERVER_ERROR, open=TextBlock(SAID))
    model = ScriptedProvider([cut, cut, cut, tool_call("Echo", {"text": "x"}), cut, text(REST)])
    events = await run(make_params(model, [Echo()], tmp_path))

    reasons = [e.reason for e in events if isinstance(e, Continuing)]
    assert reasons == [*[Continue.TRUNCATED_RESPONSE_RECOVERY] * 3, Continue.NEXT_TURN, reasons[0]]
    kept_ids = [e.message.id for e in events if isinstance(e, PartialKept)]
    assert kept_ids == [f"msg_scripted_{n}" for n in (1, 2, 3)] + ["msg_scripted_5"]
    assert not [e for e in events if isinstance(e, Withdrawn)]
    assert finished(events).result_text == SAID + REST


async def test_resumes_count_against_the_retry_limit(tmp_path: Path) -> None:
    cut = Cut(SERVER_ERROR, open=TextBlock(SAID))
    model = ScriptedProvider([cut, cut, cut])
    retry = RetryPolicy(max_retries=2, base_delay_s=0.0)
    events = await run(make_params(model, [Echo()], tmp_path, retry=retry))

    assert loop_events(events) == [
        ("request", 1),
        ("kept", "msg_scripted_1", SAID, "server error (500)"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", 1, 2, 500),
        ("kept", "msg_scripted_2", SAID, "server error (500)"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", 2, 2, 500),
        Terminal.MODEL_ERROR,
    ]
    end = finished(events)
    assert (end.message, end.error_status) == ("server error (500)", 500)
    # What the last request carried stays: the text a person has read, and its notes.
    assert end.messages[1:] == (kept(SAID, 1), NOTE, kept(SAID, 2), NOTE)


async def test_the_switch_to_a_fallback_model_withdraws_and_takes_the_kept_text_along(
    tmp_path: Path,
) -> None:
    busy = Fault(Overloaded("overloaded (529)", status=529))
    main = ScriptedProvider(
        [Cut(OVERLOADED, open=TextBlock(SAID)), busy, Cut(OVERLOADED, open=TextBlock(SAID))]
    )
    backup = ScriptedProvider([text(REST)], model="backup")
    chain = (
        FallbackModel(provider=backup, model="backup", max_tokens=8_000, max_output_tokens=8_000),
    )
    params = replace(
        make_params(main, [Echo()], tmp_path, retry=RetryPolicy(base_delay_s=0.0)),
        model="main",
        fallbacks=chain,
    )
    events = await run(params)

    assert loop_events(events) == [
        ("request", 1),
        ("kept", "msg_scripted_1", SAID, "overloaded_error during the stream"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("retrying", 1, 10, 529),
        ("retrying", 2, 10, 529),
        ("withdrawn", "msg_scripted_3"),
        ("switched", "backup"),
        Terminal.COMPLETED,
    ]
    (asked,) = backup.requests
    assert asked.messages[1:] == (kept(SAID, 1), NOTE)
    assert finished(events).result_text == SAID + REST


async def test_an_interrupt_while_waiting_to_resume_leaves_a_valid_conversation(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([Cut(SERVER_ERROR, open=TextBlock(SAID))])
    params = make_params(model, [Echo()], tmp_path, retry=RetryPolicy(base_delay_s=30.0))
    events: list[Event] = []
    async with asyncio.timeout(10):
        async for event in query(params, (UserMessage.of_text("go"),)):
            events.append(event)
            if isinstance(event, Retrying):
                params.abort.abort()

    end = finished(events)
    assert end.terminal is Terminal.ABORTED_STREAMING
    assert_valid_history(end.messages)
    (results,) = [e for e in events if isinstance(e, ToolResultsAppended)]
    assert end.messages[1:] == (
        kept(SAID, 1),
        UserMessage((TextBlock(STREAM_CUT_TEXT), TextBlock("[Request interrupted by user]"))),
    )
    assert results.message == UserMessage((TextBlock("[Request interrupted by user]"),))


async def test_a_summary_cut_after_text_is_asked_again_whole(tmp_path: Path) -> None:
    """The summariser's caller reads only the final message, so a half summary is never kept."""
    from stayer.errors import PromptTooLong

    too_long = PromptTooLong("prompt is too long: 210000 tokens > 200000 maximum")
    model = ScriptedProvider(
        [
            Fault(too_long),
            Cut(SERVER_ERROR, open=TextBlock("NOTES: " + SAID)),
            text("NOTES: the whole summary."),
            text("done"),
        ]
    )
    events = await run(make_params(model, [Echo()], tmp_path))

    assert loop_events(events) == [
        ("request", 1),
        ("retrying", 1, 10, 500),  # the summary's stream events are not shown, only the wait
        Continue.REACTIVE_COMPACT_RETRY,
        ("request", 1),
        Terminal.COMPLETED,
    ]
    cut_summary, whole_summary, after = model.requests[1:]
    assert cut_summary.messages == whole_summary.messages
    (resumed,) = after.messages
    assert isinstance(resumed, UserMessage)
    assert resumed.content[0].text.endswith("NOTES: the whole summary.")  # type: ignore[union-attr]
    assert finished(events).result_text == "done"


async def test_a_cut_right_at_the_end_of_an_answer_completes_with_what_was_kept(
    tmp_path: Path,
) -> None:
    # The answer was whole when the stream broke: the model has nothing to add to it.
    model = ScriptedProvider([Cut(SERVER_ERROR, blocks=(TextBlock(SAID + REST),)), text("")])
    events = await run(make_params(model, [Echo()], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.COMPLETED
    assert end.result_text == SAID + REST
    assert without_usage(end.messages) == [
        UserMessage.of_text("go"),
        replace(kept(SAID + REST, 1), usage=Usage()),
    ]
    completed = [e.message.id for e in events if isinstance(e, MessageCompleted)]
    assert completed == []  # the empty reply is never shown: the conversation does not hold it
