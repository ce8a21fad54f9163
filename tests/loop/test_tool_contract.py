"""The tool contract as the executor keeps it, on the scripted model: a tool parses its own
input and shows its own schema, declares its own timeout, reports a nested run's events, and
each call gets its own id and emit while sharing the session's state."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stayer.events import Finished, SubagentEvent, Terminal, ToolCallProgress
from stayer.loop.state import LoopParams
from stayer.messages import JSON, ToolUseBlock
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.tools.base import (
    DEFAULT_TIMEOUT_S,
    SubagentRequest,
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
)
from tests.fakes.loop_harness import finished, make_params, results_in, run
from tests.fakes.tools import Delegate, Sleep, with_subagents

SHOUT_SCHEMA: dict[str, JSON] = {
    "type": "object",
    "properties": {"words": {"type": "string"}},
    "required": ["words"],
}


class Shout(Tool[str]):
    """A tool with a JSON Schema of its own and no pydantic model (as an MCP tool brings)."""

    def __init__(self) -> None:
        self.name = "Shout"
        self.description = "Say the words louder."

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return SHOUT_SCHEMA

    def parse_input(self, raw: Mapping[str, JSON]) -> str:
        words = raw.get("words")
        if not isinstance(words, str):
            raise ToolInputError("words: a string is required")
        return words

    async def call(self, tool_input: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(tool_input.upper())


async def test_a_tool_with_its_own_schema_is_shown_it_and_parses_its_own_input(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider(
        [
            tool_call("Shout", {"words": 3}, id="t1"),
            tool_call("Shout", {"words": "hello"}, id="t2"),
            text("done"),
        ]
    )
    await run(make_params(model, [Shout()], tmp_path))

    (spec,) = model.requests[0].tools
    assert (spec.name, spec.description, spec.input_schema) == (
        "Shout",
        "Say the words louder.",
        SHOUT_SCHEMA,
    )
    (refused,) = results_in(model.requests[1].messages[-1])
    assert (refused.is_error, refused.text) == (
        True,
        "InputValidationError: words: a string is required",
    )
    (shouted,) = results_in(model.requests[2].messages[-1])
    assert (shouted.is_error, shouted.text) == (False, "HELLO")


def test_a_built_in_tool_parses_its_input_from_its_model_and_says_what_does_not_fit() -> None:
    from stayer.tools.builtin.todo import TodoWriteTool

    tool = TodoWriteTool()
    parsed = tool.parse_input(
        {"todos": [{"content": "A", "status": "pending", "activeForm": "Aing"}]}
    )
    assert parsed.todos[0].active_form == "Aing"
    try:
        tool.parse_input({"todos": [{"content": "A", "status": "later", "activeForm": "Aing"}]})
    except ToolInputError as exc:
        assert str(exc).startswith("todos.0.status: Input should be 'pending'")
        assert "\n" not in str(exc)
    else:
        raise AssertionError("a status of no known kind was accepted")
    assert tool.timeout_s == DEFAULT_TIMEOUT_S == 900


class Impatient(Sleep):
    name = "Impatient"
    timeout_s = 0.2


async def test_each_tool_is_held_to_its_own_timeout(tmp_path: Path) -> None:
    """In one round, the tool that declares 0.2 s is stopped; the one beside it, under the
    default limit, sleeps longer than that and finishes."""
    impatient, patient = Impatient(), Sleep()
    calls = Reply(
        (
            ToolUseBlock("t1", "Impatient", {"text": "30"}),
            ToolUseBlock("t2", "Sleep", {"text": "0.5"}),
        )
    )
    model = ScriptedProvider([calls, text("one was too slow")])
    events = await run(make_params(model, [impatient, patient], tmp_path))

    stopped, woke = results_in(model.requests[1].messages[-1])
    assert (stopped.is_error, stopped.text) == (
        True,
        "Error: Impatient did not finish within 0.2 s and was stopped.",
    )
    assert (woke.is_error, woke.text, patient.finished) == (False, "woke up", True)
    assert impatient.finished is False
    assert finished(events).terminal is Terminal.COMPLETED


async def test_a_nested_run_s_events_come_out_wrapped_as_the_call_s_own(tmp_path: Path) -> None:
    helper_model = ScriptedProvider([text("the helper's answer")])
    asked: list[SubagentRequest] = []
    model = ScriptedProvider([tool_call("Delegate", {"task": "look"}, id="t1"), text("ok")])
    params = with_subagents(make_params(model, [Delegate()], tmp_path), helper_model, asked)
    events = await run(params)

    assert asked == [SubagentRequest(prompt="look", description="helper")]
    nested = [event for event in events if isinstance(event, SubagentEvent)]
    assert {event.parent_tool_use_id for event in nested} == {"t1"}
    inner = [event.event for event in nested]
    assert isinstance(inner[-1], Finished) and inner[-1].result_text == "the helper's answer"
    assert [type(event) for event in events if isinstance(event, Finished)] == [Finished]
    (result,) = results_in(model.requests[1].messages[-1])
    assert result.text == "the helper's answer"


async def test_without_a_session_s_seam_a_tool_cannot_spawn_a_subagent(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Delegate", {"task": "look"}, id="t1"), text("ok")])
    await run(make_params(model, [Delegate()], tmp_path))

    (result,) = results_in(model.requests[1].messages[-1])
    assert (result.is_error, result.text) == (True, "no subagents here")


class Meet(Tool[str]):
    """Concurrency-safe; each call records what its context says of it, once both run."""

    def __init__(self) -> None:
        self.name = "Meet"
        self.description = "Meet the other call."
        self.both = asyncio.Event()
        self.arrived = 0
        self.seen: dict[str, Any] = {}

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        return {"type": "object", "properties": {"note": {"type": "string"}}}

    def parse_input(self, raw: Mapping[str, JSON]) -> str:
        return str(raw.get("note", ""))

    def is_concurrency_safe(self, tool_input: str) -> bool:
        return True

    async def call(self, tool_input: str, ctx: ToolContext) -> ToolOutput:
        self.arrived += 1
        if self.arrived == 2:
            self.both.set()
        await asyncio.wait_for(self.both.wait(), 5)  # both calls are running now
        ctx.pins.append(tool_input)
        ctx.progress(tool_input)
        self.seen[tool_input] = (ctx.tool_use_id, ctx.session_state)
        return ToolOutput("met")


async def test_parallel_calls_have_their_own_id_and_emit_and_share_the_session_s_state(
    tmp_path: Path,
) -> None:
    meet = Meet()
    calls = Reply(
        (ToolUseBlock("t1", "Meet", {"note": "one"}), ToolUseBlock("t2", "Meet", {"note": "two"}))
    )
    model = ScriptedProvider([calls, text("met")])
    params: LoopParams = make_params(model, [meet], tmp_path)
    events = await run(params)

    state = params.tool_context.session_state
    assert meet.seen == {"one": ("t1", state), "two": ("t2", state)}
    assert meet.seen["one"][1] is meet.seen["two"][1] is state
    assert sorted(params.tool_context.pins) == ["one", "two"]
    progress = {(e.tool_use_id, e.text) for e in events if isinstance(e, ToolCallProgress)}
    assert progress == {("t1", "one"), ("t2", "two")}
    assert params.tool_context.tool_use_id is None  # the session's own context is untouched
