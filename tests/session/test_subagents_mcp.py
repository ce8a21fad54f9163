"""A subagent reaches its parent's MCP servers' tools, those its agent type allows only."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import stayer
from stayer.events import Finished, ToolCallFinished
from stayer.providers.scripted import ScriptedProvider, text, tool_call

from .subagent_kit import Router, agent, nested, options
from .test_subagents import result_text, run

KITCHEN = Path(__file__).resolve().parents[1] / "mcp_servers" / "kitchen.py"


async def connected(session: stayer.Session, name: str) -> None:
    """Until the session says server `name` is connected (its own signal, not a sleep)."""
    changed = asyncio.Event()
    session.watch_mcp(changed.set)
    session.start_mcp()
    while not any(s.name == name and s.status == "connected" for s in session.mcp_servers()):
        await asyncio.wait_for(changed.wait(), timeout=30)
        changed.clear()


async def test_a_child_gets_the_mcp_tools_its_agent_names_and_no_others(tmp_path: Path) -> None:
    lead = ScriptedProvider(
        [
            tool_call("Spawn", {"prompt": "add", "subagent_type": "adder"}, id="t1"),
            tool_call("Spawn", {"prompt": "look", "subagent_type": "reader"}, id="t2"),
            text("done"),
        ]
    )
    adder = ScriptedProvider([tool_call("mcp__kit__add", {"a": 1, "b": 2}, id="m1"), text("3")])
    reader = ScriptedProvider([text("nothing to add with")])
    router = Router(lead, ADDER=adder, READER=reader)
    servers = {"kit": {"command": sys.executable, "args": [str(KITCHEN)]}}
    opts = options(
        tmp_path,
        router,
        agents={
            "adder": agent("ADDER", tools=["Read", "mcp__kit"]),
            "reader": agent("READER", tools=["Read"]),
        },
        mcp_config=[json.dumps({"mcpServers": servers})],
        env={"HOME": str(tmp_path)},
    )
    async with stayer.Session(opts) as session:
        await connected(session, "kit")
        events = await run(session, "go")

    adder_tools = {spec.name for spec in adder.requests[0].tools}
    assert "Read" in adder_tools and "mcp__kit__add" in adder_tools
    assert not {name for name in adder_tools if not name.startswith("mcp__kit__")} - {"Read"}
    assert {spec.name for spec in reader.requests[0].tools} == {"Read"}
    (added,) = [
        e.event
        for e in nested(events)
        if isinstance(e.event, ToolCallFinished) and e.event.tool_use_id == "m1"
    ]
    assert result_text(added.result) == "3"
    assert isinstance(events[-1], Finished) and not events[-1].is_error
    router.assert_done()
