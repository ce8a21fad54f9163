"""`stayer acp` when something goes wrong on stayer's side or the editor's edge: a run a bug of
stayer's breaks still answers its prompt (an error of one line) and the session goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import acp
import pytest
from acp.schema import TextContentBlock

from stayer.ui.acp.prompts import AcpBlock
from tests.e2e.acp_client import stayer_acp
from tests.fakes.faulty_stayer import MARKER
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

CHECKOUT = Path(__file__).parents[2]


def _text(value: str) -> list[AcpBlock]:
    return [TextContentBlock(type="text", text=value)]


async def test_a_run_broken_by_a_bug_answers_its_prompt_and_the_session_goes_on(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply(f"and then {MARKER}"), reply("all well again"))
    faulty = {"module": "tests.fakes.faulty_stayer", "env": {"PYTHONPATH": str(CHECKOUT)}}
    async with stayer_acp(server, tmp_path, **faulty) as (conn, _, editor):  # type: ignore[arg-type]
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as broken:
            async with asyncio.timeout(20):  # before the fix: never answered
                await conn.prompt(session_id=session.session_id, prompt=_text("one"))
        assert "a planted fault" in str(broken.value.data)
        async with asyncio.timeout(20):
            again = await conn.prompt(session_id=session.session_id, prompt=_text("two"))
        assert again.stop_reason == "end_turn"
        assert "all well again" in editor.text()
    assert server.violations == []
    last = server.requests[-1].body["messages"]
    assert last[0]["role"] == "user" and "two" in str(last[-1]["content"])
