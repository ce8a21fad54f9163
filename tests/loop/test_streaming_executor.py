"""Tool calls start while the answer still streams, and an answer whose calls started is never
withdrawn: it is kept up to its last started call, what ran is reported, and nothing runs twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from msgspec.structs import replace

from stayer.errors import InvalidRequest, ServerError
from stayer.events import (
    Continue,
    Continuing,
    Event,
    Finished,
    MessageCompleted,
    PartialKept,
    RequestStarted,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
    Withdrawn,
)
from stayer.loop.abort import AbortSignal
from stayer.loop.recovery import CUT_CALL_TEXT
from stayer.loop.response import BROKEN_TEXT
from stayer.loop.run import query
from stayer.loop.tool_exec import INTERRUPTED_TEXT
from stayer.messages import AssistantMessage, Message, TextBlock, ToolUseBlock, UserMessage
from stayer.providers.scripted import Cut, Reply, ScriptedProvider, text
from stayer.session.transcript import TranscriptWriter, load
from stayer.tools.base import Tool, ToolContext, ToolOutput
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo, EmptyInput, Overlap, Refuse, Sleep, TextInput, Touch

SERVER_ERROR = ServerError("server error (500)", status=500)
PATIENCE_S = 5.0


def shown(events: Sequence[Event]) -> list[object]:
    """The events the tests compare, in order."""
    out: list[object] = []
    for event in events:
        match event:
            case RequestStarted(turn=turn):
                out.append(("request", turn))
            case ToolCallStarted(tool_use_id=call_id):
                out.append(("started", call_id))
            case ToolCallFinished(tool_use_id=call_id, status=status):
                out.append(("finished", call_id, status))
            case MessageCompleted(message=message):
                out.append(("answer", message.id))
            case PartialKept(message=message):
                out.append(("kept", message.id))
            case Withdrawn(message_id=message_id):
                out.append(("withdrawn", message_id))
            case Continuing(reason=reason):
                out.append(reason)
            case Finished(terminal=terminal):
                out.append(terminal)
    return out


class Gate:
    """Holds a scripted answer back after a block until a tool call has started."""

    def __init__(self, after: int, tool: Sleep | Marker) -> None:
        self.after = after
        self.tool = tool

    async def __call__(self, index: int) -> None:
        if index == self.after:
            await asyncio.wait_for(self.tool.started.wait(), PATIENCE_S)


class Marker(Echo):
    """Echo that says when it started, and counts its runs."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.runs = 0

    async def call(self, tool_input: TextInput, ctx: object) -> object:  # type: ignore[override]
        self.started.set()
        self.runs += 1
        return await super().call(tool_input, ctx)  # type: ignore[arg-type]


async def test_a_call_starts_the_moment_its_block_completes_while_the_answer_streams(
    tmp_path: Path,
) -> None:
    marker = Marker()
    call = ToolUseBlock("toolu_a", "Echo", {"text": "early"})
    # The answer goes on only once the call has started: waiting for its end would hang here.
    answer = Reply((call, TextBlock("and more words after it")), after_block=Gate(0, marker))
    model = ScriptedProvider([answer, text("done")])
    events = await run(make_params(model, [marker], tmp_path))

    assert shown(events) == [
        ("request", 1),
        ("started", "toolu_a"),
        ("finished", "toolu_a", "completed"),
        ("answer", "msg_scripted_1"),
        Continue.NEXT_TURN,
        ("request", 2),
        ("answer", "msg_scripted_2"),
        Terminal.COMPLETED,
    ]
    assert [r.text for r in results_in(model.requests[1].messages[-1])] == ["early"]


async def test_safe_calls_start_together_and_an_unsafe_one_waits_its_turn_in_order(
    tmp_path: Path,
) -> None:
    overlap = Overlap(hold_s=0.2)
    blocks = (
        ToolUseBlock("a", "Overlap", {"text": "a"}),
        ToolUseBlock("b", "Overlap", {"text": "b"}),
        ToolUseBlock("e", "Echo", {"text": "e"}),
        ToolUseBlock("c", "Overlap", {"text": "c"}),
    )
    model = ScriptedProvider([Reply(blocks), text("done")])
    events = await run(make_params(model, [overlap, Echo()], tmp_path))

    order = [e for e in shown(events) if isinstance(e, tuple) and e[0] in ("started", "finished")]
    assert order[:2] == [("started", "a"), ("started", "b")]
    assert order.index(("started", "e")) > order.index(("finished", "a", "completed"))
    assert order.index(("started", "e")) > order.index(("finished", "b", "completed"))
    assert order.index(("started", "c")) > order.index(("finished", "e", "completed"))
    assert [r.tool_use_id for r in results_in(model.requests[1].messages[-1])] == list("abec")


