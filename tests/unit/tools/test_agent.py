"""The Agent tool's declarations and input: what the loop and the permission layer read of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stayer.events import Event, Finished, SessionStarted, SubagentEvent, Terminal
from stayer.messages import Usage
from stayer.tools.base import SubagentRequest, ToolContext, ToolFailure, ToolInputError
from stayer.tools.builtin.agent import AgentInput, AgentTool
from stayer.tools.names import AGENT, RUN_ONLY_TOOLS, SKILL, TASK
from stayer.tools.registry import builtin_toolbox


def parsed(**extra: object) -> AgentInput:
    """A call that waits for the report unless `extra` says otherwise."""
    return AgentTool().parse_input(
        {"description": "d", "prompt": "p", "run_in_background": False, **extra}
    )


def test_it_runs_beside_others_needs_no_permission_of_its_own_and_may_take_an_hour() -> None:
    tool, given = AgentTool(), parsed(subagent_type="Explore")
    assert (tool.name, tool.aliases) == (AGENT, (TASK,))
    assert tool.is_concurrency_safe(given) and tool.is_read_only(given)
    assert tool.permission_subject(given) == "Explore"
    assert tool.permission_subject(parsed()) == "general-purpose"
    assert tool.timeout_s == 3600


def test_the_built_in_toolbox_finds_it_by_its_old_name() -> None:
    box = builtin_toolbox()
    found = box.find(TASK)
    assert found is not None and found.name == AGENT
    assert TASK not in box.names


def test_agent_and_skill_are_left_out_of_mcp_serve() -> None:
    assert {AGENT, SKILL} <= RUN_ONLY_TOOLS


def test_input_takes_claude_codes_fields_and_refuses_an_unknown_effort() -> None:
    given = parsed(model="haiku", effort="xhigh", run_in_background=True, isolation="worktree")
    assert (given.model, given.effort, given.run_in_background) == ("haiku", "xhigh", True)
    with pytest.raises(ToolInputError, match="effort"):
        parsed(effort="extreme")
    with pytest.raises(ToolInputError, match="prompt"):
        AgentTool().parse_input({"description": "d"})


def _started(agent_id: str) -> SessionStarted:
    return SessionStarted(agent_id, "m", "scripted", (), "/", "default")


def _done(text: str) -> Finished:
    return Finished(Terminal.COMPLETED, "", 1, Usage(), 0.0, text, None, 1.0, 1.0)


def test_its_schema_offers_effort_for_the_agent() -> None:
    schema = AgentTool().input_schema
    properties = schema["properties"]
    assert isinstance(properties, dict)
    effort = properties["effort"]
    assert isinstance(effort, dict)
    assert "How hard the agent should work" in str(effort["description"])
    assert effort["enum"] == ["low", "medium", "high", "xhigh", "max"]


async def test_events_a_spawner_forgot_to_wrap_are_wrapped_for_the_call(tmp_path: Path) -> None:
    emitted: list[object] = []

    async def spawn(request: SubagentRequest) -> AsyncIterator[Event]:
        yield _started("kid")
        yield _done("bare but fine")

    ctx = ToolContext(cwd=tmp_path, spawn_subagent=spawn, emit=emitted.append, tool_use_id="t9")
    output = await AgentTool().call(parsed(), ctx)

    assert isinstance(output.content, str) and "(kid) finished" in output.content
    assert [type(e) for e in emitted] == [SubagentEvent, SubagentEvent]
    assert {e.parent_tool_use_id for e in emitted if isinstance(e, SubagentEvent)} == {"t9"}


async def test_a_child_that_ends_without_finishing_is_a_failure_not_an_empty_result(
    tmp_path: Path,
) -> None:
    async def spawn(request: SubagentRequest) -> AsyncIterator[Event]:
        yield SubagentEvent(request.tool_use_id, _started("kid"), "kid", "Explore")

    ctx = ToolContext(cwd=tmp_path, spawn_subagent=spawn)
    with pytest.raises(ToolFailure, match=r"agent Explore \(kid\) ended without a result"):
        await AgentTool().call(parsed(subagent_type="Explore"), ctx)


async def test_a_background_spawner_that_starts_nothing_is_a_failure(tmp_path: Path) -> None:
    async def spawn(request: SubagentRequest) -> AsyncIterator[Event]:
        return
        yield

    ctx = ToolContext(cwd=tmp_path, spawn_subagent=spawn)
    with pytest.raises(ToolFailure, match="did not start"):
        await AgentTool().call(parsed(run_in_background=True), ctx)


async def test_the_child_is_closed_when_the_call_is_cancelled(tmp_path: Path) -> None:
    import asyncio

    closed = asyncio.Event()
    begun = asyncio.Event()

    async def spawn(request: SubagentRequest) -> AsyncIterator[Event]:
        try:
            yield SubagentEvent(request.tool_use_id, _started("kid"), "kid")
            begun.set()
            await asyncio.Event().wait()  # works until stopped
            yield SubagentEvent(request.tool_use_id, _done("never"), "kid")
        finally:
            closed.set()

    ctx = ToolContext(cwd=tmp_path, spawn_subagent=spawn)
    task = asyncio.create_task(AgentTool().call(parsed(), ctx))
    await begun.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set()


def test_rules_by_either_name_match_calls_by_either_name(tmp_path: Path) -> None:
    from stayer.permissions.rules import Rule

    for rule in ("Task(Explore)", "Agent(Explore)"):
        for tool in (AGENT, TASK):
            assert Rule.parse(rule).matches(tool, "Explore", tmp_path), (rule, tool)
            assert not Rule.parse(rule).matches(tool, "Plan", tmp_path), (rule, tool)
    assert not Rule.parse("Task").names(SKILL)
