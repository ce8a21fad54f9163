"""`stayer acp` driven by the official `acp` package's client over a real subprocess, against
the fake model server: initialise, open a session, prompt and see the answer stream; tool calls
with their permission questions; cancel; load a saved session in a new process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import stayer_acp, until_exists
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import Text, Thinking, ToolCall, reply
from tests.process_table import family_command, gone_within, read_pids


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


async def test_initialize_new_session_and_a_prompt_streams_the_answer(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(Thinking("Greet back."), Text("Hello from stayer.")))
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.protocol_version == 1
        capabilities = init.agent_capabilities
        assert capabilities is not None and capabilities.load_session is True
        assert init.agent_info is not None and init.agent_info.name == "stayer"

        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == "default"
        response = await conn.prompt(session_id=session.session_id, prompt=_text("hi"))

    assert response.stop_reason == "end_turn"
    assert response.usage is not None and response.usage.output_tokens > 0
    assert editor.text() == "Hello from stayer."
    assert editor.text("agent_thought_chunk") == "Greet back."
    chunks = editor.of_kind("agent_message_chunk") + editor.of_kind("agent_thought_chunk")
    assert len({chunk.message_id for chunk in chunks}) == 1 and chunks[0].message_id
    usage = editor.of_kind("usage_update")
    assert usage and usage[-1].size > usage[-1].used > 0
    sent = server.requests[0].messages
    assert any(block.get("text") == "hi" for block in sent[-1]["content"])


async def test_a_write_asks_the_editor_allowed_then_rejected(
    server: FakeModelServer, tmp_path: Path
) -> None:
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    server.enqueue(
        reply(ToolCall("toolu_1", "Write", {"file_path": str(first), "content": "one\n"})),
        reply("Wrote it."),
        reply(ToolCall("toolu_2", "Write", {"file_path": str(second), "content": "two\n"})),
        reply("Understood, I left it."),
    )
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        editor.answers = ["allow", "reject"]
        allowed = await conn.prompt(session_id=session.session_id, prompt=_text("write one"))
        rejected = await conn.prompt(session_id=session.session_id, prompt=_text("write two"))

    assert (allowed.stop_reason, rejected.stop_reason) == ("end_turn", "end_turn")
    assert first.read_text() == "one\n" and not second.exists()
    asked = [(call.tool_call_id, call.kind) for call, _ in editor.questions]
    assert asked == [("toolu_1", "edit"), ("toolu_2", "edit")]
    kinds = {option.kind for option in editor.questions[0][1]}
    assert {"allow_once", "reject_once"} <= kinds

    starts = editor.of_kind("tool_call")
    assert [(s.tool_call_id, s.status, s.kind) for s in starts] == [
        ("toolu_1", "pending", "edit"),
        ("toolu_2", "pending", "edit"),
    ]
    diff = starts[0].content[0]
    assert (diff.type, diff.path, diff.new_text) == ("diff", str(first), "one\n")
    assert starts[0].locations[0].path == str(first)
    ends = [(u.tool_call_id, u.status) for u in editor.of_kind("tool_call_update") if u.status]
    assert ends == [
        ("toolu_1", "in_progress"),
        ("toolu_1", "pending"),  # while the question waits
        ("toolu_1", "in_progress"),
        ("toolu_1", "completed"),
        ("toolu_2", "in_progress"),
        ("toolu_2", "pending"),
        ("toolu_2", "failed"),
    ]
    result = server.requests[3].messages[-1]["content"][0]
    assert result["tool_use_id"] == "toolu_2" and result["is_error"] is True


async def test_allow_always_keeps_a_session_rule_so_the_next_write_is_not_asked(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Write", {"file_path": str(tmp_path / "a.txt"), "content": "a"})),
        reply(ToolCall("toolu_2", "Write", {"file_path": str(tmp_path / "b.txt"), "content": "b"})),
        reply("Both written."),
    )
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        editor.answers = ["allow_always"]
        done = await conn.prompt(session_id=session.session_id, prompt=_text("write both"))

    assert done.stop_reason == "end_turn"
    assert [call.tool_call_id for call, _ in editor.questions] == ["toolu_1"]
    assert (tmp_path / "b.txt").read_text() == "b"
    assert not (tmp_path / ".stayer" / "settings.local.json").exists()  # a session rule only


@pytest.mark.parametrize("answer", [None, "error", "yes-please"])
async def test_a_question_cancelled_failed_or_answered_oddly_is_a_rejection(
    server: FakeModelServer, tmp_path: Path, answer: str | None
) -> None:
    target = tmp_path / "x.txt"
    server.enqueue(
        reply(ToolCall("toolu_1", "Write", {"file_path": str(target), "content": "x"})),
        reply("Not written."),
    )
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        editor.answers = [answer]  # cancelled, an error reply, an option never offered
        done = await conn.prompt(session_id=session.session_id, prompt=_text("write"))
    assert done.stop_reason == "end_turn" and not target.exists()
    result = server.requests[1].messages[-1]["content"][0]
    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is True


async def test_cancel_during_a_long_tool_ends_the_prompt_cancelled_and_kills_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": family_command(pids_file)})),
        reply("Fresh start."),
    )
    async with stayer_acp(server, tmp_path, "--allowedTools", "Bash") as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        running = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=_text("run it"))
        )
        await until_exists(pids_file)
        pids = read_pids(pids_file)
        await conn.cancel(session_id=session.session_id)
        async with asyncio.timeout(10):
            cancelled = await running
        await gone_within(pids, 10)
        again = await conn.prompt(session_id=session.session_id, prompt=_text("go on"))

    assert cancelled.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"
    ends = [(u.tool_call_id, u.status) for u in editor.of_kind("tool_call_update") if u.status]
    assert ends[-1] == ("toolu_1", "failed")


async def test_load_replays_a_saved_session_in_a_new_process(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(
        reply("Let me look.", ToolCall("toolu_1", "Bash", {"command": "echo replayed"})),
        reply("It printed replayed."),
        reply("Still here."),
    )
    async with stayer_acp(server, tmp_path, "--allowedTools", "Bash") as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("echo something"))

    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert [info.session_id for info in listed.sessions] == [session.session_id]
        assert listed.sessions[0].title == "echo something"
        await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
        replayed = [(u.session_update, _shown(u)) for u in _history(editor.updates)]
        more = await conn.prompt(session_id=session.session_id, prompt=_text("and now?"))

    assert replayed == [
        ("user_message_chunk", "echo something"),
        ("agent_message_chunk", "Let me look."),
        ("tool_call", "Bash echo replayed"),
        ("tool_call_update", "completed"),
        ("agent_message_chunk", "It printed replayed."),
    ]
    assert more.stop_reason == "end_turn"
    history = server.requests[-1].messages
    assert len(history) == 5  # the saved four and the new prompt


def _history(updates: list[Any]) -> list[Any]:
    """The updates that tell of the conversation (not the menu of commands)."""
    return [u for u in updates if u.session_update != "available_commands_update"]


def _shown(update: object) -> str:
    for name in ("title", "status"):
        value = getattr(update, name, None)
        if isinstance(value, str):
            return value
    content = getattr(update, "content", None)
    return str(getattr(content, "text", ""))


@pytest.mark.parametrize("mode", ["acceptEdits", "plan"])
async def test_set_mode_switches_the_permission_mode(
    server: FakeModelServer, tmp_path: Path, mode: str
) -> None:
    target = tmp_path / "a.txt"
    server.enqueue(
        reply(ToolCall("toolu_1", "Write", {"file_path": str(target), "content": "a"})),
        reply("Done."),
    )
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.modes is not None
        offered = [m.id for m in session.modes.available_modes]
        assert offered == ["default", "acceptEdits", "plan"]
        await conn.set_session_mode(session_id=session.session_id, mode_id=mode)
        await conn.prompt(session_id=session.session_id, prompt=_text("write"))
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id="bypassPermissions")

    assert refused.value.code == -32602
    assert "offers default, acceptEdits, plan" in str(refused.value.data)
    assert editor.questions == []  # accepted edits run; plan mode refuses the write outright
    assert target.exists() is (mode == "acceptEdits")


async def test_the_model_config_option_switches_the_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("one"), reply("two"))
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.config_options is not None
        model = session.config_options[0]
        assert (model.id, model.category) == ("model", "model")
        values = [option.value for option in model.options]
        assert "haiku" in values
        await conn.prompt(session_id=session.session_id, prompt=_text("first"))
        changed = await conn.set_config_option(
            session_id=session.session_id, config_id="model", value="haiku"
        )
        await conn.prompt(session_id=session.session_id, prompt=_text("second"))
        with pytest.raises(acp.RequestError):
            await conn.set_config_option(
                session_id=session.session_id, config_id="model", value="no-such-model"
            )

    assert changed.config_options[0].current_value == "haiku"
    first, second = server.requests
    assert first.model != second.model and "haiku" in second.model


async def test_a_todo_list_is_the_plan_and_a_second_prompt_while_one_runs_is_refused(
    server: FakeModelServer, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    ]
    server.enqueue(
        reply(ToolCall("toolu_1", "TodoWrite", {"todos": todos})),
        reply(ToolCall("toolu_2", "Bash", {"command": family_command(pids_file)})),
    )
    async with stayer_acp(server, tmp_path, "--allowedTools", "Bash") as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        running = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=_text("plan and run"))
        )
        await until_exists(pids_file)
        with pytest.raises(acp.RequestError) as refused:
            await conn.prompt(session_id=session.session_id, prompt=_text("meanwhile"))
        await conn.cancel(session_id=session.session_id)
        assert (await running).stop_reason == "cancelled"

    assert refused.value.code == -32600
    assert "already running" in str(refused.value.data)
    plans = editor.of_kind("plan")
    assert [[(e.content, e.status) for e in plan.entries] for plan in plans] == [
        [("Read the code", "completed"), ("Fix the bug", "in_progress")]
    ]
    todo = editor.of_kind("tool_call")[0]
    assert (todo.tool_call_id, todo.kind) == ("toolu_1", "think")


async def test_images_and_embedded_files_reach_the_model(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("I see them."))
    pixel = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
        "RU5ErkJggg=="
    )
    prompt: list[AcpBlock] = [
        TextContentBlock(type="text", text="look"),
        ImageContentBlock(type="image", mime_type="image/png", data=pixel),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///x/notes.md", text="the notes"),
        ),
    ]
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.agent_capabilities is not None
        prompts = init.agent_capabilities.prompt_capabilities
        assert prompts is not None and (prompts.image, prompts.embedded_context) == (True, True)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=prompt)

    assert done.stop_reason == "end_turn"
    content = server.requests[0].messages[-1]["content"]
    image = next(block for block in content if block["type"] == "image")
    assert image["source"]["data"] == pixel
    texts = [block["text"] for block in content if block["type"] == "text"]
    assert any("file:///x/notes.md" in t and "the notes" in t for t in texts)


async def test_resume_fork_and_close_a_saved_session(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("first"), reply("resumed"), reply("forked"))
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("one"))

    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.agent_capabilities is not None
        sessions = init.agent_capabilities.session_capabilities
        assert sessions is not None and sessions.resume is not None and sessions.close is not None
        await conn.resume_session(cwd=str(tmp_path), session_id=session.session_id)
        assert _history(editor.updates) == []  # resume replays nothing
        await conn.prompt(session_id=session.session_id, prompt=_text("two"))
        fork = await conn.fork_session(cwd=str(tmp_path), session_id=session.session_id)
        await conn.prompt(session_id=fork.session_id, prompt=_text("three"))
        await conn.close_session(session_id=session.session_id)
        with pytest.raises(acp.RequestError) as closed:
            await conn.prompt(session_id=session.session_id, prompt=_text("four"))
        with pytest.raises(acp.RequestError) as path:
            await conn.load_session(cwd=str(tmp_path), session_id="/etc/passwd")

    assert fork.session_id != session.session_id
    assert [len(request.messages) for request in server.requests] == [1, 3, 5]
    assert "no open session" in str(closed.value.data)
    assert "is not a session id" in str(path.value.data)


async def test_session_start_hooks_run_before_the_first_prompt(
    server: FakeModelServer, tmp_path: Path
) -> None:
    hook = {"type": "command", "command": "echo Branch main is frozen."}
    settings = json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [hook]}]}})
    server.enqueue(reply("Noted."))
    async with stayer_acp(server, tmp_path, "--settings", settings) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("hi"))

    assert "Branch main is frozen." in json.dumps(server.requests[0].messages)
