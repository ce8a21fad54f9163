"""A subagent's permission question reaches the REPL as the session's own does: found inside
its wrapper (`question_in`), put in the same dialog naming the subagent, and answered through
the driver by the subagent's call id, which lets the subagent's call run. A real session, its
subagent a child session, the scripted model; the sink answers as the REPL's does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from msgspec.structs import replace

from stayer.driver import Answer, Close, Driver, Submit
from stayer.events import (
    Event,
    Finished,
    PermissionRequested,
    SubagentEvent,
    Terminal,
    TextDelta,
    ToolCallFinished,
)
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.ui.repl.dialogs import permission_dialog
from stayer.ui.wording import question_in
from tests.fakes.tools import Delegate


async def test_a_subagent_s_question_is_answered_by_its_own_call_id(tmp_path: Path) -> None:
    made = tmp_path / "made.txt"
    model = ScriptedProvider(
        [
            tool_call("Delegate", {"task": "make the file"}, id="parent_call"),
            tool_call("Bash", {"command": f"touch {made}"}, id="child_call"),
            text("Made it."),
            text("The helper made it."),
        ]
    )
    options = QueryOptions(
        cwd=tmp_path,
        provider=model,
        extra_tools=[Delegate()],
        env={"STAYER_CONFIG_DIR": str(tmp_path / "config")},
    )
    events: list[Event] = []
    asked: list[PermissionRequested] = []
    holder: list[Driver] = []
    done = asyncio.Event()

    async def sink(event: Event) -> None:
        events.append(event)
        if isinstance(event, Finished):
            done.set()
        request = question_in(event)
        if request is not None:  # as the REPL's sink does
            asked.append(request)
            holder[0].send(Answer(request.tool_use_id, Decision("allow", by="user")))

    driver = await Driver.open(options, sink, answers=True)
    holder.append(driver)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("get the helper to make a file"))
    await done.wait()  # questions are answered only until the driver is closed
    driver.send(Close())
    await running

    # the session's own call asks first (a tool of the caller's), then its subagent's
    assert [(r.tool_use_id, r.name) for r in asked] == [
        ("parent_call", "Delegate"),
        ("child_call", "Bash"),
    ]
    wrapped = [e for e in events if isinstance(e, SubagentEvent)]
    assert any(isinstance(e.event, PermissionRequested) for e in wrapped)
    ran = [e.event for e in wrapped if isinstance(e.event, ToolCallFinished)]
    assert [(e.tool_use_id, e.status) for e in ran] == [("child_call", "completed")]
    assert made.exists()
    finished = [e for e in events if isinstance(e, Finished)]
    assert [f.terminal for f in finished] == [Terminal.COMPLETED]
    assert finished[0].result_text == "The helper made it."


async def test_the_dialog_names_the_subagent_that_asks(tmp_path: Path) -> None:
    request = PermissionRequested(
        "child_call", "Bash", {"command": "make"}, "asks", agent="Explore: find the loader"
    )
    dialog = permission_dialog(request, "● Bash(make)\n", tmp_path)
    assert dialog.heading.splitlines() == [
        "Explore: find the loader wants to use Bash:",
        "● Bash(make)",
        "Do you want to proceed?",
    ]
    wrapped = SubagentEvent("parent_call", SubagentEvent("inner", request, "a2"), "a1")
    assert question_in(wrapped) is request
    assert question_in(SubagentEvent("parent_call", TextDelta(0, "x"))) is None
    unnamed = replace(request, agent="")
    named = question_in(SubagentEvent("parent_call", unnamed, "a1", "Plan", "plan the move"))
    assert named == replace(request, agent="Plan: plan the move")
