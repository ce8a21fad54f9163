"""SPEC §1.4: a tool_use block runs its tool even when stop_reason says end_turn."""

from __future__ import annotations

from pathlib import Path

from stayer.events import Continue, Continuing, Terminal, ToolCallFinished
from stayer.messages import TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from stayer.providers.scripted import Reply, ScriptedProvider, text
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Echo


async def test_tool_use_with_end_turn_still_runs_the_tool(tmp_path: Path) -> None:
    lying = Reply(
        (TextBlock("Done, I think."), ToolUseBlock("toolu_1", "Echo", {"text": "hello"})),
        stop_reason="end_turn",
    )
    model = ScriptedProvider([lying, text("Now I am done.")])
    events = await run(make_params(model, [Echo()], tmp_path))

    assert [e.name for e in events if isinstance(e, ToolCallFinished)] == ["Echo"]
    second_request = model.requests[1]
    answer = second_request.messages[-1]
    assert isinstance(answer, UserMessage)
    assert results_in(answer) == [ToolResultBlock("toolu_1", (TextBlock("hello"),))]
    assert Continuing(Continue.NEXT_TURN) in events
    end = finished(events)
    assert end.terminal is Terminal.COMPLETED
    assert end.result_text == "Now I am done."
    assert end.num_turns == 2
    model.assert_done()
