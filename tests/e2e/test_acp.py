"""`stayer acp` driven by the official `acp` package's client over a real subprocess, against
the fake model server: initialise, open a session, prompt and see the answer stream."""

from __future__ import annotations

from pathlib import Path

import acp
from acp.schema import TextContentBlock

from tests.e2e.acp_client import stayer_acp
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


def _text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


async def test_initialize_new_session_and_a_prompt_streams_the_answer(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("Hello from stayer."))
    async with stayer_acp(server, tmp_path) as (conn, _, editor):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.protocol_version == 1
        capabilities = init.agent_capabilities
        assert capabilities is not None and capabilities.load_session is True
        assert init.agent_info is not None and init.agent_info.name == "stayer"

        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == "default"
        response = await conn.prompt(session_id=session.session_id, prompt=[_text("hi")])

    assert response.stop_reason == "end_turn"
    assert editor.text() == "Hello from stayer."
    chunks = editor.of_kind("agent_message_chunk")
    assert len({chunk.message_id for chunk in chunks}) == 1 and chunks[0].message_id
    assert editor.of_kind("usage_update")
    sent = server.requests[0].messages
    assert any(block.get("text") == "hi" for block in sent[-1]["content"])
