"""Run the loop directly with a scripted model and chosen tools, and check what came out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stayer.events import Event, Finished, RequestStarted, ToolCallFinished, ToolCallStarted
from stayer.loop.abort import AbortSignal
from stayer.loop.run import query
from stayer.loop.state import CanUseTool, LoopParams, RetryPolicy, allow_everything
from stayer.messages import (
    Message,
    ToolResultBlock,
    UserMessage,
    history_problems,
)
from stayer.providers.base import Provider
from stayer.providers.scripted import ScriptedProvider
from stayer.tools.base import Tool, Toolbox, ToolContext


def make_params(
    provider: Provider,
    tools: Sequence[Tool[Any]],
    cwd: Path,
    *,
    can_use_tool: CanUseTool = allow_everything,
    max_turns: int | None = None,
    abort: AbortSignal | None = None,
    retry: RetryPolicy | None = None,
    session_dir: Path | None = None,
) -> LoopParams:
    return LoopParams(
        provider=provider,
        model="scripted",
        system_prompt="You are a test.",
        tools=Toolbox.of(tools),
        tool_context=ToolContext(cwd=cwd, session_dir=session_dir),
        can_use_tool=can_use_tool,
        abort=abort or AbortSignal(),
        max_turns=max_turns,
        retry=retry or RetryPolicy(base_delay_s=0.001, max_delay_s=0.01),
    )


async def run(params: LoopParams, prompt: str = "go", *, strict: bool = True) -> list[Event]:
    """All events of one run, checked: exactly one `Finished`, last; a valid history; every
    started tool call finished; and (when `strict`) a scripted model used exactly as scripted.
    """
    events = [event async for event in query(params, (UserMessage.of_text(prompt),))]
    finished = [event for event in events if isinstance(event, Finished)]
    assert len(finished) == 1, f"expected one Finished, got {len(finished)}"
    assert events[-1] is finished[0], "Finished must be the last event"
    assert_valid_history(finished[0].messages)
    started = [e.tool_use_id for e in events if isinstance(e, ToolCallStarted)]
    ended = {e.tool_use_id for e in events if isinstance(e, ToolCallFinished)}
    assert set(started) <= ended, "a tool call started but never finished"
    assert_no_call_started_twice(events)
    if strict and isinstance(params.provider, ScriptedProvider):
        assert "scripted model:" not in finished[0].message, finished[0].message
        params.provider.assert_done()
    return events


def assert_no_call_started_twice(events: Sequence[Event]) -> None:
    """No call of one response starts twice (scripted replies may reuse ids across turns)."""
    seen: set[str] = set()
    for event in events:
        if isinstance(event, RequestStarted):
            seen = set()
        elif isinstance(event, ToolCallStarted):
            assert event.tool_use_id not in seen, f"{event.tool_use_id} started twice"
            seen.add(event.tool_use_id)


def finished(events: Sequence[Event]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def assert_valid_history(messages: Sequence[Message]) -> None:
    """The conversation is valid for the API (`messages.history_problems` finds nothing)."""
    problems = history_problems(messages) if messages else []
    assert not problems, "; ".join(str(problem) for problem in problems)


def results_in(message: Message) -> list[ToolResultBlock]:
    return [block for block in message.content if isinstance(block, ToolResultBlock)]
