"""The "/" menu and the session's own commands over ACP, driven by the official `acp` client
against a real `stayer acp`: each opened session gets an `available_commands_update` listing
`/compact`, `/clear` and the project's custom commands; a prompt "/compact" summarises the
conversation, "/clear" starts it over, neither sent to the model as text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import acp
import pytest
from acp.schema import TextContentBlock

from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import Editor, stayer_acp
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


def _menu(editor: Editor) -> dict[str, tuple[str, str | None]]:
    """The commands of the last menu update: name → (description, argument hint)."""
    [*_, last] = editor.of_kind("available_commands_update")
    return {
        command.name: (command.description, command.input.root.hint if command.input else None)
        for command in last.available_commands
    }


async def test_a_new_and_a_loaded_session_announce_their_commands(
    server: FakeModelServer, tmp_path: Path
) -> None:
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review the change\nargument-hint: <file>\n---\nReview $ARGUMENTS\n"
    )
    server.enqueue(reply("Reviewed."))
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await editor.wait_for(lambda: bool(editor.of_kind("available_commands_update")))
        menu = _menu(editor)
        await conn.prompt(session_id=session.session_id, prompt=_text("/review a.py"))

    assert menu["review"] == ("Review the change", "<file>")
    assert menu["compact"][1] and menu["clear"][1] is None
    assert "Review a.py" in json.dumps(server.requests[0].messages)  # the command expanded

    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
        await editor.wait_for(lambda: bool(editor.of_kind("available_commands_update")))
    assert "review" in _menu(editor)


async def test_compact_summarises_and_clear_starts_over_without_the_model_seeing_them(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("First answer."), reply("Summary: one question so far."))
    server.enqueue(reply("Answer after the summary."), reply("Answer after clearing."))
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=_text("the first question"))
        compacted = await conn.prompt(session_id=sid, prompt=_text("/compact keep the numbers"))
        await conn.prompt(session_id=sid, prompt=_text("after the summary"))
        cleared = await conn.prompt(session_id=sid, prompt=_text("/clear"))
        await conn.prompt(session_id=sid, prompt=_text("a fresh question"))

    assert compacted.stop_reason == "end_turn" and cleared.stop_reason == "end_turn"
    assert len(server.requests) == 4  # neither command went to the model as text
    assert "keep the numbers" in json.dumps(server.requests[1].messages)
    after_summary = json.dumps(server.requests[2].messages)
    assert "one question so far" in after_summary and "First answer." not in after_summary
    fresh = json.dumps(server.requests[3].messages)
    assert "a fresh question" in fresh and "one question so far" not in fresh


async def test_compact_with_nothing_to_compact_is_an_error(
    server: FakeModelServer, tmp_path: Path
) -> None:
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as refused:
            await conn.prompt(session_id=session.session_id, prompt=_text("/compact"))

    assert "nothing to compact" in str(refused.value.data)
    assert server.requests == []


async def test_cancel_during_compact_ends_it_cancelled_and_the_conversation_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    held = reply("Summary never finished.").render("anthropic").paused(at=2)
    server.enqueue(reply("First answer."), held)
    server.enqueue(reply("Still whole."))
    async with stayer_acp(server, tmp_path) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=_text("the first question"))
        compacting = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=_text("/compact")))
        await asyncio.to_thread(server.wait_for_requests, 2, 20.0)  # the summary is asked
        await conn.cancel(session_id=sid)
        async with asyncio.timeout(20):
            cancelled = await compacting
        server.resume()
        again = await conn.prompt(session_id=sid, prompt=_text("the second question"))

    assert cancelled.stop_reason == "cancelled" and again.stop_reason == "end_turn"
    kept = json.dumps(server.requests[-1].messages)
    assert "First answer." in kept and "Summary never finished." not in kept
