"""`set_max_thinking_tokens`: the SDK's control request changes the session's thinking budget
from its next assistant turn on (a turn in its tool rounds keeps its own, as the API requires);
a bad value is an error reply."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from stayer.driver import Close, Driver, Submit
from stayer.events import Finished
from stayer.providers.base import Thinking
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.ui.sdk.control import ControlChannel, Frame
from stayer.ui.sdk.requests import serve_requests
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.session.test_driver import Collect, Hold
from tests.ui.sdk.wire import Wire


async def ask(channel: ControlChannel, wire: Wire, request_id: str, budget: Any) -> Frame:
    """Send `set_max_thinking_tokens` as the SDK does and return the reply's `response`."""
    request = {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": budget}
    channel.dispatch({"type": "control_request", "request_id": request_id, "request": request})
    frame = await wire.next()
    assert frame["type"] == "control_response" and frame["response"]["request_id"] == request_id
    response: Frame = frame["response"]
    return response


async def test_a_budget_set_while_a_tool_runs_holds_from_the_next_turn(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {}), text("done"), text("again")])
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    options = QueryOptions(
        cwd=tmp_path, provider=model, env=env, persist_session=False, extra_tools=[hold],
        max_thinking_tokens=4000, thinking_display="summarized",
    )  # fmt: skip
    wire, sink = Wire(), Collect()
    channel = ControlChannel(wire)
    driver = await Driver.open(options, sink)
    serve_requests(driver, channel)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("think"))
    await hold.started.wait()

    assert await ask(channel, wire, "req_1", 0) == {
        "subtype": "success", "request_id": "req_1", "response": {},
    }  # fmt: skip
    hold.release.set()
    await sink.signal(Finished).wait()
    driver.send(Submit("and now"))
    driver.send(Close())
    await running

    assert [request.thinking for request in model.requests] == [
        Thinking("enabled", 4000, "summarized"),  # as the options opened it
        Thinking("enabled", 4000, "summarized"),  # the same turn, after its tool: kept
        Thinking("disabled"),  # the next turn, as the SDK said
    ]


async def test_over_the_wire_a_budget_goes_out_as_thinking_and_null_leaves_the_default(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply("one"), reply("two"))
        env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        options = QueryOptions(cwd=tmp_path, env=env, persist_session=False, effort="high")
        wire, sink = Wire(), Collect()
        channel = ControlChannel(wire)
        driver = await Driver.open(options, sink)
        serve_requests(driver, channel)
        running = asyncio.create_task(driver.run())

        assert (await ask(channel, wire, "req_1", 20_000))["subtype"] == "success"
        driver.send(Submit("first"))
        await sink.signal(Finished).wait()
        assert (await ask(channel, wire, "req_2", None))["subtype"] == "success"
        bad = [await ask(channel, wire, f"req_{n}", value) for n, value in ((3, "lots"), (4, -5))]
        driver.send(Submit("second"))
        driver.send(Close())
        await running

        first, second = (request.body for request in server.requests)
        assert (first["thinking"], first["output_config"]) == (
            {"type": "enabled", "budget_tokens": 20_000},
            {"effort": "high"},
        )
        assert "thinking" not in second and second["output_config"] == {"effort": "high"}

    assert [(frame["subtype"], frame["error"]) for frame in bad] == [
        ("error", "set_max_thinking_tokens: max_thinking_tokens 'lots' is not a whole number "
         "of tokens; give one (0: no thinking) or null (the model's default)"),
        ("error", "thinking budget -5 is negative; give 0 (off) or more tokens"),
    ]  # fmt: skip
