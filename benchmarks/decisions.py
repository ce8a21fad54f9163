"""The recovery tree's decisions, short-circuited or timed, for `benchmarks.recovery`.

The loop reaches each decision of its recovery tree through a module or class attribute
(`recovery.after_response`, `compaction.autocompact`, `ToolRound.failure_signature`, ...), so
this process can swap them for a run and put them back after it, without touching stayer:

* `bare_loop()`: each decision replaced by the one a loop without recovery makes (after a
  response, run the tools or complete; after a tool round, go on, or end when interrupted; no
  failure signature, repeat count, budget check, context estimate or blocking check);
* `Stopwatch().timing()`: the real decisions, each inside a pair of `perf_counter` calls.

`DECISIONS` lists them with how often a fault-free run reaches each, which `check_reached`
holds a timed run to: if the loop stopped calling one through its attribute, the patch would
silently miss it, and the bare arm would no longer be what it claims.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from benchmarks.instant import BenchmarkError
from stayer.events import Continue, Event, Terminal
from stayer.loop import compaction, recovery
from stayer.loop.compaction import Outcome
from stayer.loop.executor import ToolRound
from stayer.loop.recovery import Finish, RunTools, Step
from stayer.loop.state import LoopParams, LoopState
from stayer.messages import AssistantMessage


def _plain_after_response(
    params: LoopParams, state: LoopState, message: AssistantMessage, *, started: bool = False
) -> Step:
    return RunTools(state) if message.tool_uses else Finish(Terminal.COMPLETED)


def _plain_before_completing(params: LoopParams, state: LoopState, feedback: list[str]) -> Step:
    return Finish(Terminal.COMPLETED)


def _plain_after_tools(params: LoopParams, state: LoopState, *, aborted: bool) -> Finish | None:
    return Finish(Terminal.ABORTED_TOOLS) if aborted else None


def _plain_next_turn(
    state: LoopState, *, cut: bool, nudged: bool = False, broken: bool = False
) -> LoopState:
    return replace(state, turn_count=state.turn_count + 1, transition=Continue.NEXT_TURN)


def _no_repeats(
    params: LoopParams, state: LoopState, signature: tuple[str, ...] | None
) -> tuple[LoopState, str | None]:
    return state, None


def _no_signature(self: ToolRound) -> tuple[str, ...] | None:
    return None


def _never_blocked(params: LoopParams, state: LoopState) -> Finish | None:
    return None


async def _no_autocompact(
    params: LoopParams, state: LoopState, out: Outcome
) -> AsyncIterator[Event]:
    out.state = state
    nothing: tuple[Event, ...] = ()  # a generator that yields nothing, as under the threshold
    for event in nothing:
        yield event


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision point of the recovery tree, reached through a module or class attribute."""

    owner: object
    name: str
    bare: object
    """What the bare arm puts in its place."""
    per_turn: int
    per_run: int
    """A fault-free run of N tool turns reaches it `per_turn * N + per_run` times."""

    def expected(self, turns: int) -> int:
        """Calls in a fault-free run of `turns` tool turns and a final answer."""
        return self.per_turn * turns + self.per_run


DECISIONS: tuple[Decision, ...] = (
    Decision(recovery, "after_response", _plain_after_response, 1, 1),
    Decision(recovery, "before_completing", _plain_before_completing, 0, 1),
    Decision(ToolRound, "failure_signature", _no_signature, 1, 0),
    Decision(recovery, "repeats", _no_repeats, 1, 0),
    Decision(recovery, "after_tools", _plain_after_tools, 1, 0),
    Decision(recovery, "next_turn", _plain_next_turn, 1, 0),
    Decision(compaction, "autocompact", _no_autocompact, 1, 1),
    Decision(compaction, "blocked", _never_blocked, 1, 1),
)
"""`recovery.over_budget` is not listed: the loop reaches it only after a recovery (none here)
and from inside `after_tools`, which the bare arm replaces whole."""


@contextmanager
def patched(replacements: Sequence[tuple[object, str, object]]) -> Iterator[None]:
    """Set each `owner.name` to its replacement for the duration, then put the originals back."""
    for owner, name, _ in replacements:
        if not hasattr(owner, name):
            raise BenchmarkError(f"{owner!r} has no {name}: update benchmarks.decisions.DECISIONS")
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replacements]
    try:
        for owner, name, value in replacements:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def bare_loop() -> contextlib.AbstractContextManager[None]:
    """The bare arm: every decision of the recovery tree short-circuited (see the docstring)."""
    return patched([(d.owner, d.name, d.bare) for d in DECISIONS])


@dataclass
class Stopwatch:
    """Time spent inside each wrapped decision, and how often each was called."""

    spent_s: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: Counter[str] = field(default_factory=Counter[str])

    def wrap(self, name: str, decide: Callable[..., Any]) -> Callable[..., Any]:
        """`decide` timed; an async generator's time is the time inside its steps."""
        if inspect.isasyncgenfunction(decide):
            return self._wrap_steps(name, decide)

        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return decide(*args, **kwargs)
            finally:
                self.spent_s[name] += time.perf_counter() - began
                self.calls[name] += 1

        return timed

    def _wrap_steps(
        self, name: str, steps: Callable[..., AsyncIterator[Event]]
    ) -> Callable[..., AsyncIterator[Event]]:
        async def timed(*args: Any, **kwargs: Any) -> AsyncIterator[Event]:
            self.calls[name] += 1
            events = steps(*args, **kwargs)
            while True:
                began = time.perf_counter()
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    self.spent_s[name] += time.perf_counter() - began
                    return
                self.spent_s[name] += time.perf_counter() - began
                yield event

        return timed

    @contextmanager
    def timing(self) -> Iterator[None]:
        """The real decisions, each wrapped."""
        wrapped = [
            (d.owner, d.name, self.wrap(d.name, getattr(d.owner, d.name))) for d in DECISIONS
        ]
        with patched(wrapped):
            yield


def check_reached(watch: Stopwatch, turns: int) -> None:
    """Every decision called as often as a fault-free run calls it: the patches reach the loop."""
    wrong = [
        f"{d.name} {watch.calls[d.name]}/{d.expected(turns)}"
        for d in DECISIONS
        if watch.calls[d.name] != d.expected(turns)
    ]
    if wrong:
        raise BenchmarkError(
            "decisions not reached as expected (calls/expected): " + ", ".join(wrong)
        )
