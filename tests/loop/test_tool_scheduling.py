"""How calls are scheduled and closed: the cap, batches, interruption, broken callbacks."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from stayer.events import Terminal, ToolCallFinished
from stayer.loop.abort import AbortSignal
from stayer.loop.state import ToolCall
from stayer.loop.tool_exec import INTERRUPTED_TEXT, NOT_RUN_TEXT
from stayer.messages import ToolUseBlock
from stayer.permissions import Decision
from stayer.providers.scripted import Reply, ScriptedProvider, text
from stayer.tools.base import DEFAULT_RESULT_CHARS
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo, Huge, Overlap, Sleep


async def test_at_most_ten_read_only_calls_run_at_once(tmp_path: Path) -> None:
    overlap = Overlap()
    calls = Reply(tuple(ToolUseBlock(f"t{i}", "Overlap", {"text": str(i)}) for i in range(13)))
    model = ScriptedProvider([calls, text("done")])
    await run(make_params(model, [overlap], tmp_path))

    assert overlap.peak == 10
    answers = results_in(model.requests[1].messages[-1])
    assert [a.text for a in answers] == [str(i) for i in range(13)]


async def test_an_unsafe_call_waits_for_the_batch_before_it_and_blocks_the_one_after(
    tmp_path: Path,
) -> None:
    overlap = Overlap()
    calls = Reply(
        (
            ToolUseBlock("a", "Overlap", {"text": "a"}),
            ToolUseBlock("b", "Overlap", {"text": "b"}),
            ToolUseBlock("e", "Echo", {"text": "e"}),
            ToolUseBlock("c", "Overlap", {"text": "c"}),
        )
    )
    model = ScriptedProvider([calls, text("done")])
    events = await run(make_params(model, [overlap, Echo()], tmp_path))

    assert overlap.order[:2] == ["start a", "start b"]
    finished_order = [e.tool_use_id for e in events if isinstance(e, ToolCallFinished)]
    assert finished_order.index("e") > max(finished_order.index("a"), finished_order.index("b"))
    assert finished_order[-1] == "c"
    assert [b.tool_use_id for b in results_in(model.requests[1].messages[-1])] == list("abec")


async def test_interrupted_calls_say_whether_they_had_started(tmp_path: Path) -> None:
    sleeper = Sleep()
    abort = AbortSignal()
    calls = Reply(
        (
            ToolUseBlock("running", "Sleep", {"text": "30"}),
            ToolUseBlock("queued", "Echo", {"text": "never"}),
        )
    )
    model = ScriptedProvider([calls])
    params = make_params(model, [sleeper, Echo()], tmp_path, abort=abort)

    async def interrupt() -> None:
        await sleeper.started.wait()
        abort.abort()

    task = asyncio.create_task(interrupt())
    events = await run(params)
    await task

    end = finished(events)
    assert end.terminal is Terminal.ABORTED_TOOLS
    running, queued = results_in(end.messages[-1])
    assert (running.text, queued.text) == (INTERRUPTED_TEXT, NOT_RUN_TEXT)
    closed = {e.tool_use_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert closed == {"running": "failed", "queued": "failed"}


async def test_a_broken_permission_callback_fails_the_call_not_the_run(tmp_path: Path) -> None:
    async def broken(call: ToolCall) -> Decision:
        raise ValueError("embedded null byte")

    model = ScriptedProvider(
        [Reply((ToolUseBlock("t1", "Echo", {"text": "x"}),)), text("moving on")]
    )
    events = await run(make_params(model, [Echo()], tmp_path, can_use_tool=broken))

    (answer,) = results_in(model.requests[1].messages[-1])
    assert answer.is_error
    assert answer.text == "Error running Echo: ValueError: embedded null byte"
    assert finished(events).terminal is Terminal.COMPLETED


class Tight(Huge):
    """Huge output from a tool that allows itself only 2,000 characters."""

    name = "Tight"
    max_result_chars = 2_000


async def test_a_huge_result_loses_its_middle_with_true_counts(tmp_path: Path) -> None:
    for tool, limit in ((Huge(), DEFAULT_RESULT_CHARS), (Tight(), 2_000)):
        model = ScriptedProvider([Reply((ToolUseBlock("t1", tool.name, {}),)), text("ok")])
        await run(make_params(model, [tool], tmp_path))

        (answer,) = results_in(model.requests[1].messages[-1])
        full = "\n".join(f"line {i}" for i in range(100_000))
        assert len(answer.text) <= limit
        match = re.fullmatch(
            r"(?s)(.*)\n\n\.\.\. \[(\d+) characters omitted\] \.\.\.\n\n(.*)"
            r"\n\[(\d+) characters of this result were cut; narrow the request to see them\]",
            answer.text,
        )
        assert match is not None
        head, omitted, tail, noted = match.groups()
        assert full.startswith(head) and head.startswith("line 0\n")
        assert full.endswith(tail) and tail.endswith("line 99999")
        assert int(omitted) == int(noted) == len(full) - len(head) - len(tail)
