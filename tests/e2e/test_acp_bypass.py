"""`stayer acp --allow-dangerously-skip-permissions` driven by the official `acp` client over a
real subprocess: every session it opens (new, loaded, resumed, forked) offers bypassPermissions
and switches into it, after which a Bash call runs without asking the editor; without the flag
the switch is one JSON-RPC error and the mode stays, so the editor is still asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import TextContentBlock

from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import stayer_acp
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

ALLOW = "--allow-dangerously-skip-permissions"
BYPASS = "bypassPermissions"


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


def _bash(marker: Path) -> Any:
    return reply(ToolCall("toolu_b", "Bash", {"command": f"echo ran > {marker}"}))


async def _saved_session(server: FakeModelServer, cwd: Path) -> str:
    """A session saved by an earlier `stayer acp` (one prompt answered)."""
    server.enqueue(reply("first"))
    async with stayer_acp(server, cwd) as (conn, _, _editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=_text("one"))
    return session.session_id


async def _open(conn: Any, how: str, cwd: Path, saved: str | None) -> tuple[str, Any]:
    """The session opened `how`, and the modes it offers."""
    if how == "new":
        opened = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        return opened.session_id, opened.modes
    if how == "load":
        opened = await conn.load_session(cwd=str(cwd), session_id=saved, mcp_servers=[])
        return str(saved), opened.modes
    if how == "resume":
        opened = await conn.resume_session(cwd=str(cwd), session_id=saved)
        return str(saved), opened.modes
    opened = await conn.fork_session(cwd=str(cwd), session_id=saved)
    return opened.session_id, opened.modes


@pytest.mark.parametrize("how", ["new", "load", "resume", "fork"])
async def test_with_the_flag_every_session_switches_to_bypass_and_bash_runs_unasked(
    server: FakeModelServer, tmp_path: Path, how: str
) -> None:
    saved = None if how == "new" else await _saved_session(server, tmp_path)
    marker = tmp_path / "ran.txt"
    server.enqueue(_bash(marker), reply("Done."))
    async with stayer_acp(server, tmp_path, ALLOW) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session_id, modes = await _open(conn, how, tmp_path, saved)
        editor.answers = ["reject"]  # were the editor asked, the call would not run
        await conn.set_session_mode(session_id=session_id, mode_id=BYPASS)
        response = await conn.prompt(session_id=session_id, prompt=_text("run it"))

    assert modes is not None and modes.current_mode_id == "default"
    assert [mode.id for mode in modes.available_modes][-1] == BYPASS
    assert response.stop_reason == "end_turn"
    assert editor.questions == []
    assert marker.read_text() == "ran\n"


async def test_without_the_flag_the_switch_is_refused_and_the_editor_is_still_asked(
    server: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "ran.txt"
    server.enqueue(_bash(marker), reply("Left it."))
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id=BYPASS)
        editor.answers = ["reject"]
        await conn.prompt(session_id=session.session_id, prompt=_text("run it"))

    assert session.modes is not None
    assert BYPASS not in [mode.id for mode in session.modes.available_modes]
    assert refused.value.code == -32602
    assert [call.tool_call_id for call, _ in editor.questions] == ["toolu_b"]
    assert not marker.exists()


async def test_settings_that_turn_bypass_off_win_over_the_flag(
    server: FakeModelServer, tmp_path: Path
) -> None:
    settings = '{"permissions": {"disableBypassPermissionsMode": "disable"}}'
    async with stayer_acp(server, tmp_path, ALLOW, "--settings", settings) as (conn, _, _e):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id=BYPASS)

    assert session.modes is not None
    assert BYPASS not in [mode.id for mode in session.modes.available_modes]
    assert refused.value.code == -32602
