"""Small real tools for loop tests: each exercises one path of the tool executor."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

from msgspec.structs import replace
from pydantic import BaseModel, ConfigDict

from stayer.events import Event, Finished, SubagentEvent
from stayer.loop.state import LoopParams
from stayer.messages import JSON, UserMessage
from stayer.providers.base import Provider
from stayer.tools.base import (
    SubagentRequest,
    Tool,
    Toolbox,
    ToolContext,
    ToolFailure,
    ToolOutput,
)


class TextInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class EmptyInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Echo(Tool[TextInput]):
    """Returns its input; changes nothing but says it does (so it needs permission)."""

    name = "Echo"
    description = "Echo the text back."
    input_model = TextInput

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(tool_input.text, data={"echoed": tool_input.text})


class Silent(Tool[EmptyInput]):
    """Succeeds with no output at all."""

    name = "Silent"
    description = "Do nothing, quietly."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("")


class Boom(Tool[EmptyInput]):
    """Raises an unexpected exception."""

    name = "Boom"
    description = "Always crashes."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("the disk caught fire")


class Refuse(Tool[EmptyInput]):
    """Fails the way tools report errors the model should read."""

    name = "Refuse"
    description = "Always fails politely."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        raise ToolFailure("cannot do that: the file is locked")


class Rendezvous(Tool[TextInput]):
    """Read-only; each call waits until `expected` calls are running at once.

    If calls ran one at a time, the first would wait forever (until `patience_s`) and say so.
    """

    name = "Rendezvous"
    description = "Meet the others."
    input_model = TextInput
    read_only = True
    expected: ClassVar[int] = 3
    patience_s: ClassVar[float] = 5.0

    def __init__(self) -> None:
        self.arrived = 0
        self.everyone = asyncio.Event()
        self.peak = 0
        self.running = 0

    def is_concurrency_safe(self, tool_input: TextInput) -> bool:
        return True

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        self.arrived += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        if self.arrived >= self.expected:
            self.everyone.set()
        try:
            await asyncio.wait_for(self.everyone.wait(), self.patience_s)
        except TimeoutError:
            return ToolOutput(f"{tool_input.text}: waited alone", is_error=True)
        finally:
            self.running -= 1
        return ToolOutput(f"{tool_input.text}: met {self.expected}")


class Sleep(Tool[TextInput]):
    """Sleeps for `text` seconds; records whether it finished."""

    name = "Sleep"
    description = "Sleep a while."
    input_model = TextInput

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finished = False
        self.cancelled = asyncio.Event()
        """Set when the sleep was cancelled: the call was stopped, not left running."""

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        self.started.set()
        ctx.progress("sleeping")
        try:
            await asyncio.sleep(float(tool_input.text))
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        self.finished = True
        return ToolOutput("woke up")


class Touch(Tool[TextInput]):
    """Creates a file named `text` in the working directory (a real side effect)."""

    name = "Touch"
    description = "Create an empty file."
    input_model = TextInput

    def permission_subject(self, tool_input: TextInput) -> str | None:
        return tool_input.text

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        path: Path = ctx.resolve(tool_input.text)
        path.touch()
        return ToolOutput(f"created {path.name}")


class Overlap(Tool[TextInput]):
    """Read-only; records how many calls of it run at the same moment."""

    name = "Overlap"
    description = "Take a moment."
    input_model = TextInput
    read_only = True

    def __init__(self, hold_s: float = 0.05) -> None:
        self.hold_s = hold_s
        self.running = 0
        self.peak = 0
        self.order: list[str] = []

    def is_concurrency_safe(self, tool_input: TextInput) -> bool:
        return True

    async def call(self, tool_input: TextInput, ctx: ToolContext) -> ToolOutput:
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.order.append(f"start {tool_input.text}")
        await asyncio.sleep(self.hold_s)
        self.running -= 1
        self.order.append(f"end {tool_input.text}")
        return ToolOutput(tool_input.text)


class Huge(Tool[EmptyInput]):
    """Returns far more text than a model should ever be shown at once."""

    name = "Huge"
    description = "Print a lot."
    input_model = EmptyInput
    read_only = True

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("\n".join(f"line {i}" for i in range(100_000)))


class Overflowing(Tool[EmptyInput]):
    """Claims to bound its own results, then returns more than any result may hold."""

    name = "Overflowing"
    description = "Break the size promise."
    input_model = EmptyInput
    read_only = True
    bounds_own_results = True

    @staticmethod
    def text() -> str:
        """The whole output: numbered lines, well over the cap."""
        return "\n".join(f"row {i} " + "y" * 40 for i in range(5_000)) + "\n(continue at 5000)"

    async def call(self, tool_input: EmptyInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.text())


class Delegate(Tool[str]):
    """Runs a subagent through `ctx.spawn_subagent` and passes its events on as its own."""

    def __init__(self) -> None:
        self.name = "Delegate"
        self.description = "Hand the task to a helper."

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return {"type": "object", "properties": {"task": {"type": "string"}}}

    def parse_input(self, raw: Mapping[str, JSON]) -> str:
        return str(raw.get("task", ""))

    async def call(self, tool_input: str, ctx: ToolContext) -> ToolOutput:
        if ctx.spawn_subagent is None:
            raise ToolFailure("no subagents here")
        request = SubagentRequest(prompt=tool_input, description="helper")
        answer = ""
        async for event in ctx.spawn_subagent(request):
            # a session's spawn wraps its child's events (`with_subagents` below does not); the
            # id either names is not the call's: the executor says whose it is
            wrapped = event if isinstance(event, SubagentEvent) else None
            ctx.emit(wrapped or SubagentEvent("not-this-call", event))
            inner = event if wrapped is None else wrapped.event
            if isinstance(inner, Finished):
                answer = inner.result_text
        return ToolOutput(answer)


def with_subagents(
    params: LoopParams, helper: Provider, asked: list[SubagentRequest] | None = None
) -> LoopParams:
    """`params` whose tools may start a subagent: a real nested run of the loop, answered by
    `helper`, with no tools; each request is noted in `asked`."""

    def spawn(request: SubagentRequest) -> AsyncIterator[Event]:
        from stayer.loop.run import query  # the loop, imported only by tests that nest runs

        if asked is not None:
            asked.append(request)
        child = replace(params, provider=helper, tools=Toolbox.of([]))
        return query(child, (UserMessage.of_text(request.prompt),))

    context = replace(params.tool_context, spawn_subagent=spawn)
    return replace(params, tool_context=context)
