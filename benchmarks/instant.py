"""The real loop inside the benchmark process, against an instant model with a clock on each call.

`ClockedModel` is a provider that answers at once: the scripted model's streaming (the same
events a live provider yields), with the reply chosen by a function of the request. For each
call it records, on `time.perf_counter()`:

* `arrived`: the moment the loop asked for the response (`provider.stream(request)` began);
* `model_s`: the time spent inside the model's own generator, producing the events;
* `ended`: the moment the last event (`MessageCompleted`) was handed to the loop;
* `build_s`: with `encode` given, the time spent building the request's body before `arrived`
  (a provider over HTTP builds it inside `stream`, before sending; it is the harness's work,
  so it falls in the interval that ends at `arrived`, not in `model_s`).

So, between two calls k and k+1, `arrived[k+1] - arrived[k] - model_s[k]` is the time the
process spent in the harness (consuming the stream, deciding, running the tools, building the
next request), and `arrived[k+1] - ended[k]` is the in-process analogue of the per-turn figure
of `benchmarks.run` (end of the response to the next request, without HTTP and SSE parsing).

`loop_params` makes the `LoopParams` a CLI run would get (`stayer.session.setup.prepare`: the
built-in tools, the real system prompt, permissions in bypass mode, the output limits) with the
model swapped for the clocked one; `drive` runs `stayer.loop.run.query` to its `Finished`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from stayer.events import Event, Finished, StreamEvent
from stayer.loop.run import query
from stayer.loop.state import LoopParams
from stayer.messages import Message
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Reply, ScriptedProvider
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare

PROMPT = "hi"


class BenchmarkError(RuntimeError):
    """A run did not behave (wrong terminal reason, wrong number of calls, a failed tool)."""


@dataclass
class CallClock:
    """The clocks of one model call (perf_counter seconds) and the request it answered."""

    request: ModelRequest
    arrived: float
    ended: float = math.nan
    model_s: float = 0.0
    build_s: float = 0.0


class ClockedModel:
    """An instant provider: `respond(request)` picks each reply, the scripted model streams it.

    `calls` is how many calls the run should make; one more is an error (the scripted model is
    strict), and `assert_done` says when fewer were made. `encode`, when given, builds each
    request's body first, as an HTTP provider would (`RequestEncoder.encode`, say).
    """

    def __init__(
        self,
        respond: Callable[[ModelRequest], Reply],
        calls: int,
        *,
        encode: Callable[[ModelRequest], bytes] | None = None,
    ) -> None:
        self._inner = ScriptedProvider([respond] * calls, model="claude-sonnet-4-5")
        self._encode = encode
        self.clocks: list[CallClock] = []

    @property
    def name(self) -> str:
        return "instant"

    async def aclose(self) -> None:
        return None

    def assert_done(self) -> None:
        """Raise `BenchmarkError` unless every scripted call was made."""
        if self._inner.remaining:
            raise BenchmarkError(f"{self._inner.remaining} model call(s) never came")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream the reply, timing the model's own work apart from the loop's."""
        began = time.perf_counter()
        if self._encode is not None:
            self._encode(request)
        clock = CallClock(request, time.perf_counter())
        clock.build_s = clock.arrived - began if self._encode is not None else 0.0
        self.clocks.append(clock)
        events = self._inner.stream(request)
        while True:
            began = time.perf_counter()
            try:
                event = await anext(events)
            except StopAsyncIteration:
                clock.model_s += time.perf_counter() - began
                return
            clock.ended = time.perf_counter()
            clock.model_s += clock.ended - began
            yield event


def bench_env(home: Path) -> dict[str, str]:
    """The variables the run's tools see: enough to find bash, git and ripgrep."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}


def loop_params(model: ClockedModel, cwd: Path, home: Path) -> LoopParams:
    """The parameters a CLI run in `cwd` gets (bypass mode, built-in tools), on `model`."""
    options = QueryOptions(
        provider=model,
        model="claude-sonnet-4-5",
        cwd=cwd,
        permission_mode="bypassPermissions",
        env=bench_env(home),
    )
    return prepare(options, PROMPT).params


async def drive(params: LoopParams, messages: tuple[Message, ...]) -> tuple[list[Event], Finished]:
    """Run the loop on `messages` to the end; every event, and the `Finished` one."""
    events = [event async for event in query(params, messages)]
    last = events[-1]
    if not isinstance(last, Finished):
        raise BenchmarkError(f"the run ended with {type(last).__name__}, not Finished")
    return events, last
