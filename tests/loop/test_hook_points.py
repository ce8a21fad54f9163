"""The loop's hook points, driven by plain callables (the session builds them from settings):
the Stop hook's branch and its cap (past it, the run ends as stop_hook_prevented),
PostToolUse's say over a result, a halt after a tool round, and PreCompact before a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from msgspec.structs import replace

from stayer.errors import PromptTooLong
from stayer.events import (
    Continuing,
    Event,
    Finished,
    Terminal,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from stayer.loop.state import StopVerdict, ToolCall
from stayer.messages import Message, TextBlock, UserMessage
from stayer.providers.scripted import Fault, ScriptedProvider, text, tool_call
from stayer.tools.base import ToolOutput
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo


class AlwaysBlocks:
    """A Stop hook that never lets the model stop; it keeps what it was told."""

    def __init__(self) -> None:
        self.heard: list[tuple[bool, str]] = []

    async def __call__(self, active: bool, last: str) -> StopVerdict:
        self.heard.append((active, last))
        return StopVerdict(block="not yet")


def outline(events: list[Event]) -> list[tuple[str, str]]:
    """Each event as its kind and what tells it apart: the whole sequence, compactly."""
    said: list[tuple[str, str]] = []
    for event in events:
        match event:
            case TextDelta(text=text_):
                said.append(("TextDelta", text_))
            case Continuing(reason=reason):
                said.append(("Continuing", reason.value))
            case Finished(terminal=terminal):
                said.append(("Finished", terminal.value))
            case ToolCallStarted(name=name) | ToolCallFinished(name=name):
                said.append((type(event).__name__, name))
            case _:
                said.append((type(event).__name__, ""))
    return said


def answered(text_: str) -> list[tuple[str, str]]:
    """The events of one model call that answers `text_` and calls no tool."""
    return [
        ("RequestStarted", ""),
        ("MessageStarted", ""),
        ("BlockStarted", ""),
        ("TextDelta", text_),
        ("BlockCompleted", ""),
        ("MessageDelta", ""),
        ("MessageCompleted", ""),
    ]


BLOCKED = ("Continuing", "stop_hook_blocking")


def _text(message: Message) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextBlock))


async def test_a_stop_hook_that_never_approves_ends_as_stop_hook_prevented_at_the_cap(
    tmp_path: Path,
) -> None:
    hook = AlwaysBlocks()
    model = ScriptedProvider([text("a"), text("b"), text("c")])
    params = replace(make_params(model, [], tmp_path), stop_hook=hook, max_hook_blocks=2)
    events = await run(params)

    assert outline(events) == [
        *answered("a"),
        BLOCKED,
        *answered("b"),
        BLOCKED,
        *answered("c"),
        ("Finished", "stop_hook_prevented"),
    ]
    end = finished(events)
    assert (end.terminal, end.is_error, end.result_text, end.stop_reason, end.num_turns) == (
        Terminal.STOP_HOOK_PREVENTED,
        True,
        "",
        "end_turn",
        1,
    )
    assert end.message == (
        "A Stop hook kept the turn from ending 2 times in a row with no tool call in between, "
        "the most allowed (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2), so the run ends without its "
        "approval. A Stop hook should check stop_hook_active in its input and let the turn end "
        "while it is true. The hook's last words:\nnot yet"
    )
    assert hook.heard == [(False, "a"), (True, "b"), (True, "c")]
    assert [_text(m) for m in end.messages] == [
        "go",
        "a",
        "Stop hook feedback:\nnot yet",
        "b",
        "Stop hook feedback:\nnot yet",
        "c",
    ]  # the last answer stays in the conversation, unapproved


async def test_a_tool_round_resets_the_count_of_stop_hook_blocks(tmp_path: Path) -> None:
    hook = AlwaysBlocks()
    steps = [text("a"), text("b"), tool_call("Echo", {"text": "work"}), text("c"), text("d")]
    model = ScriptedProvider([*steps, text("e")])
    params = replace(make_params(model, [Echo()], tmp_path), stop_hook=hook, max_hook_blocks=2)
    events = await run(params)

    # a, b blocked (2); the tool round resets; c, d blocked (2); e is the third in a row
    tool_round = [
        ("RequestStarted", ""),
        ("MessageStarted", ""),
        ("BlockStarted", ""),
        ("ToolInputDelta", ""),
        ("BlockCompleted", ""),
        ("ToolCallStarted", "Echo"),
        ("MessageDelta", ""),
        ("MessageCompleted", ""),
        ("ToolCallFinished", "Echo"),
        ("ToolResultsAppended", ""),
        ("Continuing", "next_turn"),
    ]
    assert outline(events) == [
        *answered("a"),
        BLOCKED,
        *answered("b"),
        BLOCKED,
        *tool_round,
        *answered("c"),
        BLOCKED,
        *answered("d"),
        BLOCKED,
        *answered("e"),
        ("Finished", "stop_hook_prevented"),
    ]
    assert finished(events).message.startswith(
        "A Stop hook kept the turn from ending 2 times in a row"
    )
    assert hook.heard == [(False, "a"), (True, "b"), (True, "c"), (True, "d"), (True, "e")]


async def test_no_cap_lets_the_hook_decide(tmp_path: Path) -> None:
    answers = iter([StopVerdict(block="again")] * 12 + [StopVerdict()])

    async def hook(_active: bool, _last: str) -> StopVerdict:
        return next(answers)

    model = ScriptedProvider([text(f"try {n}") for n in range(13)])
    params = replace(make_params(model, [], tmp_path), stop_hook=hook, max_hook_blocks=0)
    end = finished(await run(params))
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, "try 12")


async def test_after_tool_has_the_last_word_on_a_result(tmp_path: Path) -> None:
    async def after(call: ToolCall, output: ToolOutput) -> ToolOutput:
        return replace(output, content=f"{output.content} (checked {call.tool.name})")

    model = ScriptedProvider([tool_call("Echo", {"text": "hi"}), text("done")])
    params = replace(make_params(model, [Echo()], tmp_path), after_tool=after)
    end = finished(await run(params))
    (result,) = [r for m in end.messages if isinstance(m, UserMessage) for r in results_in(m)]
    assert (result.text, result.is_error) == ("hi (checked Echo)", False)


async def test_a_halt_ends_the_run_after_its_tool_round(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Echo", {"text": "hi"})])
    params = replace(make_params(model, [Echo()], tmp_path), halted=lambda: "stop here")
    end = finished(await run(params))
    assert (end.terminal, end.message) == (Terminal.HOOK_STOPPED, "stop here")


async def test_pre_compact_runs_before_the_summary_is_asked_for(tmp_path: Path) -> None:
    too_long = PromptTooLong("prompt is too long: 210000 tokens > 200000 maximum", tokens=210_000)
    calls = [tool_call("Echo", {"text": f"ok {n}"}) for n in range(5)]
    model = ScriptedProvider([*calls, Fault(too_long), text("NOTES"), text("done")])
    seen: list[tuple[str, int]] = []

    async def before(trigger: Literal["auto", "manual"]) -> None:
        seen.append((trigger, len(model.requests)))

    params = replace(make_params(model, [Echo()], tmp_path), before_compact=before)
    end = finished(await run(params))
    assert end.terminal is Terminal.COMPLETED
    assert seen == [("auto", 6)]  # after the refused call, before the summary's (the 7th)
