"""A session's side of `ToolContext.spawn_subagent`, small and real, for the Agent and Skill
tools' tests: each request runs the loop (`query()`) with a scripted model of its own, and its
events come wrapped as the contract says (the first wrapping a `SessionStarted`, the last the
child's `Finished`; with `background`, only the first)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from stayer.events import Event, SessionStarted, SubagentEvent
from stayer.loop.state import LoopParams
from stayer.messages import UserMessage
from stayer.providers.scripted import ScriptedProvider
from stayer.tools.base import SubagentRequest, Tool, Toolbox, ToolFailure


class Children:
    """Runs each subagent request with the next scripted model `models` gives for it."""

    def __init__(
        self,
        models: Callable[[SubagentRequest], ScriptedProvider],
        *,
        tools: Sequence[Tool[Any]] = (),
        types: Sequence[str] = ("general-purpose", "Explore"),
        model: str = "scripted",
        max_turns: int | None = None,
    ) -> None:
        self.models = models
        self.tools = tuple(tools)
        self.types = tuple(types)
        self.model = model
        self.max_turns = max_turns
        self.asked: list[SubagentRequest] = []
        self.parent: LoopParams | None = None

    def attach(self, params: LoopParams) -> LoopParams:
        """`params` whose tools may start these children."""
        self.parent = params
        return replace(params, tool_context=replace(params.tool_context, spawn_subagent=self))

    def __call__(self, request: SubagentRequest) -> AsyncIterator[Event]:
        if request.subagent_type not in self.types:
            raise ToolFailure(f"no agent type {request.subagent_type!r}")
        self.asked.append(request)
        return self._run(request, f"agent{len(self.asked)}")

    async def _run(self, request: SubagentRequest, agent_id: str) -> AsyncIterator[Event]:
        from stayer.loop.run import query  # the loop, imported only by tests that nest runs

        assert self.parent is not None
        provider = self.models(request)
        child = replace(
            self.parent,
            provider=provider,
            model=self.model,
            tools=Toolbox.of(self.tools),
            max_turns=self.max_turns,
            tool_context=replace(self.parent.tool_context, spawn_subagent=None),
        )

        def wrap(event: Event) -> SubagentEvent:
            return SubagentEvent(
                request.tool_use_id,
                event,
                agent_id,
                request.subagent_type,
                request.description,
                request.background,
            )

        cwd = str(Path(child.tool_context.cwd))
        yield wrap(SessionStarted(agent_id, self.model, "scripted", (), cwd, "default"))
        if request.background:
            return
        async for event in query(child, (UserMessage.of_text(request.prompt),)):
            yield wrap(event)
