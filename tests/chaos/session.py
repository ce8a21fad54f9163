"""One chaos session, and what every session must show.

A session is one task for the chaos model (`model`), served by its own tenant of the fake model
server, and one `stayer.query()` run against it over real HTTP with the real tools. The fake
server checks the history of every request against the API's rules; the checks below add what
the run's events, the final conversation and the task folder must show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import stayer
from stayer.events import (
    Compacted,
    Event,
    Finished,
    Retrying,
    Terminal,
    ToolCallStarted,
    Withdrawn,
)
from stayer.loop.state import RetryPolicy
from stayer.messages import AssistantMessage, Message, ToolResultBlock, UserMessage
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import Provider
from stayer.providers.openai_chat import OpenAIChatProvider
from stayer.providers.profiles import profile_for
from tests.chaos.agent import EFFECTS_LOG, Task
from tests.chaos.model import ChaosModel, Ledger
from tests.fakes.loop_harness import assert_valid_history
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import WireProtocol

FIRST_BYTE_S = 0.5
"""The stream's first-byte timeout: a slow first byte is cut after this long, not minutes."""
IDLE_S = 2.0
MODELS: dict[WireProtocol, str] = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5-mini"}
"""Models whose profiles allow a larger output limit, so a cut reply can be escalated."""
BROKEN = ("Traceback", "internal error")
"""Words that mean the harness itself broke, wherever they show up."""


def window_of(protocol: WireProtocol) -> int:
    """The context window of the session's model."""
    return profile_for(MODELS[protocol]).context_window


@dataclass(frozen=True, slots=True)
class SessionRun:
    """What one session left behind."""

    task: Task
    protocol: WireProtocol
    seed: str
    events: tuple[Event, ...]
    ledger: Ledger
    violations: tuple[str, ...]
    unexpected: tuple[str, ...]

    @property
    def finished(self) -> Finished | None:
        """The run's last event, if it is the `Finished` it must be."""
        last = self.events[-1] if self.events else None
        return last if isinstance(last, Finished) else None

    @property
    def label(self) -> str:
        """How a failure names the session, seed included, to replay it."""
        return f"task {self.task.id} ({self.protocol}, seed {self.seed!r})"


async def run_session(
    task: Task,
    model: ChaosModel,
    protocol: WireProtocol,
    seed: str,
    *,
    retry: RetryPolicy,
    done_when: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
) -> SessionRun:
    """Run `task` through `stayer.query()` against `model` on its own fake server tenant."""
    task.folder.mkdir(parents=True, exist_ok=True)
    server = FakeModelServer(instant=True).start()
    server.respond_with(model)
    provider = _provider(protocol, server)
    options = stayer.QueryOptions(
        provider=provider,
        model=MODELS[protocol],
        cwd=task.folder,
        tools=("Bash", "Read", "Write"),
        permission_mode="bypassPermissions",
        retry=retry,
        env={},  # nothing from the developer's environment (output limits, compaction switches)
        done_when=done_when,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
    )
    try:
        events = tuple([event async for event in stayer.query(task.prompt, options=options)])
    finally:
        await provider.aclose()
        server.close()
    unexpected = tuple(f"{u.request.path}: {u.reason}" for u in server.unexpected)
    return SessionRun(
        task, protocol, seed, events, model.ledger, tuple(server.violations), unexpected
    )


def _provider(protocol: WireProtocol, server: FakeModelServer) -> Provider:
    if protocol == "anthropic":
        return AnthropicProvider(
            api_key="test-key",
            base_url=server.url,
            read_timeout_s=5.0,
            first_byte_timeout_s=FIRST_BYTE_S,
            idle_timeout_s=IDLE_S,
        )
    return OpenAIChatProvider(
        api_key="test-key",
        base_url=server.openai_url,
        read_timeout_s=5.0,
        first_byte_timeout_s=FIRST_BYTE_S,
        idle_timeout_s=IDLE_S,
    )


# --- checks -----------------------------------------------------------------------------------


