"""Input the user queues while a run goes on (`LoopParams.take_queued`, Claude Code's queued
input): it joins the user message the next request ends with (after a tool round, the results
message), and a run whose model would be done goes on with it (`queued_input`) instead of
completing. An interrupted run takes none. Runs without queued input are pinned by every other
loop test; run() checks the history the API sees."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from msgspec.structs import replace

from stayer.events import (
    Continue,
    Continuing,
    Event,
    RequestStarted,
    Terminal,
    ToolCallFinished,
    ToolCallStarted,
    ToolResultsAppended,
)
from stayer.loop.abort import AbortSignal
from stayer.loop.state import LoopParams
from stayer.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
)
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo

QUEUED = TextBlock("and say goodbye too")


class Queue:
    """What a front end queued, taken whole at each model-call boundary; `taken` records each
    take, so a test sees when the loop asked."""

    def __init__(self) -> None:
        self.waiting: list[ContentBlock] = []
        self.taken: list[tuple[ContentBlock, ...]] = []

    def take(self) -> tuple[ContentBlock, ...]:
        blocks, self.waiting = tuple(self.waiting), []
        self.taken.append(blocks)
        return blocks

    def push_after_block(self, block: ContentBlock) -> Callable[[int], Awaitable[None]]:
        """A `Reply.after_block` that queues `block` while the answer is still streaming."""

        async def push(_index: int) -> None:
            self.waiting.append(block)

        return push


def queued_params(tmp_path: Path, model: ScriptedProvider, queue: Queue) -> LoopParams:
    return replace(make_params(model, [Echo()], tmp_path), take_queued=queue.take)


async def streamed(step: Reply, number: int) -> list[Event]:
    """The stream events the scripted model sends for `step` as its `number`-th call."""
    reference = ScriptedProvider([text("")] * (number - 1) + [step])
    request = ModelRequest(model="scripted", system="", messages=(), tools=(), max_tokens=1)
    events: list[Event] = []
    for _ in range(number):
        events = [event async for event in reference.stream(request)]
    return events


def assert_every_request_valid(model: ScriptedProvider) -> None:
    """Each request the model was sent holds a history the API accepts."""
    for request in model.requests:
        assert history_problems(request.messages) == []


def timeless(events: list[Event]) -> list[Event]:
    """The events with the tool calls' durations zeroed (the one thing that varies)."""
    return [replace(e, duration_ms=0.0) if isinstance(e, ToolCallFinished) else e for e in events]


async def test_input_queued_during_a_tool_round_joins_its_results(tmp_path: Path) -> None:
    queue = Queue()
    calling = replace(tool_call("Echo", {"text": "hi"}), after_block=queue.push_after_block(QUEUED))
    model = ScriptedProvider([calling, text("Said hi, and goodbye.")])
    events = await run(queued_params(tmp_path, model, queue), "say hi")

    call = ToolUseBlock("toolu_echo", "Echo", {"text": "hi"})
    result = ToolResultBlock("toolu_echo", (TextBlock("hi"),))
    first, second = await streamed(calling, 1), await streamed(text("Said hi, and goodbye."), 2)
    results = UserMessage((result,))
    assert (
        timeless(events[:-1])
        == [
            RequestStarted(1),
            *first[:4],  # the call starts as soon as its block completes
            ToolCallStarted("toolu_echo", "Echo", {"text": "hi"}),
            *first[4:],
            ToolCallFinished("toolu_echo", "Echo", "completed", result, 0.0, {"echoed": "hi"}),
            ToolResultsAppended(results, ({"echoed": "hi"},)),
            Continuing(Continue.NEXT_TURN),
            RequestStarted(2),
            *second,
        ]
    )
    joined = UserMessage((result, QUEUED))  # one user message: results, then the queued text
    assert model.requests[1].messages[-1] == joined
    end = finished(events)
    assert (end.terminal, end.result_text, end.num_turns) == (
        Terminal.COMPLETED,
        "Said hi, and goodbye.",
        2,
    )
    assert end.messages[1:3] == (model.requests[1].messages[1], joined)
    assert end.messages[1].content == (call,)
    assert [blocks for blocks in queue.taken if blocks] == [(QUEUED,)]
    assert_every_request_valid(model)


async def test_input_queued_during_the_final_answer_goes_on_with_the_run(tmp_path: Path) -> None:
    queue = Queue()
    final = replace(text("Hi."), after_block=queue.push_after_block(QUEUED))
    model = ScriptedProvider([final, text("Goodbye.")])
    events = await run(queued_params(tmp_path, model, queue), "say hi")

    assert events[:-1] == [
        RequestStarted(1),
        *await streamed(final, 1),
        Continuing(Continue.QUEUED_INPUT),
        RequestStarted(1),
        *await streamed(text("Goodbye."), 2),
    ]
    hi = AssistantMessage(
        (TextBlock("Hi."),), id="msg_scripted_1", model="scripted", stop_reason="end_turn"
    )
    sent = model.requests[1].messages
    assert [type(m) for m in sent] == [UserMessage, AssistantMessage, UserMessage]
    assert (sent[1].content, sent[2]) == (hi.content, UserMessage((QUEUED,)))
    end = finished(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "Goodbye.")
    assert end.messages[:3] == sent
    assert_every_request_valid(model)


async def test_nothing_queued_changes_nothing(tmp_path: Path) -> None:
    script = [tool_call("Echo", {"text": "hi"}), text("Done.")]
    queue = Queue()
    asking = ScriptedProvider(script)
    with_queue = await run(queued_params(tmp_path, asking, queue))
    plain = ScriptedProvider(script)
    without = await run(make_params(plain, [Echo()], tmp_path))

    assert timeless(with_queue[:-1]) == timeless(without[:-1])
    quick = {"duration_ms": 0.0, "duration_api_ms": 0.0}
    assert replace(finished(with_queue), **quick) == replace(finished(without), **quick)
    assert finished(with_queue).messages == finished(without).messages
    assert asking.requests == plain.requests
    # asked before each of the two requests, and once more when the model would be done
    assert queue.taken == [(), (), ()]


async def test_an_interrupted_run_takes_no_queued_input(tmp_path: Path) -> None:
    queue = Queue()
    abort = AbortSignal()

    async def interrupt(_index: int) -> None:
        queue.waiting.append(QUEUED)
        abort.abort()

    model = ScriptedProvider([replace(text("Hi."), after_block=interrupt)])
    params = replace(make_params(model, [Echo()], tmp_path, abort=abort), take_queued=queue.take)
    events = await run(params)

    end = finished(events)
    assert end.terminal is Terminal.ABORTED_STREAMING
    assert queue.taken == [()]  # only before the first request, never after the interrupt
    assert queue.waiting == [QUEUED]  # left for whoever starts the next run
    assert QUEUED not in [block for m in end.messages for block in m.content]


async def test_input_queued_before_an_interrupt_is_never_sent(tmp_path: Path) -> None:
    queue = Queue()
    queue.waiting.append(QUEUED)
    abort = AbortSignal()

    def interrupt(_messages: tuple[Message, ...]) -> None:  # on record before the call
        abort.abort()

    model = ScriptedProvider([text("Hi.")])
    params = replace(
        make_params(model, [Echo()], tmp_path, abort=abort),
        take_queued=queue.take,
        observe=interrupt,
    )
    events = await run(params, strict=False)

    assert finished(events).terminal is Terminal.ABORTED_STREAMING
    assert (queue.taken, queue.waiting) == ([], [QUEUED])
    sent = [block for request in model.requests for m in request.messages for block in m.content]
    assert QUEUED not in sent