class SafeRefuse(Refuse):
    """Fails, and may run beside others."""

    def is_concurrency_safe(self, tool_input: object) -> bool:
        return True


async def test_one_failing_call_never_cancels_its_siblings(tmp_path: Path) -> None:
    overlap = Overlap(hold_s=0.2)
    blocks = (
        ToolUseBlock("fails", "Refuse", {}),
        ToolUseBlock("x", "Overlap", {"text": "x"}),
        ToolUseBlock("y", "Overlap", {"text": "y"}),
    )
    model = ScriptedProvider([Reply(blocks), text("done")])
    events = await run(make_params(model, [SafeRefuse(), overlap], tmp_path))

    statuses = {e.tool_use_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert statuses == {"fails": "failed", "x": "completed", "y": "completed"}
    answers = results_in(model.requests[1].messages[-1])
    assert [(a.text, a.is_error) for a in answers] == [
        ("cannot do that: the file is locked", True),
        ("x", False),
        ("y", False),
    ]


async def test_a_cut_after_a_started_call_keeps_the_answer_up_to_it_and_runs_nothing_twice(
    tmp_path: Path,
) -> None:
    said = TextBlock("I will create the file.")
    touch = ToolUseBlock("toolu_touch", "Touch", {"text": "made.txt"})
    model = ScriptedProvider([Cut(SERVER_ERROR, blocks=(said, touch)), text("It is there.")])
    events = await run(make_params(model, [Touch()], tmp_path))

    assert shown(events) == [
        ("request", 1),
        ("started", "toolu_touch"),
        ("kept", "msg_scripted_1"),
        ("finished", "toolu_touch", "completed"),
        Continue.TRUNCATED_RESPONSE_RECOVERY,
        ("request", 2),
        ("answer", "msg_scripted_2"),
        Terminal.COMPLETED,
    ]
    assert (tmp_path / "made.txt").exists()
    *_, answer, results = model.requests[1].messages
    assert isinstance(answer, AssistantMessage) and answer.content == (said, touch)
    assert [b.type for b in results.content] == ["tool_result", "text"]
    note = results.content[-1]
    assert isinstance(note, TextBlock)
    assert note.text == BROKEN_TEXT.format(why=str(SERVER_ERROR))


async def test_calls_that_never_started_never_start_once_the_answer_breaks(
    tmp_path: Path,
) -> None:
    sleeper = Sleep()
    echo = Marker()
    blocks = (
        ToolUseBlock("running", "Sleep", {"text": "0.2"}),
        ToolUseBlock("queued", "Echo", {"text": "never"}),  # unsafe: waits behind Sleep
    )

    def cut_once_running(request: object) -> Cut:
        return Cut(SERVER_ERROR, blocks=blocks)

    model = ScriptedProvider([cut_once_running, text("done")])
    events = await run(make_params(model, [sleeper, echo], tmp_path))

    assert echo.runs == 0
    assert [e for e in shown(events) if isinstance(e, tuple) and e[0] != "request"] == [
        ("started", "running"),
        ("kept", "msg_scripted_1"),
        ("finished", "running", "completed"),
        ("answer", "msg_scripted_2"),
    ]
    *_, answer, results = model.requests[1].messages
    assert isinstance(answer, AssistantMessage)
    assert [b.id for b in answer.tool_uses] == ["running"]
    assert [r.tool_use_id for r in results_in(results)] == ["running"]


async def test_a_final_failure_after_a_started_call_ends_with_the_call_and_its_result_kept(
    tmp_path: Path,
) -> None:
    touch = ToolUseBlock("toolu_touch", "Touch", {"text": "made.txt"})
    refused = InvalidRequest("the request was refused")
    model = ScriptedProvider([Cut(refused, blocks=(touch,))])
    events = await run(make_params(model, [Touch()], tmp_path))

    end = finished(events)
    assert end.terminal is Terminal.MODEL_ERROR
    assert end.message == str(refused)
    assert (tmp_path / "made.txt").exists()
    answer, results = end.messages[-2:]
    assert isinstance(answer, AssistantMessage) and answer.content == (touch,)
    assert [r.text for r in results_in(results)] == ["created made.txt"]


async def test_a_call_that_ran_is_not_asked_again_with_a_larger_output_limit(
    tmp_path: Path,
) -> None:
    marker = Marker()
    whole = ToolUseBlock("toolu_whole", "Echo", {"text": "ran"})
    cut = ToolUseBlock("toolu_cut", "Echo", {}, unparsed='{"text": "half')
    answer = Reply((whole, cut), stop_reason="max_tokens", after_block=Gate(0, marker))
    model = ScriptedProvider([answer, text("done")])
    params = make_params(model, [marker], tmp_path)
    params = replace(params, escalated_max_tokens=64_000)
    events = await run(params)

    assert marker.runs == 1
    assert Continue.MAX_OUTPUT_TOKENS_ESCALATE not in shown(events)
    answers = results_in(model.requests[1].messages[-1])
    assert [(a.tool_use_id, a.text) for a in answers] == [
        ("toolu_whole", "ran"),
        ("toolu_cut", CUT_CALL_TEXT),
    ]


async def test_a_window_cut_after_a_started_call_keeps_it_and_goes_on(tmp_path: Path) -> None:
    marker = Marker()
    call = ToolUseBlock("toolu_a", "Echo", {"text": "ran"})
    answer = Reply(
        (TextBlock("Checking"), call, TextBlock("and then")),
        stop_reason="model_context_window_exceeded",
        after_block=Gate(1, marker),
    )
    model = ScriptedProvider([answer, text("done")])
    events = await run(make_params(model, [marker], tmp_path))

    assert marker.runs == 1
    assert Continue.TRUNCATED_RESPONSE_RECOVERY in shown(events)
    *_, kept, _results = model.requests[1].messages
    assert isinstance(kept, AssistantMessage)
    assert kept.content == (TextBlock("Checking"), call)  # what came after the call is gone
    shown_answers = [e.message for e in events if isinstance(e, MessageCompleted)]
    assert shown_answers[0] == kept  # what is printed is what the conversation holds
    assert finished(events).terminal is Terminal.COMPLETED


async def test_interrupted_while_streaming_a_started_call_is_stopped_and_reported(
    tmp_path: Path,
) -> None:
    sleeper = Sleep()
    abort = AbortSignal()
    blocks = (
        ToolUseBlock("running", "Sleep", {"text": "30"}),
        ToolUseBlock("queued", "Echo", {"text": "never"}),
    )

    async def interrupt_once_started(index: int) -> None:
        if index == 0:
            await asyncio.wait_for(sleeper.started.wait(), PATIENCE_S)
            abort.abort()
            await asyncio.sleep(30)  # the rest never streams: the interrupt stops it

    model = ScriptedProvider([Reply(blocks, after_block=interrupt_once_started)])
    events = await run(make_params(model, [sleeper, Echo()], tmp_path, abort=abort))

    end = finished(events)
    assert end.terminal is Terminal.ABORTED_STREAMING
    assert not sleeper.finished
    (running,) = results_in(end.messages[-1])  # the queued call never streamed whole
    assert running.text == INTERRUPTED_TEXT


async def test_a_call_is_on_record_before_it_runs(tmp_path: Path) -> None:
    seen: list[tuple[Message, ...]] = []
    on_record: list[bool] = []

    class Check(Echo):
        async def call(self, tool_input: TextInput, ctx: object) -> object:  # type: ignore[override]
            last = seen[-1][-1]
            on_record.append(
                isinstance(last, AssistantMessage) and "toolu_a" in [b.id for b in last.tool_uses]
            )
            return await super().call(tool_input, ctx)  # type: ignore[arg-type]

    call = ToolUseBlock("toolu_a", "Echo", {"text": "x"})
    model = ScriptedProvider([Reply((TextBlock("First"), call, TextBlock("more"))), text("ok")])
    params = replace(make_params(model, [Check()], tmp_path), observe=seen.append)
    await run(params)
    assert on_record == [True]


async def test_a_reader_that_leaves_early_leaves_no_call_running(tmp_path: Path) -> None:
    sleeper = Sleep()
    call = ToolUseBlock("toolu_sleep", "Sleep", {"text": "30"})

    async def hold(index: int) -> None:
        await asyncio.sleep(30)

    model = ScriptedProvider([Reply((call, TextBlock("rest")), after_block=hold)])
    source = query(make_params(model, [sleeper], tmp_path), (UserMessage.of_text("go"),))
    async for event in source:
        if isinstance(event, ToolCallStarted):
            break
    await asyncio.wait_for(source.aclose(), PATIENCE_S)
    # a call that began was stopped, not left to run on (it may not have begun at all)
    assert sleeper.cancelled.is_set() or not sleeper.started.is_set()
    assert not sleeper.finished
    running = [t for t in asyncio.all_tasks() if "run_one" in repr(t.get_coro())]
    assert running == []


@pytest.mark.parametrize("cap", [1, 3])
async def test_the_cap_bounds_calls_started_while_streaming(tmp_path: Path, cap: int) -> None:
    overlap = Overlap(hold_s=0.05)
    calls = tuple(ToolUseBlock(f"t{i}", "Overlap", {"text": str(i)}) for i in range(6))
    model = ScriptedProvider([Reply(calls), text("done")])
    params = replace(make_params(model, [overlap], tmp_path), max_concurrent_tools=cap)
    await run(params)
    assert overlap.peak == cap


class SelfCancel(Tool[EmptyInput]):
    """A tool whose awaited future something else cancelled (a torn-down client, say)."""

    name = "SelfCancel"
    description = "Await a cancelled future."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        future: asyncio.Future[ToolOutput] = asyncio.get_running_loop().create_future()
        future.cancel()
        return await future


class Unshowable(Tool[EmptyInput]):
    """Returns content of no kind a result can hold."""

    name = "Unshowable"
    description = "Return nonsense."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("tool", [SelfCancel(), Unshowable()])
async def test_a_call_that_breaks_in_any_way_still_ends_with_a_result(
    tmp_path: Path, tool: Tool[EmptyInput]
) -> None:
    model = ScriptedProvider([Reply((ToolUseBlock("t1", tool.name, {}),)), text("done")])
    events = await asyncio.wait_for(run(make_params(model, [tool], tmp_path)), PATIENCE_S)

    (result,) = results_in(model.requests[1].messages[-1])
    assert result.is_error
    assert result.text.startswith("Error")
    assert finished(events).terminal is Terminal.COMPLETED


def written_and_loaded(tmp_path: Path, seen: list[tuple[Message, ...]]) -> tuple[Message, ...]:
    """The conversations a run settled, written as a session's transcript, read back."""
    writer = TranscriptWriter(tmp_path / "t.jsonl", "sid", str(tmp_path))
    for messages in seen:
        writer.sync(messages)
    writer.close()
    return load(tmp_path / "t.jsonl").messages


@pytest.mark.parametrize(
    "blocks",
    [
        (  # a call held as invalid between two that started while the answer streamed
            ToolUseBlock("a", "Overlap", {"text": "a"}),
            ToolUseBlock("x", "NoSuchTool", {}),
            ToolUseBlock("b", "Overlap", {"text": "b"}),
        ),
        (  # blank text before the call, which the record of the answer so far leaves out
            TextBlock("\n\n"),
            ToolUseBlock("a", "Overlap", {"text": "a"}),
            TextBlock("after"),
        ),
        (ToolUseBlock("a", "Overlap", {"text": "a"}), ToolUseBlock("b", "Overlap", {"text": "b"})),
    ],
)
async def test_an_answer_on_record_before_its_calls_ran_reads_back_as_it_ended(
    tmp_path: Path, blocks: tuple[TextBlock | ToolUseBlock, ...]
) -> None:
    seen: list[tuple[Message, ...]] = []
    model = ScriptedProvider([Reply(blocks), text("done")])
    params = replace(make_params(model, [Overlap(hold_s=0.05)], tmp_path), observe=seen.append)
    end = finished(await run(params))
    assert len(seen) > 3  # the answer was on record while it streamed, then whole

    loaded = written_and_loaded(tmp_path, seen)
    answers = [m for m in loaded if isinstance(m, AssistantMessage)]
    ended = [m for m in end.messages if isinstance(m, AssistantMessage)]
    shown = [tuple(b for b in m.content if not (isinstance(b, TextBlock) and not b.text.strip()))
             for m in ended]  # fmt: skip
    assert [m.content for m in answers] == shown