def sound_run_problems(run: SessionRun) -> list[str]:
    """What every run must show, however it ends: one `Finished`, last; no sign of the harness
    breaking; every request's history accepted; a valid final conversation; no tool call run
    twice, and none run that the model did not send whole."""
    finished = [event for event in run.events if isinstance(event, Finished)]
    problems: list[str] = []
    if len(finished) != 1 or run.finished is None:
        problems.append(f"{len(finished)} Finished events, the last event is {run.events[-1:]}")
    problems += [f"the server refused a history: {v}" for v in run.violations]
    problems += [f"a request nothing was scripted for: {u}" for u in run.unexpected]
    problems += [f"the harness broke: {text}" for text in _said(run.events) if _broken(text)]
    started = Counter(e.tool_use_id for e in run.events if isinstance(e, ToolCallStarted))
    problems += [f"tool call {i} ran {n} times" for i, n in started.items() if n > 1]
    problems += [f"withdrawn or cut call {i} ran" for i in started if i in run.ledger.never_run]
    problems += [f"call {i} ran, never sent whole" for i in started if i not in run.ledger.may_run]
    problems += [
        f"clearing old tool output grew the history ({e.tokens_before} -> {e.tokens_after})"
        for e in run.events
        if isinstance(e, Compacted)
        and e.method == "cleared_tool_results"
        and e.tokens_after >= e.tokens_before
    ]
    if run.finished is not None:
        try:
            assert_valid_history(run.finished.messages)
        except AssertionError as error:
            problems.append(f"the final conversation is not valid: {error}")
    return problems


def completion_problems(run: SessionRun) -> list[str]:
    """What a run that must finish its work shows besides: `completed`, the whole final answer,
    each step run exactly once, and the folder as the task leaves it."""
    problems = sound_run_problems(run)
    end = run.finished
    if end is None:
        return problems
    if end.terminal is not Terminal.COMPLETED:
        problems.append(f"ended {end.terminal.value}: {end.message}")
    answer = final_answer(end.messages)
    if answer != run.task.answer:
        problems.append(f"final answer {answer!r}, not {run.task.answer!r}")
    if not end.result_text or not run.task.answer.endswith(end.result_text):
        problems.append(f"result text {end.result_text!r} is not the end of the answer")
    runs = Counter(
        step.number
        for event in run.events
        if isinstance(event, ToolCallStarted)
        and (step := run.task.step_for(event.name, event.input)) is not None
    )
    problems += [
        f"step {s.number} ran {runs[s.number]} times" for s in run.task.steps if runs[s.number] != 1
    ]
    return problems + _folder_problems(run.task)


def _folder_problems(task: Task) -> list[str]:
    problems = []
    log = task.folder / EFFECTS_LOG
    lines = log.read_text().splitlines() if log.exists() else []
    if lines != task.effects():
        problems.append(f"{EFFECTS_LOG} holds {lines}, not {task.effects()}")
    for path, content in task.files().items():
        found = path.read_text() if path.exists() else None
        if found != content:
            problems.append(f"{path.name} holds {found!r}, not {content!r}")
    return problems


def final_answer(messages: Sequence[Message]) -> str:
    """The text the model wrote after its last tool result: its answer, continuations joined."""
    last = max(
        (
            i
            for i, m in enumerate(messages)
            if isinstance(m, UserMessage) and any(isinstance(b, ToolResultBlock) for b in m.content)
        ),
        default=-1,
    )
    return "".join(m.text for m in messages[last + 1 :] if isinstance(m, AssistantMessage))


def _said(events: Sequence[Event]) -> list[str]:
    """Every message the run gave people: the end, each retry's error, each withdrawal."""
    said: list[str] = []
    for event in events:
        if isinstance(event, Finished):
            said.append(event.message)
        elif isinstance(event, Retrying):
            said.append(event.error)
        elif isinstance(event, Withdrawn):
            said.append(event.reason)
    return said


def _broken(text: str) -> bool:
    return any(word in text for word in BROKEN)
