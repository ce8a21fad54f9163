"""A person's "no, and tell the model what to do instead": the note given with the driver's
`Answer` reaches the model, over the wire, in the denied call's result."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stayer.driver import Answer, Close, Driver, Submit
from stayer.events import Finished, PermissionRequested
from stayer.permissions import Decision
from stayer.session.options import QueryOptions
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.session.test_driver import Collect

NOTE = "Use pnpm, not npm: this repository has a pnpm-lock.yaml.\nThen run the tests once."


async def test_the_note_of_a_denial_reaches_the_model_in_the_tool_result(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.enqueue(
            reply(ToolCall("toolu_npm", "Bash", {"command": "npm install"})),
            reply("Switching to pnpm."),
        )
        env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        given = QueryOptions(cwd=tmp_path, env=env, persist_session=False)
        sink = Collect()
        driver = await Driver.open(given, sink, answers=True)
        running = asyncio.create_task(driver.run())
        driver.send(Submit("install the dependencies"))
        await sink.signal(PermissionRequested).wait()
        driver.send(Answer("toolu_npm", Decision("deny", reason=f"  {NOTE}\n")))
        await sink.signal(Finished).wait()
        driver.send(Close())
        await running

    second = server.requests[1].body
    assert isinstance(second, dict)
    answer = second["messages"][-1]
    (result,) = [block for block in answer["content"] if block["type"] == "tool_result"]
    assert result["tool_use_id"] == "toolu_npm" and result["is_error"] is True
    content = result["content"]
    said = content if isinstance(content, str) else "".join(part["text"] for part in content)
    assert said == (
        f"The user denied permission to use Bash, saying: {NOTE}\n"
        "Follow that; do not make the same call another way."
    )
    assert not (tmp_path / "node_modules").exists()
