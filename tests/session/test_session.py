"""`stayer.Session`: one conversation across prompts, its transcript, and going on from it."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import stayer
from stayer.events import Compacted, Event, Finished, SessionStarted, Terminal
from stayer.loop.state import CompactPolicy
from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    history_problems,
)
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.listings import is_listing
from stayer.session.options import QueryOptions
from stayer.session.repair import INTERRUPTED_NOTE, UNKNOWN_OUTCOME
from stayer.session.session import Session, SessionBusy
from stayer.session.transcript import load
from stayer.tools.base import Tool, ToolContext, ToolOutput
from tests.unit.tools.helpers import is_running


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    config = tmp_path / "config"
    env = {"STAYER_CONFIG_DIR": str(config), **more.pop("env", {})}
    return QueryOptions(
        cwd=tmp_path, provider=model, permission_mode="acceptEdits", env=env, **more
    )


async def submit(session: Session, prompt: str) -> list[Event]:
    return [event async for event in session.submit(prompt)]


def finished(events: list[Event]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


async def test_a_file_read_in_one_prompt_can_be_edited_in_the_next(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("x = 1\n")
    model = ScriptedProvider(
        [
            tool_call("Read", {"file_path": str(target)}),
            text("It sets x to 1."),
            tool_call(
                "Edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"}
            ),
            text("Now x is 2."),
        ]
    )
    async with Session(options(tmp_path, model)) as session:
        first = await submit(session, "what does app.py do?")
        second = await submit(session, "make x 2")

    assert [type(e) for e in first].count(SessionStarted) == 1
    assert not any(isinstance(e, SessionStarted) for e in second)  # a session, not a run
    assert finished(second).terminal is Terminal.COMPLETED
    assert target.read_text() == "x = 2\n"  # the Read of the first prompt still counts
    assert finished(second).messages[:4] == finished(first).messages
    assert model.requests[2].messages[:4] == finished(first).messages
    model.assert_done()


async def test_a_file_changed_on_disk_between_prompts_must_be_read_again(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("x = 1\n")
    edit: dict[str, object] = {
        "file_path": str(target),
        "old_string": "x = 1",
        "new_string": "x = 2",
    }
    model = ScriptedProvider(
        [
            tool_call("Read", {"file_path": str(target)}),
            text("It sets x to 1."),
            tool_call("Edit", edit),
            text("It changed under me."),
        ]
    )
    async with Session(options(tmp_path, model)) as session:
        await submit(session, "what does app.py do?")
        target.write_text("x = 1  # someone else\n")
        os.utime(target, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        await submit(session, "make x 2")

    (refused,) = [
        b for b in model.requests[3].messages[-1].content if isinstance(b, ToolResultBlock)
    ]
    assert refused.is_error
    assert "modified" in refused.text or "changed" in refused.text
    assert target.read_text() == "x = 1  # someone else\n"  # nothing was overwritten


async def test_a_second_prompt_while_one_runs_is_refused_or_queued(tmp_path: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    class Hold(Tool[Empty]):
        name = "Hold"
        description = "Wait until released."
        input_model = Empty
        read_only = True

        async def call(self, tool_input: Empty, ctx: ToolContext) -> ToolOutput:
            started.set()
            await release.wait()
            return ToolOutput("released")

    for busy in ("refuse", "queue"):
        started.clear()
        release.clear()
        model = ScriptedProvider([tool_call("Hold", {}), text("one"), text("two")])
        session = Session(options(tmp_path, model), busy=busy)
        session.setup = _with_tools(session, [Hold()])
        first = asyncio.create_task(submit(session, "first"))
        await started.wait()
        if busy == "refuse":
            with pytest.raises(SessionBusy, match="already running in this session"):
                await submit(session, "second")
            release.set()
            assert finished(await first).result_text == "one"
            assert finished(await submit(session, "second")).result_text == "two"
        else:
            second = asyncio.create_task(submit(session, "second"))
            release.set()
            assert finished(await first).result_text == "one"
            assert finished(await second).result_text == "two"
        await session.aclose()


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _with_tools(session: Session, tools: list[Tool[Any]]) -> Any:
    from msgspec.structs import replace

    from stayer.tools.base import Toolbox

    params = replace(session.setup.params, tools=Toolbox.of(tools))
    return replace(session.setup, params=params)


async def test_interrupt_stops_the_running_prompt_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    started = asyncio.Event()

    class Forever(Tool[Empty]):
        name = "Forever"
        description = "Never ends on its own."
        input_model = Empty
        read_only = True

        async def call(self, tool_input: Empty, ctx: ToolContext) -> ToolOutput:
            started.set()
            await asyncio.Event().wait()
            return ToolOutput("never")

    model = ScriptedProvider([tool_call("Forever", {}), text("Fresh start.")])
    async with Session(options(tmp_path, model)) as session:
        session.setup = _with_tools(session, [Forever()])
        running = asyncio.create_task(submit(session, "wait"))
        await started.wait()
        session.interrupt()
        stopped = finished(await running)
        again = finished(await submit(session, "go on"))

    assert stopped.terminal is Terminal.ABORTED_TOOLS
    assert history_problems(stopped.messages) == []
    assert again.terminal is Terminal.COMPLETED
    assert history_problems(model.requests[1].messages) == []


async def test_every_message_is_on_disk_before_the_next_step_starts(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    session_box: list[Session] = []

    class Peek(Tool[Empty]):
        name = "Peek"
        description = "Look at the transcript while running."
        input_model = Empty
        read_only = True

        async def call(self, tool_input: Empty, ctx: ToolContext) -> ToolOutput:
            path = session_box[0].transcript_path
            assert path is not None
            seen.append([json.loads(line)["type"] for line in path.read_text().splitlines()])
            return ToolOutput("peeked")

    model = ScriptedProvider([tool_call("Peek", {}), text("done")])
    async with Session(options(tmp_path, model)) as session:
        session_box.append(session)
        session.setup = _with_tools(session, [Peek()])
        await submit(session, "peek")
        path = session.transcript_path

    # while the tool ran, the prompt and the answer that called it were already written
    assert seen == [["user", "assistant"]]
    assert path is not None
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant", "user", "user", "assistant"]
    # the call's result was written as it finished, hanging off the answer that made the call;
    # the round's message, with the same result, is the chain's, hanging off the answer too
    finished = records.pop(2)
    assert finished["parentUuid"] == records[1]["uuid"]
    assert finished["message"] == records[2]["message"]
    for previous, record in itertools.pairwise(records):
        assert record["parentUuid"] == previous["uuid"]
    assert records[0]["parentUuid"] is None
    first = records[0]
    assert {"uuid", "sessionId", "timestamp", "cwd", "gitBranch", "version"} <= set(first)
    assert first["sessionId"] == session.session_id and first["cwd"] == str(tmp_path.resolve())
    answer = records[-1]["message"]
    assert (answer["model"], answer["stop_reason"]) == ("scripted", "end_turn")
    assert "usage" in answer


async def test_secrets_from_the_environment_never_reach_the_file(tmp_path: Path) -> None:
    secret = "sk-ant-very-secret-value-123"
    model = ScriptedProvider([text(f"Your key is {secret}.")])
    opts = options(tmp_path, model, env={"ANTHROPIC_API_KEY": secret})
    async with Session(opts) as session:
        await submit(session, f"is {secret} right?")
        path = session.transcript_path
    assert path is not None
    written = path.read_text()
    assert secret not in written
    assert "[ANTHROPIC_API_KEY redacted]" in written


async def test_no_persistence_writes_nothing(tmp_path: Path) -> None:
    model = ScriptedProvider([text("hi")])
    async with Session(options(tmp_path, model, persist_session=False)) as session:
        await submit(session, "hello")
        assert session.transcript_path is None
    assert not (tmp_path / "config").exists()


def _unlisted(message: Message) -> Message:
    """`message` without the listing of agent types and skills the session adds to the first."""
    if not isinstance(message, UserMessage):
        return message
    said = (b for b in message.content if not (isinstance(b, TextBlock) and is_listing(b.text)))
    return UserMessage(tuple(said))


async def test_a_session_resumed_by_id_goes_on_in_the_same_file(tmp_path: Path) -> None:
    model = ScriptedProvider([text("First answer.")])
    async with Session(options(tmp_path, model)) as session:
        await submit(session, "first")
        session_id, path = session.session_id, session.transcript_path
    assert path is not None

    model = ScriptedProvider([text("Second answer.")])
    async with Session(options(tmp_path, model, resume=session_id)) as resumed:
        assert resumed.session_id == session_id and resumed.transcript_path == path
        events = await submit(resumed, "second")
    assert tuple(map(_unlisted, model.requests[0].messages)) == (
        UserMessage.of_text("first"),
        _answer("First answer.", 1),
        UserMessage.of_text("second"),
    )
    assert finished(events).terminal is Terminal.COMPLETED
    assert load(path).messages == finished(events).messages  # one chain, one file


async def test_continue_takes_the_latest_and_fork_starts_a_new_id(tmp_path: Path) -> None:
    for word in ("old", "new"):
        async with Session(options(tmp_path, ScriptedProvider([text(word)]))) as session:
            await submit(session, word)
            latest = session.session_id

    model = ScriptedProvider([text("forked")])
    opts = options(tmp_path, model, continue_session=True, fork_session=True)
    async with Session(opts) as forked:
        assert forked.session_id != latest
        await submit(forked, "go on")
        fork_path = forked.transcript_path
    assert _unlisted(model.requests[0].messages[0]) == UserMessage.of_text("new")
    assert fork_path is not None and fork_path.stem != latest
    assert len(load(fork_path).messages) == 4


async def test_a_resumed_conversation_is_repaired_and_the_model_told(tmp_path: Path) -> None:
    call = ToolUseBlock("toolu_lost", "Bash", {"command": "make"})
    model = ScriptedProvider([Reply((call,))])
    async with Session(options(tmp_path, model)) as session:
        writer = session._transcript
        assert writer is not None
        # what a process killed while its tool ran leaves behind: the call, no result
        writer.sync((UserMessage.of_text("build it"), _answer_with(call)))
        session_id = session.session_id

    model = ScriptedProvider([text("I will check the build.")])
    async with Session(options(tmp_path, model, resume=session_id)) as resumed:
        assert resumed.warnings == (
            "repaired the saved conversation: tool calls in message 1 get no result: toolu_lost",
        )
        await submit(resumed, "go on")
    sent = model.requests[0].messages
    assert history_problems(sent) == []
    results = sent[2].content
    assert results[0] == ToolResultBlock("toolu_lost", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
    assert results[1:] == (TextBlock(INTERRUPTED_NOTE), TextBlock("go on"))


async def test_after_a_compaction_the_resumed_conversation_is_what_the_model_last_saw(
    tmp_path: Path,
) -> None:
    big = ToolUseBlock("toolu_big", "Echo", {"text": "x"})
    script = [Reply((big,), usage=Usage(input_tokens=30_000)), text("NOTES"), text("done")]
    model = ScriptedProvider(script)
    async with Session(options(tmp_path, model)) as session:
        from msgspec.structs import replace

        from tests.fakes.tools import Echo

        session.setup = _with_tools(session, [Echo()])
        params = replace(
            session.setup.params,
            context_window=40_000,
            max_tokens=1_000,
            compaction=CompactPolicy(),
        )
        session.setup = replace(session.setup, params=params)
        events = await submit(session, "work")
        session_id, path = session.session_id, session.transcript_path
    assert any(isinstance(e, Compacted) for e in events)
    assert path is not None
    boundary = [json.loads(line) for line in path.read_text().splitlines()]
    assert any(r.get("subtype") == "compact_boundary" for r in boundary)

    model = ScriptedProvider([text("again")])
    async with Session(options(tmp_path, model, resume=session_id)) as resumed:
        await submit(resumed, "more")
    assert model.requests[0].messages[:-1] == finished(events).messages
    assert model.requests[0].messages[0].content[0].text.startswith("[This conversation ran out")  # type: ignore[union-attr]


async def test_a_torn_last_line_is_skipped_with_one_warning(tmp_path: Path) -> None:
    model = ScriptedProvider([text("Answer.")])
    async with Session(options(tmp_path, model)) as session:
        await submit(session, "question")
        session_id, path = session.session_id, session.transcript_path
    assert path is not None
    with path.open("a") as file:
        file.write('{"type": "user", "message": {"role": "user", "content": "half')

    model = ScriptedProvider([text("Again.")])
    async with Session(options(tmp_path, model, resume=session_id)) as resumed:
        assert resumed.warnings == (f"{path}: the last write was cut short (line 3); skipped",)
        await submit(resumed, "more")
    assert len(model.requests[0].messages) == 3


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"resume": "not-a-session"}, r"give a session id \(a UUID\) or a transcript's path"),
        (
            {"resume": "0b6c3c0e-1d2e-4f3a-9b8c-7d6e5f4a3b2c"},
            "no session 0b6c3c0e-1d2e-4f3a-9b8c-7d6e5f4a3b2c saved for this folder",
        ),
        ({"resume": "/no/such/file.jsonl"}, "no such transcript file"),
        ({"continue_session": True}, "no saved session to continue"),
    ],
)
def test_what_cannot_be_resumed_is_said_in_one_line(
    tmp_path: Path, given: dict[str, Any], message: str
) -> None:
    with pytest.raises(stayer.ConfigError, match=message) as refused:
        Session(options(tmp_path, ScriptedProvider([]), **given))
    assert "\n" not in str(refused.value)


def _answer(value: str, number: int) -> AssistantMessage:
    return AssistantMessage(
        (TextBlock(value),),
        id=f"msg_scripted_{number}",
        model="scripted",
        stop_reason="end_turn",
        usage=Usage(input_tokens=100, output_tokens=20),
    )


def _answer_with(call: ToolUseBlock) -> AssistantMessage:
    return AssistantMessage((call,), id="msg_lost", model="scripted", stop_reason="tool_use")


async def _until_file(path: Path) -> None:
    for _ in range(500):
        if path.exists():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path.name} never appeared")


async def test_a_background_shell_outlives_its_prompt_and_dies_with_the_session(
    tmp_path: Path,
) -> None:
    command = "echo serving; touch up; exec sleep 60"
    model = ScriptedProvider(
        [
            tool_call("Bash", {"command": command, "run_in_background": True}),
            text("Started."),
            tool_call("BashOutput", {"bash_id": "bash_1"}),
            text("Still serving."),
        ]
    )
    chosen = options(tmp_path, model, allowed_tools="Bash")
    async with Session(chosen) as session:
        await submit(session, "start the server")
        (shell,) = session.setup.params.tool_context.shells.list()
        await _until_file(tmp_path / "up")  # printed, so in the pipe by now
        await submit(session, "is it up?")
        running = shell.status
    assert (running, shell.status, is_running(shell.pid)) == ("running", "killed", False)
    started, read = (model.requests[i].messages[-1].content[0] for i in (1, 3))
    assert isinstance(started, ToolResultBlock) and isinstance(read, ToolResultBlock)
    assert started.content[0] == TextBlock(
        "Command running in background with ID: bash_1. Read its output with BashOutput and "
        "stop it with KillShell."
    )
    assert read.content[0] == TextBlock("<status>running</status>\n\n<stdout>\nserving\n</stdout>")
