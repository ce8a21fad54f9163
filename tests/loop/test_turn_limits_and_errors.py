"""Max turns, model errors, retries, permissions and interruption: every run ends once, cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from stayer.errors import AuthenticationFailed, Overloaded, RateLimited, ScriptError
from stayer.events import (
    Event,
    Finished,
    MessageCompleted,
    PermissionDenial,
    Retrying,
    StreamEvent,
    Terminal,
    TextDelta,
    ToolCallFinished,
    ToolResultsAppended,
    Withdrawn,
)
from stayer.loop.abort import AbortSignal
from stayer.loop.run import query
from stayer.loop.state import ToolCall
from stayer.messages import TextBlock, ToolResultBlock, Usage, UserMessage
from stayer.permissions import Decision
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Fault, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo, Sleep


async def test_max_turns_stops_after_the_last_allowed_tool_round(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Echo", {"text": str(i)}, id=f"t{i}") for i in (1, 2)])
    events = await run(make_params(model, [Echo()], tmp_path, max_turns=2))

    end = finished(events)
    assert end.terminal is Terminal.MAX_TURNS
    assert end.message == "Reached maximum number of turns (2)"
    assert end.num_turns == 2
    assert end.is_error
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 2
    model.assert_done()


async def test_retryable_errors_are_retried_and_announced(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            Fault(Overloaded("overloaded (529)", status=529)),
            Fault(RateLimited("rate limited (429)", retry_after=0.0)),
            text("finally"),
        ]
    )
    events = await run(make_params(model, [], tmp_path))

    retries = [e for e in events if isinstance(e, Retrying)]
    assert [(r.attempt, r.status) for r in retries] == [(1, 529), (2, 429)]
    assert retries[1].delay_s == 0.0
    assert finished(events).terminal is Terminal.COMPLETED
    assert finished(events).result_text == "finally"


async def test_a_cut_stream_withdraws_its_partial_answer_before_the_retry(tmp_path: Path) -> None:
    cut = Fault(Overloaded("stream cut"), after_blocks=1)
    model = ScriptedProvider(
        [
            lambda _req: cut,
            text("the whole answer"),
        ]
    )
    events = await run(make_params(model, [], tmp_path))

    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Withdrawn") < kinds.index("Retrying")
    assert next(e for e in events if isinstance(e, Withdrawn)).message_id == "msg_scripted_1"
    assert finished(events).result_text == "the whole answer"
    # The abandoned attempt was billed too: its input counts beside the one that completed.
    assert finished(events).usage == Usage(input_tokens=200, output_tokens=40)


async def test_non_retryable_error_ends_with_model_error(tmp_path: Path) -> None:
    model = ScriptedProvider([Fault(AuthenticationFailed("key refused (401)", status=401))])
    events = await run(make_params(model, [], tmp_path))

    end = finished(events)
    assert (end.terminal, end.message, end.error_status) == (
        Terminal.MODEL_ERROR,
        "key refused (401)",
        401,
    )
    assert not [e for e in events if isinstance(e, Retrying)]


async def test_exhausted_retries_end_with_model_error(tmp_path: Path) -> None:
    from stayer.loop.state import RetryPolicy

    model = ScriptedProvider([Fault(Overloaded("busy", status=529))] * 3)
    params = make_params(model, [], tmp_path, retry=RetryPolicy(max_retries=2, base_delay_s=0))
    events = await run(params)

    assert finished(events).terminal is Terminal.MODEL_ERROR
    assert len([e for e in events if isinstance(e, Retrying)]) == 2
    model.assert_done()


async def test_an_extra_call_to_the_scripted_model_fails_loudly(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Echo", {"text": "x"})])
    events = await run(make_params(model, [Echo()], tmp_path), strict=False)

    end = finished(events)
    assert end.terminal is Terminal.MODEL_ERROR
    assert "unexpected call #2" in end.message


def test_unused_script_steps_fail_loudly() -> None:
    model = ScriptedProvider([text("a"), text("b")])
    try:
        model.assert_done()
    except ScriptError as exc:
        assert "2 of 2 steps were never used" in str(exc)
    else:
        raise AssertionError("assert_done accepted unused steps")


async def test_a_denied_call_is_reported_and_the_loop_goes_on(tmp_path: Path) -> None:
    async def deny_echo(call: ToolCall) -> Decision:
        return Decision("deny", f"Permission to use {call.tool.name} has been denied.")

    model = ScriptedProvider([tool_call("Echo", {"text": "x"}, id="t1"), text("understood")])
    events = await run(make_params(model, [Echo()], tmp_path, can_use_tool=deny_echo))

    (result,) = results_in(model.requests[1].messages[-1])
    assert result == ToolResultBlock(
        "t1", (TextBlock("Permission to use Echo has been denied."),), is_error=True
    )
    end = finished(events)
    assert end.terminal is Terminal.COMPLETED
    assert end.permission_denials == (PermissionDenial("Echo", "t1", {"text": "x"}),)


async def test_interrupting_a_running_tool_ends_with_aborted_tools(tmp_path: Path) -> None:
    sleeper = Sleep()
    abort = AbortSignal()
    model = ScriptedProvider([tool_call("Sleep", {"text": "30"}, id="t1")])
    params = make_params(model, [sleeper], tmp_path, abort=abort)

    async def interrupt() -> None:
        await sleeper.started.wait()
        abort.abort()

    task = asyncio.create_task(interrupt())
    events = await run(params)
    await task

    end = finished(events)
    assert end.terminal is Terminal.ABORTED_TOOLS
    assert not sleeper.finished
    last = end.messages[-1]
    assert isinstance(last, UserMessage)
    (result,) = results_in(last)
    assert result.is_error and "interrupted" in result.text
    assert last.content[-1] == TextBlock("[Request interrupted by user for tool use]")


async def test_interrupting_while_the_model_streams_ends_with_aborted_streaming(
    tmp_path: Path,
) -> None:
    abort = AbortSignal()
    model = ScriptedProvider([text("a long answer " * 50)], chunk_delay_s=0.01)
    params = make_params(model, [], tmp_path, abort=abort)
    events: list[Event] = []
    async for event in query(params, (UserMessage.of_text("go"),)):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) > 5:
            abort.abort()

    end = events[-1]
    assert isinstance(end, Finished)
    assert end.terminal is Terminal.ABORTED_STREAMING
    assert len([e for e in events if isinstance(e, Finished)]) == 1
    # Nothing complete streamed, so the marker joins the prompt: roles keep alternating.
    assert end.messages[-1] == UserMessage(
        (TextBlock("go"), TextBlock("[Request interrupted by user]"))
    )


async def test_interrupting_before_the_tools_of_a_complete_answer_closes_them(
    tmp_path: Path,
) -> None:
    abort = AbortSignal()
    model = ScriptedProvider([tool_call("Echo", {"text": "x"}, id="t1")])
    params = make_params(model, [Echo()], tmp_path, abort=abort)
    events: list[Event] = []
    async for event in query(params, (UserMessage.of_text("go"),)):
        events.append(event)
        if isinstance(event, MessageCompleted):
            abort.abort()

    end = events[-1]
    assert isinstance(end, Finished) and end.terminal is Terminal.ABORTED_STREAMING
    closed = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.tool_use_id, e.status) for e in closed] == [("t1", "failed")]
    appended = [e for e in events if isinstance(e, ToolResultsAppended)]
    assert len(appended) == 1 and appended[0].message == end.messages[-1]
    assert [type(b).__name__ for b in end.messages[-1].content] == ["ToolResultBlock", "TextBlock"]


async def test_deltas_reach_the_caller_before_the_response_completes(tmp_path: Path) -> None:
    """A model that will not finish until the caller has seen its first words."""
    seen_first_words = asyncio.Event()

    class Waiting:
        name = "waiting"

        async def aclose(self) -> None:
            return None

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            inner = ScriptedProvider([text("first words, then the rest")])
            async for event in inner.stream(request):
                yield event
                if isinstance(event, TextDelta):
                    await asyncio.wait_for(seen_first_words.wait(), 5)

    params = make_params(Waiting(), [], tmp_path)
    async for event in query(params, (UserMessage.of_text("go"),)):
        if isinstance(event, TextDelta):
            seen_first_words.set()
        if isinstance(event, Finished):
            assert event.terminal is Terminal.COMPLETED


async def test_prompt_too_long_ends_with_its_own_terminal_reason(tmp_path: Path) -> None:
    from stayer.errors import PromptTooLong

    too_long = PromptTooLong("prompt is too long: 210000 tokens > 200000 maximum", tokens=210000)
    # Nothing to clear, and the summary (tests/loop/test_compaction.py) is refused as well.
    model = ScriptedProvider([Fault(too_long), Fault(too_long)])
    events = await run(make_params(model, [], tmp_path))

    end = finished(events)
    assert (end.terminal, end.error_status) == (Terminal.PROMPT_TOO_LONG, 400)
    assert end.message == "Prompt is too long: prompt is too long: 210000 tokens > 200000 maximum"


async def test_a_bug_in_the_model_client_still_ends_the_run_once(tmp_path: Path) -> None:
    class Broken:
        name = "broken"

        async def aclose(self) -> None:
            return None

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            nothing: list[StreamEvent] = []
            for event in nothing:  # an async generator that fails before its first event
                yield event
            raise KeyError("choices")

    events = await run(make_params(Broken(), [], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.MODEL_ERROR
    assert end.message == "internal error in the model call: KeyError: 'choices'"
