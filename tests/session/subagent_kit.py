"""What the subagent tests share: a tool that starts subagents as the Agent tool will (until it
is merged), and a model client that answers the lead and each agent from their own scripts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from stayer.events import Event, Finished, SessionStarted, StreamEvent, SubagentEvent
from stayer.messages import JSON, ToolSpec
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import ScriptedProvider
from stayer.session.options import QueryOptions
from stayer.tools.base import SubagentRequest, Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin.agent_result import report, spends


class Spawn(Tool[dict[str, Any]]):
    """Starts a subagent through `ctx.spawn_subagent`, as the Agent tool does: the child's
    events pass on as the call's, and its report (framed) and spend are the result."""

    def __init__(self) -> None:
        self.name = "Spawn"
        self.description = "Hand a task to a subagent."

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return {"type": "object", "properties": {"prompt": {"type": "string"}}}

    def parse_input(self, raw: Mapping[str, JSON]) -> dict[str, Any]:
        return dict(raw)

    def is_concurrency_safe(self, tool_input: dict[str, Any]) -> bool:
        return True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if ctx.spawn_subagent is None:
            raise ToolFailure("no subagents here")
        request = SubagentRequest(
            prompt=tool_input["prompt"],
            description=tool_input.get("description", "a task"),
            subagent_type=tool_input.get("subagent_type", "general-purpose"),
            model=tool_input.get("model"),
            background=tool_input.get("run_in_background", False),
            isolation=tool_input.get("isolation"),
            tool_use_id=ctx.tool_use_id or "",
        )
        finished: Finished | None = None
        agent_id = agent_type = ""
        async for event in ctx.spawn_subagent(request):
            assert isinstance(event, SubagentEvent)
            ctx.emit(event)
            agent_id, agent_type = event.agent_id, event.agent_type
            if isinstance(event.event, Finished):
                finished = event.event
            if isinstance(event.event, SessionStarted) and request.background:
                return ToolOutput(f"Started agent {agent_id} in the background.")
        assert finished is not None
        return ToolOutput(
            report(finished, agent_id=agent_id, agent_type=agent_type),
            is_error=finished.is_error,
            spent=spends(finished),
        )


class Router:
    """One model client for a tree of sessions: each request goes to the script of the first
    marker its system prompt holds, else to the lead's."""

    def __init__(self, lead: ScriptedProvider, **agents: ScriptedProvider) -> None:
        self.lead = lead
        self.agents = agents
        self.order: list[str] = []

    @property
    def name(self) -> str:
        return "anthropic"  # it stands in for Anthropic's client: Claude aliases resolve to it

    def script_for(self, request: ModelRequest) -> tuple[str, ScriptedProvider]:
        system = request.system if isinstance(request.system, str) else str(request.system)
        for marker, script in self.agents.items():
            if marker in system:
                return marker, script
        return "lead", self.lead

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        who, script = self.script_for(request)
        self.order.append(who)
        async for event in script.stream(request):
            yield event

    async def aclose(self) -> None:
        return None

    def assert_done(self) -> None:
        self.lead.assert_done()
        for script in self.agents.values():
            script.assert_done()


HELPER = "HELPER"
"""The marker of the general-purpose agent's prompt in these tests (`options` sets it, so no
test depends on the built-in's wording)."""


def options(tmp_path: Path, provider: Any, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config"), **more.pop("env", {})}
    more["agents"] = {"general-purpose": agent(HELPER), **more.get("agents", {})}
    given: dict[str, Any] = {
        "cwd": tmp_path,
        "env": env,
        "provider": provider,
        "model": "claude-sonnet-4-5",
        "persist_session": False,
        "extra_tools": [Spawn()],
        "permission_mode": "bypassPermissions",
    }
    given.update(more)
    return QueryOptions(**given)


def agent(marker: str, **fields: Any) -> dict[str, Any]:
    """An `--agents` entry whose prompt holds `marker` (the router's key)."""
    return {"description": f"the {marker} agent", "prompt": f"You are {marker}.", **fields}


def nested(events: list[Event]) -> list[SubagentEvent]:
    return [event for event in events if isinstance(event, SubagentEvent)]


def tool_names(spec_list: tuple[ToolSpec, ...] | list[Any]) -> list[str]:
    return [spec.name for spec in spec_list]
