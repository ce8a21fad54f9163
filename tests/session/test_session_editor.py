"""A session opened with an editor (`QueryOptions.editor`): its tools read and change the
editor's buffers, its permission rules judge those files first, and `/clear` forgets what was
read there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stayer.events import Event, Finished, Terminal
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.fakes.editor import FakeEditor


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    return QueryOptions(
        cwd=tmp_path, provider=model, permission_mode="acceptEdits", env=env, **more
    )


async def submit(session: Session, prompt: str) -> Finished:
    events: list[Event] = [event async for event in session.submit(prompt)]
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def results(finished: Finished) -> list[ToolResultBlock]:
    return [
        block
        for message in finished.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_the_model_reads_and_edits_the_editors_buffer(tmp_path: Path) -> None:
    path = (tmp_path / "app.py").resolve()
    path.write_text("x = 1\n")
    editor = FakeEditor({path: "x = 1  # unsaved\n"})
    model = ScriptedProvider(
        [
            tool_call("Read", {"file_path": str(path)}),
            tool_call(
                "Edit",
                {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 2"},
                id="toolu_edit",
            ),
            text("Done."),
        ]
    )
    async with Session(options(tmp_path, model, editor=editor)) as session:
        finished = await submit(session, "make x 2")
    assert finished.terminal is Terminal.COMPLETED
    read, edit = results(finished)
    assert read.content == (TextBlock("     1\tx = 1  # unsaved"),)
    assert not edit.is_error
    assert editor.buffers[path] == "x = 2  # unsaved\n"
    assert path.read_text() == "x = 1\n"
    model.assert_done()


async def test_a_deny_rule_stops_the_read_before_the_editor_is_asked(tmp_path: Path) -> None:
    path = (tmp_path / ".env").resolve()
    path.write_text("KEY=1\n")
    editor = FakeEditor({path: "KEY=secret\n"})
    model = ScriptedProvider([tool_call("Read", {"file_path": str(path)}), text("No.")])
    more = {"editor": editor, "disallowed_tools": ["Read(.env)"]}
    async with Session(options(tmp_path, model, **more)) as session:
        finished = await submit(session, "show .env")
    (denied,) = results(finished)
    assert denied.is_error
    assert "secret" not in str(denied.content)
    assert editor.reads == []


async def test_clear_forgets_what_was_read_in_the_editor(tmp_path: Path) -> None:
    path = (tmp_path / "a.txt").resolve()
    path.write_text("a\n")
    editor = FakeEditor({path: "a\n"})
    model = ScriptedProvider(
        [
            tool_call("Read", {"file_path": str(path)}),
            text("Read it."),
            tool_call("Write", {"file_path": str(path), "content": "b\n"}),
            text("Could not."),
        ]
    )
    async with Session(options(tmp_path, model, editor=editor)) as session:
        await submit(session, "read a.txt")
        await session.clear()
        finished = await submit(session, "overwrite a.txt")
    (refused,) = results(finished)
    assert refused.is_error
    assert "has not been read yet" in str(refused.content)
    assert editor.writes == []
