"""A Session's MCP servers over real stdio, its model over the real wire: a slow server never
holds back a model call, and its tools join the next call once it is up; status changes are
events of the run going on; a resumed conversation gets its deferred tools back; the servers
are gone when the session closes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

import stayer
from stayer.events import Event, Finished, McpServerStatus, SessionStarted
from stayer.session.options import QueryOptions
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import ToolCall, reply

KITCHEN = Path(__file__).resolve().parents[1] / "mcp_servers" / "kitchen.py"


def kitchen(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(KITCHEN), *args]}


def tool_names(request: RecordedRequest) -> list[str]:
    body = request.body
    assert isinstance(body, dict)
    return [tool["name"] for tool in body.get("tools", [])]


def options(tmp_path: Path, server: FakeModelServer, **servers: Any) -> QueryOptions:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    return QueryOptions(
        cwd=work,
        env=env,
        mcp_config=[json.dumps({"mcpServers": servers})],
        allowed_tools=["mcp__slow"],
    )


async def connected(session: stayer.Session, name: str) -> None:
    """Until the session says server `name` is connected (its own signal, not a sleep)."""
    changed = asyncio.Event()
    session.watch_mcp(changed.set)
    while not any(s.name == name and s.status == "connected" for s in session.mcp_servers()):
        await asyncio.wait_for(changed.wait(), timeout=30)
        changed.clear()


async def test_a_slow_servers_tools_join_the_call_after_it_is_up(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    with FakeModelServer() as server:
        server.enqueue(
            reply("nothing to call yet"),
            reply(ToolCall("toolu_1", "mcp__slow__add", {"a": 1, "b": 2})),
            reply("it said 3"),
        )
        opts = options(tmp_path, server, slow=kitchen("--wait-file", str(gate)))
        async with stayer.Session(opts) as session:
            first: list[Event] = [event async for event in session.submit("hi")]
            started = next(e for e in first if isinstance(e, SessionStarted))
            assert [(s.name, s.status) for s in started.mcp_servers] == [("slow", "pending")]
            assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]

            gate.write_text("go")
            await connected(session, "slow")
            second: list[Event] = [event async for event in session.submit("add 1 and 2")]

        statuses = [e for e in second if isinstance(e, McpServerStatus)]
        assert [(s.name, s.status, s.tools > 0) for s in statuses] == [("slow", "connected", True)]
        assert "mcp__slow__add" in tool_names(server.requests[1])
        last = server.requests[2].messages[-1]
        assert isinstance(last, dict)
        (result,) = [b for b in last["content"] if b.get("type") == "tool_result"]
        assert result["content"][0]["text"] == "3"
        assert isinstance(second[-1], Finished) and not second[-1].is_error


async def test_closing_the_session_stops_its_servers(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        server.enqueue(reply(ToolCall("toolu_1", "mcp__slow__pid", {})), reply("noted"))
        opts = options(tmp_path, server, slow=kitchen())
        session = await stayer.Session.open(opts)
        session.start_mcp()  # now, as the REPL has them start (else with the first request)
        async with session:
            await connected(session, "slow")
            events = [event async for event in session.submit("what is your pid?")]
            assert isinstance(events[-1], Finished)
        last = server.requests[1].messages[-1]
        assert isinstance(last, dict)
        pid = int(last["content"][0]["content"][0]["text"])
    assert not Path(f"/proc/{pid}").exists()  # ended and reaped: no zombie either


@pytest.mark.parametrize("rule", ["mcp__slow", "mcp__slow__*"])
async def test_a_rule_denying_a_server_keeps_its_resources_out_of_reach(
    tmp_path: Path, rule: str
) -> None:
    """`mcp__srv` denied hides the server's tools, and its resources too: the resource tools
    do not reach it."""
    with FakeModelServer() as server:
        read = {"server": "slow", "uri": "memo://greeting"}
        server.enqueue(
            reply(
                ToolCall("toolu_1", "ReadMcpResource", read),
                ToolCall("toolu_2", "ListMcpResources", {}),
            ),
            reply("could not"),
        )
        opts = options(tmp_path, server, slow=kitchen(), other=kitchen())
        opts = replace(
            opts,
            disallowed_tools=[rule],
            allowed_tools=["ListMcpResources", "ReadMcpResource"],
        )
        session = await stayer.Session.open(opts)
        session.start_mcp()
        async with session:
            await connected(session, "slow")
            await connected(session, "other")
            events = [event async for event in session.submit("read slow's greeting")]
        assert isinstance(events[-1], Finished)
        assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__slow__")]
        last = server.requests[1].messages[-1]
        assert isinstance(last, dict)
        results = {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}
        assert results["toolu_1"].get("is_error") is True
        listed = json.dumps(results["toolu_2"]["content"])
        assert (
            "other" in listed
            and '"slow"' not in listed
            and "hello there" not in json.dumps(results)
        )


def test_mcp_connection_nonblocking_is_on_or_off_and_a_typo_is_one_line() -> None:
    from stayer.errors import ConfigError
    from stayer.session.mcp_link import blocking

    assert blocking({}) is False
    assert [blocking({"MCP_CONNECTION_NONBLOCKING": v}) for v in ("0", "false", "OFF")] == [
        True
    ] * 3
    assert [blocking({"MCP_CONNECTION_NONBLOCKING": v}) for v in ("1", "true", "")] == [False] * 3
    with pytest.raises(ConfigError, match=r"^MCP_CONNECTION_NONBLOCKING='flase' is neither on "):
        blocking({"MCP_CONNECTION_NONBLOCKING": "flase"})
