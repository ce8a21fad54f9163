"""A Session over the real wire: every prompt of it goes through one connection, under one id."""

from __future__ import annotations

from pathlib import Path

from stayer.events import Finished, SessionStarted
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply


async def test_the_prompts_of_a_session_share_its_connection_and_its_id(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(reply("one"), reply("two"), reply("three"))
    options = QueryOptions(cwd=tmp_path, env={**server.env(), "STAYER_CONFIG_DIR": str(tmp_path)})
    answers, started = [], []
    async with Session(options) as session:
        for prompt in ("a", "b", "c"):
            async for event in session.submit(prompt):
                if isinstance(event, SessionStarted):
                    started.append(event.session_id)
                if isinstance(event, Finished):
                    answers.append(event.result_text)

    assert answers == ["one", "two", "three"]
    assert started == [session.session_id]
    assert len({request.peer for request in server.requests}) == 1
    assert [len(request.messages) for request in server.requests] == [1, 3, 5]
