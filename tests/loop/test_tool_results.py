"""Tool results go back as one user message, in tool_use order; failures are data (SPEC §6.3)."""

from __future__ import annotations

from pathlib import Path

from stayer.events import Terminal, ToolCallFinished, ToolCallStarted, ToolResultsAppended
from stayer.loop.tool_exec import MAX_ECHOED_INPUT_CHARS
from stayer.messages import TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Boom, Echo, Refuse, Rendezvous, Silent


async def test_empty_output_reaches_the_model_as_the_placeholder(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Silent", {}, id="t1"), text("ok")])
    await run(make_params(model, [Silent()], tmp_path))

    answer = model.requests[1].messages[-1]
    assert results_in(answer) == [
        ToolResultBlock("t1", (TextBlock("(Silent completed with no output)"),))
    ]


async def test_three_read_only_calls_run_together_and_return_in_order(tmp_path: Path) -> None:
    meeting = Rendezvous()
    calls = Reply(
        tuple(ToolUseBlock(f"t{i}", "Rendezvous", {"text": f"call {i}"}) for i in (1, 2, 3))
    )
    model = ScriptedProvider([calls, text("all met")])
    events = await run(make_params(model, [meeting], tmp_path))

    assert meeting.peak == 3
    appended = [e for e in events if isinstance(e, ToolResultsAppended)]
    assert len(appended) == 1
    answer = model.requests[1].messages[-1]
    assert isinstance(answer, UserMessage)
    assert answer == appended[0].message
    assert results_in(answer) == [
        ToolResultBlock(f"t{i}", (TextBlock(f"call {i}: met 3"),)) for i in (1, 2, 3)
    ]


async def test_unsafe_calls_run_one_at_a_time_in_order(tmp_path: Path) -> None:
    calls = Reply(tuple(ToolUseBlock(f"t{i}", "Echo", {"text": str(i)}) for i in (1, 2, 3)))
    model = ScriptedProvider([calls, text("done")])
    events = await run(make_params(model, [Echo()], tmp_path))

    order = [
        (type(e).__name__, e.tool_use_id)
        for e in events
        if isinstance(e, ToolCallStarted | ToolCallFinished)
    ]
    assert order == [
        ("ToolCallStarted", "t1"),
        ("ToolCallFinished", "t1"),
        ("ToolCallStarted", "t2"),
        ("ToolCallFinished", "t2"),
        ("ToolCallStarted", "t3"),
        ("ToolCallFinished", "t3"),
    ]


async def test_each_kind_of_failure_comes_back_as_an_error_and_the_loop_goes_on(
    tmp_path: Path,
) -> None:
    failures = Reply(
        (
            ToolUseBlock("t1", "Teleport", {"where": "moon"}),
            ToolUseBlock("t2", "Echo", {"txt": "typo in the field name"}),
            ToolUseBlock("t3", "Boom", {}),
            ToolUseBlock("t4", "Refuse", {}),
            ToolUseBlock("t5", "Echo", {"text": "still fine"}),
        )
    )
    model = ScriptedProvider([failures, text("I see what went wrong.")])
    events = await run(make_params(model, [Echo(), Boom(), Refuse()], tmp_path))

    assert finished(events).terminal is Terminal.COMPLETED
    results = results_in(model.requests[1].messages[-1])
    assert [r.tool_use_id for r in results] == ["t1", "t2", "t3", "t4", "t5"]
    assert [r.is_error for r in results] == [True, True, True, True, False]
    unknown, invalid, crashed, refused, fine = (r.text for r in results)
    assert "no tool named 'Teleport'" in unknown and "Echo" in unknown
    assert invalid.startswith("InputValidationError:")
    assert "text: Field required" in invalid and "txt: Extra inputs are not permitted" in invalid
    assert crashed == "Error calling tool Boom: RuntimeError: the disk caught fire"
    assert refused == "cannot do that: the file is locked"
    assert fine == "still fine"
    statuses = [e.status for e in events if isinstance(e, ToolCallFinished)]
    assert statuses == ["failed", "failed", "failed", "failed", "completed"]


def _unparsed(raw: str) -> Reply:
    return Reply((ToolUseBlock("t1", "Echo", {}, unparsed=raw),))


async def test_unparseable_tool_input_is_shown_to_the_model_with_the_reason(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([_unparsed('{"text": "hi" "there"}'), text("retrying differently")])
    await run(make_params(model, [Echo()], tmp_path))

    (result,) = results_in(model.requests[1].messages[-1])
    assert result.is_error
    assert result.text == (
        "InputValidationError: the input was not a JSON object (Expecting ',' delimiter at "
        "line 1 column 15), so Echo did not run. Call it again with the whole input as one "
        'JSON object. The input as received:\n{"text": "hi" "there"}'
    )


async def test_json_that_is_not_an_object_is_reported_as_what_it_is(tmp_path: Path) -> None:
    model = ScriptedProvider([_unparsed('["hi"]'), text("I see")])
    await run(make_params(model, [Echo()], tmp_path))

    (result,) = results_in(model.requests[1].messages[-1])
    assert result.text.startswith(
        "InputValidationError: the input was not a JSON object (it is an array), so Echo"
    )
    assert result.text.endswith('The input as received:\n["hi"]')


async def test_a_long_unparseable_input_is_shown_by_its_ends(tmp_path: Path) -> None:
    raw = '{"text": "' + "".join(f"line {n}\\n" for n in range(2_000))  # cut off, unterminated
    model = ScriptedProvider([_unparsed(raw), text("shorter next time")])
    await run(make_params(model, [Echo()], tmp_path))

    (result,) = results_in(model.requests[1].messages[-1])
    assert "(Unterminated string starting at line 1 column 10)" in result.text
    shown = result.text.split("The input as received:\n", 1)[1]
    head, rest = shown.split("\n\n... [", 1)
    count, tail = rest.split(" characters omitted] ...\n\n", 1)
    assert raw.startswith(head) and raw.endswith(tail)
    assert head.startswith('{"text": "line 0') and tail.endswith("line 1999\\n")
    assert MAX_ECHOED_INPUT_CHARS - 100 < len(shown) <= MAX_ECHOED_INPUT_CHARS  # marker included
    assert int(count) == len(raw) - len(head) - len(tail)


async def test_a_tool_that_hangs_times_out_as_an_error(tmp_path: Path) -> None:
    from tests.fakes.tools import Sleep

    class Impatient(Sleep):
        timeout_s = 0.2

    model = ScriptedProvider([tool_call("Sleep", {"text": "30"}, id="t1"), text("too slow")])
    events = await run(make_params(model, [Impatient()], tmp_path))

    (result,) = results_in(model.requests[1].messages[-1])
    assert result.is_error
    assert result.text == "Error: Sleep did not finish within 0.2 s and was stopped."
    assert finished(events).terminal is Terminal.COMPLETED
