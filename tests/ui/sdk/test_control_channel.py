"""The control protocol's two directions: replies by request id, errors, cancels, a closed
channel."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from stayer.errors import ConfigError
from stayer.ui.sdk.control import ControlChannel, ControlError
from tests.ui.sdk.wire import Wire


async def test_a_request_returns_the_reply_with_its_id() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    asking = asyncio.ensure_future(channel.request("can_use_tool", {"tool_name": "Bash"}))
    sent = await wire.next()
    assert sent["type"] == "control_request"
    assert sent["request"] == {"subtype": "can_use_tool", "tool_name": "Bash"}
    request_id = sent["request_id"]
    other = {"subtype": "success", "request_id": "nobody", "response": {"x": 1}}
    assert channel.dispatch({"type": "control_response", "response": other})
    reply = {"subtype": "success", "request_id": request_id, "response": {"behavior": "allow"}}
    assert channel.dispatch({"type": "control_response", "response": reply})
    assert await asking == {"behavior": "allow"}


async def test_an_error_reply_raises_with_the_sdks_text() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    asking = asyncio.ensure_future(channel.request("hook_callback", {}))
    request_id = (await wire.next())["request_id"]
    channel.dispatch(
        {
            "type": "control_response",
            "response": {"subtype": "error", "request_id": request_id, "error": "no callback"},
        }
    )
    with pytest.raises(ControlError, match="no callback"):
        await asking


async def test_a_cancelled_request_is_withdrawn() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    asking = asyncio.ensure_future(channel.request("can_use_tool", {}))
    request_id = (await wire.next())["request_id"]
    asking.cancel()
    assert await wire.next() == {"type": "control_cancel_request", "request_id": request_id}


async def test_closing_fails_waiting_and_later_requests() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    asking = asyncio.ensure_future(channel.request("can_use_tool", {}))
    await wire.next()
    channel.close("standard input ended")
    with pytest.raises(ControlError, match="standard input ended"):
        await asking
    with pytest.raises(ControlError, match="standard input ended"):
        await channel.request("mcp_message", {})


async def test_requests_are_answered_by_their_handler_or_with_an_error() -> None:
    wire = Wire()
    channel = ControlChannel(wire)

    async def model(request: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"model": request["model"]}

    async def broken(request: Mapping[str, Any]) -> None:
        raise ConfigError("no such mode 'x': give default, acceptEdits or plan")

    channel.handle("set_model", model)
    channel.handle("set_permission_mode", broken)
    for request_id, subtype in (("a", "set_model"), ("b", "set_permission_mode"), ("c", "nope")):
        request = {"subtype": subtype, "model": "haiku"}
        channel.dispatch({"type": "control_request", "request_id": request_id, "request": request})
    replies = {frame["response"]["request_id"]: frame["response"] for frame in
               [await wire.next() for _ in range(3)]}  # fmt: skip
    assert replies["a"] == {"subtype": "success", "request_id": "a", "response": {"model": "haiku"}}
    assert replies["b"]["subtype"] == "error" and "no such mode" in replies["b"]["error"]
    assert replies["c"]["subtype"] == "error" and "nope" in replies["c"]["error"]


async def test_a_cancel_from_the_sdk_stops_its_handler_without_a_reply() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    started, stopped = asyncio.Event(), asyncio.Event()

    async def slow(request: Mapping[str, Any]) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    channel.handle("slow", slow)
    channel.dispatch({"type": "control_request", "request_id": "r", "request": {"subtype": "slow"}})
    await started.wait()
    channel.dispatch({"type": "control_cancel_request", "request_id": "r"})
    await stopped.wait()
    await channel.aclose()
    assert wire.frames == []


async def test_a_request_reusing_an_id_in_flight_is_refused_and_the_cancel_still_works() -> None:
    wire = Wire()
    channel = ControlChannel(wire)
    started, stopped, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow(request: Mapping[str, Any]) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    async def quick(request: Mapping[str, Any]) -> dict[str, Any]:
        await release.wait()
        return {"ok": True}

    channel.handle("slow", slow)
    channel.handle("quick", quick)
    channel.dispatch({"type": "control_request", "request_id": "r", "request": {"subtype": "slow"}})
    await started.wait()
    channel.dispatch(
        {"type": "control_request", "request_id": "r", "request": {"subtype": "quick"}}
    )
    refused = await asyncio.wait_for(wire.next(), 10)  # a guard: no answer was the bug
    assert refused["response"]["subtype"] == "error"
    assert "'r' is still being answered" in refused["response"]["error"]
    channel.dispatch({"type": "control_cancel_request", "request_id": "r"})
    await asyncio.wait_for(stopped.wait(), 10)  # the cancel reached the request in flight
    # the id is free again once its request is done: a new one with it is answered
    channel.dispatch(
        {"type": "control_request", "request_id": "r", "request": {"subtype": "quick"}}
    )
    release.set()
    assert (await wire.next())["response"] == {
        "subtype": "success",
        "request_id": "r",
        "response": {"ok": True},
    }
    await channel.aclose()


def test_other_frames_are_the_callers() -> None:
    channel = ControlChannel(lambda frame: None)
    assert not channel.dispatch({"type": "user", "message": {}})
