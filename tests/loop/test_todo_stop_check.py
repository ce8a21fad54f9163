"""A run whose todo list still has open tasks is not done: with TodoWrite in the toolbox the
session's stop check sends the model back (`stop_hook_blocking`), bounded like every stop check."""

from __future__ import annotations

from pathlib import Path

from stayer.events import Continue, Event, Finished, Terminal
from stayer.loop.recovery import STOP_CHECK_TEXT
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.query import query
from tests.fakes.loop_harness import assert_valid_history, finished
from tests.loop.test_recovery import loop_events


def todos(*statuses: str) -> dict[str, object]:
    names = ("Fix the bug", "Add a test")
    return {
        "todos": [
            {"content": name, "status": status, "activeForm": f"Doing: {name}"}
            for name, status in zip(names, statuses, strict=True)
        ]
    }


async def run(
    model: ScriptedProvider, tmp_path: Path, *, tools: list[str] | None = None
) -> list[Event]:
    given = QueryOptions(cwd=tmp_path, provider=model, tools=tools)
    events = [event async for event in query("fix it", options=given)]
    assert_valid_history(finished(events).messages)
    model.assert_done()
    return events


async def test_open_tasks_send_the_model_back_until_it_marks_them_done(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            tool_call("TodoWrite", todos("completed", "in_progress"), id="toolu_1"),
            text("All done."),
            tool_call("TodoWrite", todos("completed", "completed"), id="toolu_2"),
            text("Now it is all done."),
        ]
    )
    events = await run(model, tmp_path)

    assert loop_events(events) == [
        ("request", 1),
        ("started", "TodoWrite"),
        ("finished", "TodoWrite", "completed"),
        "results",
        Continue.NEXT_TURN,
        ("request", 2),
        Continue.STOP_HOOK_BLOCKING,
        ("request", 2),
        ("started", "TodoWrite"),
        ("finished", "TodoWrite", "completed"),
        "results",
        Continue.NEXT_TURN,
        ("request", 3),
        Terminal.COMPLETED,
    ]
    told = model.requests[2].messages[-1]
    assert told == UserMessage(
        (
            TextBlock(
                f"{STOP_CHECK_TEXT}\n\nYour todo list still has open tasks:\n"
                "- [in_progress] Add a test\nFinish each and mark it completed with TodoWrite. "
                "If one is no longer needed, take it off the list with TodoWrite and say why."
            ),
        )
    )
    assert finished(events).result_text == "Now it is all done."


async def test_a_list_left_open_ends_the_run_after_the_usual_number_of_tries(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider(
        [tool_call("TodoWrite", todos("pending", "pending")), *[text("Done.")] * 4]
    )
    events = await run(model, tmp_path)

    assert loop_events(events) == [
        ("request", 1),
        ("started", "TodoWrite"),
        ("finished", "TodoWrite", "completed"),
        "results",
        Continue.NEXT_TURN,
        ("request", 2),
        *[Continue.STOP_HOOK_BLOCKING, ("request", 2)] * 3,
        Terminal.DONE_CHECK_FAILED,
    ]
    end = events[-1]
    assert isinstance(end, Finished)
    assert end.message.endswith(
        "- [pending] Fix the bug\n- [pending] Add a test\nFinish each "
        "and mark it completed with TodoWrite. If one is no longer "
        "needed, take it off the list with TodoWrite and say why."
    )


async def test_without_the_tool_there_is_no_todo_check(tmp_path: Path) -> None:
    model = ScriptedProvider([text("Done.")])
    events = await run(model, tmp_path, tools=["Read"])

    assert loop_events(events) == [("request", 1), Terminal.COMPLETED]
    assert [spec.name for spec in model.requests[0].tools] == ["Read"]
