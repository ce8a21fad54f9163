"""The fleet's rate limit over real HTTP: many sessions at once sharing one Anthropic client
under `LimitedProvider`, against one fake model server that notes when each request arrived.

What the server sees is the proof: after it refused one session with a retry-after, no request
from any session reaches it before that wait is over; under a requests-per-minute limit, no
span of time holds more requests than the limit allows.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from stayer import QueryOptions, query
from stayer.batch.config import RateLimit
from stayer.batch.limited import LimitedProvider
from stayer.batch.limits import LocalLimiter
from stayer.events import Event, Finished, Retrying, Terminal
from stayer.providers.anthropic import AnthropicProvider
from stayer.tools.names import BASH, WRITE
from tests.fakes.batch_router import TaskRouter, tagged, tool_turns
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Response, ToolCall, anthropic_error, reply

MODEL = "claude-sonnet-4-5"
RETRY_AFTER_S = 3.0
"""Long enough that no session of an unlimited fleet would keep away from the server this long
by chance: each of them sends its next request within milliseconds of being let go."""


class Arrivals:
    """When each request reached the server, and whose it was (noted on the server's thread)."""

    def __init__(self, router: TaskRouter) -> None:
        self._lock = threading.Lock()
        self.seen: list[tuple[float, str]] = []
        router.hooks.append(self._note)

    def _note(self, task: str, _request: RecordedRequest) -> None:
        with self._lock:
            self.seen.append((time.monotonic(), task))

    def times(self) -> list[float]:
        with self._lock:
            return [at for at, _ in self.seen]

    def of(self, task: str) -> list[float]:
        with self._lock:
            return [at for at, who in self.seen if who == task]


def options(provider: LimitedProvider, cwd: Path, tool: str) -> QueryOptions:
    return QueryOptions(
        provider=provider,
        model=MODEL,
        cwd=cwd,
        tools=(tool,),
        permission_mode="bypassPermissions",
        env={},
        persist_session=False,
    )


async def run(
    prompt: str, opts: QueryOptions, retrying: asyncio.Event | None = None
) -> list[Event]:
    """The run's events; `retrying` is set once it announces a retry."""
    events: list[Event] = []
    async for event in query(prompt, options=opts):
        events.append(event)
        if isinstance(event, Retrying) and retrying is not None:
            retrying.set()
    return events


def completed(events: Sequence[Event]) -> bool:
    last = events[-1]
    return isinstance(last, Finished) and last.terminal is Terminal.COMPLETED


def retries(events: Sequence[Event]) -> int:
    return sum(isinstance(event, Retrying) for event in events)


async def wait_for_file(path: Path, timeout_s: float = 20.0) -> None:
    """Until the marker a scripted command writes exists: a signal, not a guess."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.01)


def waits_for(folder: Path, task: str) -> Response:
    """A Bash call that says it started (a file), then waits until the test lets it go."""
    command = f"touch {folder}/started-{task}; until [ -e {folder}/go-{task} ]; do sleep 0.01; done"
    return reply(ToolCall(f"toolu_{task}", BASH, {"command": command}))


async def test_a_retry_after_keeps_every_session_away_until_it_is_over(tmp_path: Path) -> None:
    refused, others = "t0", [f"t{n}" for n in range(1, 6)]
    slow_down = anthropic_error(
        429, "rate_limit_error", "slow down", headers={"retry-after": str(int(RETRY_AFTER_S))}
    )
    router = TaskRouter(
        {task: [waits_for(tmp_path, task), reply(f"done {task}")] for task in others}
    )
    router.add(refused, [waits_for(tmp_path, refused), slow_down, reply("done")])
    arrivals = Arrivals(router)
    limiter = LocalLimiter({})  # no rate: the retry-after alone holds the fleet
    with FakeModelServer() as server:
        server.respond_with(router)
        client = AnthropicProvider(api_key="test-key", base_url=server.url)
        shared = LimitedProvider(client, limiter)
        retrying = asyncio.Event()
        tasks = {
            task: asyncio.create_task(
                run(tagged(task, "work"), options(shared, tmp_path, BASH), retrying)
            )
            for task in [refused, *others]
        }
        # Every session is in its tool, nothing in flight: then only the refused one goes on.
        for task in tasks:
            await wait_for_file(tmp_path / f"started-{task}")
        (tmp_path / f"go-{refused}").touch()
        # The session announces its retry once the limiter holds the fleet: then every other
        # session is let go, well inside the retry-after.
        await retrying.wait()
        for task in others:
            (tmp_path / f"go-{task}").touch()
        results = {task: await job for task, job in tasks.items()}
        await client.aclose()

    refused_at = arrivals.of(refused)[1]  # the request the 429 answered

    after = [at for at in arrivals.times() if at > refused_at]
    assert len(after) == len(others) + 1  # each other's next request, and the refused retry
    assert min(after) >= refused_at + RETRY_AFTER_S
    assert all(completed(events) for events in results.values())
    assert retries(results[refused]) == 1  # its own retry, waiting at the limiter, cost no more
    assert [retries(results[task]) for task in others] == [0] * len(others)


async def test_no_span_of_time_holds_more_requests_than_the_limit_allows(tmp_path: Path) -> None:
    rpm, burst_s, jitter_s = 240.0, 1.0, 0.3
    tasks = [f"r{n}" for n in range(10)]
    router = TaskRouter({task: tool_turns(task, 1, workspace=tmp_path) for task in tasks})
    arrivals = Arrivals(router)
    limiter = LocalLimiter({"anthropic": RateLimit(requests_per_minute=rpm)}, burst_s=burst_s)
    with FakeModelServer() as server:
        server.respond_with(router)
        client = AnthropicProvider(api_key="test-key", base_url=server.url)
        shared = LimitedProvider(client, limiter)
        jobs = [run(tagged(task, "write"), options(shared, tmp_path, WRITE)) for task in tasks]
        results = await asyncio.gather(*jobs)
        await client.aclose()

    assert all(completed(events) for events in results)
    times = sorted(arrivals.times())
    assert len(times) == 2 * len(tasks)
    for span in (0.0, 0.5, 1.0, 2.0, 3.0):
        # What the limit allows in `span` seconds plus its burst, and a little for the time
        # between the limiter's go and the server's reading the request.
        allowed = rpm * (span + burst_s + jitter_s) / 60
        most = max(sum(1 for t in times if start <= t <= start + span) for start in times)
        assert most <= allowed, f"{most} requests within {span} s"
