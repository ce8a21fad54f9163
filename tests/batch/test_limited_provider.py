"""`LimitedProvider` at its seams: what it asks of the fleet's limiter around each call of the
client it wraps (a scripted model here; `test_rate_limit_over_the_wire` has the real thing)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stayer.batch.limited import LimitedProvider, request_tokens
from stayer.errors import ModelError, Overloaded, RateLimited, ServerError
from stayer.events import StreamEvent
from stayer.loop.state import RetryPolicy
from stayer.messages import TextBlock, Usage, UserMessage
from stayer.providers.base import ModelRequest
from stayer.providers.scripted import Fault, Reply, ScriptedProvider, text

REQUEST = ModelRequest(
    model="m", system="You are terse." * 10, messages=(UserMessage((TextBlock("hi " * 400),)),)
)


@dataclass
class Recorder:
    """A fleet limiter that lets everything go and writes down what it was asked."""

    model: ScriptedProvider
    calls: list[tuple[object, ...]] = field(default_factory=list[tuple[object, ...]])

    async def acquire(self, provider: str, tokens: int) -> None:
        self.calls.append(("acquire", provider, tokens, len(self.model.requests)))

    async def settle(self, provider: str, estimated: int, used: int) -> None:
        self.calls.append(("settle", provider, estimated, used))

    async def slow_down(self, provider: str, retry_after_s: float) -> None:
        self.calls.append(("slow_down", provider, retry_after_s))


class Clock:
    def __init__(self) -> None:
        self.time = 100.0

    def __call__(self) -> float:
        return self.time


def limited(
    *steps: Reply | Fault, retry: RetryPolicy | None = None
) -> tuple[LimitedProvider, Recorder, Clock]:
    model = ScriptedProvider(steps)
    recorder, clock = Recorder(model), Clock()
    return LimitedProvider(model, recorder, retry=retry, clock=clock), recorder, clock


async def call(provider: LimitedProvider) -> list[StreamEvent]:
    return [event async for event in provider.stream(REQUEST)]


async def refused(provider: LimitedProvider) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await call(provider)
    return caught.value


def pauses(recorder: Recorder) -> list[float]:
    return [float(str(c[2])) for c in recorder.calls if c[0] == "slow_down"]


async def test_a_call_waits_its_turn_before_it_is_sent_and_settles_with_what_it_used() -> None:
    answer = Reply(text("ok").content, usage=Usage(300, 40, cache_read_input_tokens=1000))
    provider, recorder, _ = limited(answer)
    events = await call(provider)
    estimated = request_tokens(REQUEST)
    assert 300 <= estimated <= 400  # 1,200 characters of prompt and 140 of system, 4 a token
    assert recorder.calls == [
        ("acquire", "scripted", estimated, 0),  # nothing sent before the limiter said so
        ("settle", "scripted", estimated, 1340),
    ]
    assert events[-1].message.usage.output_tokens == 40  # type: ignore[union-attr]
    assert provider.name == "scripted"


async def test_a_429_holds_the_fleet_for_the_servers_retry_after_and_is_raised_as_it_came() -> None:
    error = RateLimited("slow down", retry_after=7.0)
    provider, recorder, _ = limited(Fault(error))
    assert await refused(provider) is error
    assert [c[0] for c in recorder.calls] == ["acquire", "slow_down"]
    assert pauses(recorder) == [7.0]


async def test_a_retry_after_beyond_the_loops_cap_holds_the_fleet_only_as_long() -> None:
    retry = RetryPolicy(max_retry_after_s=60.0)
    provider, recorder, _ = limited(Fault(RateLimited("x", retry_after=3600.0)), retry=retry)
    await refused(provider)
    assert pauses(recorder) == [60.0]


async def test_without_a_retry_after_the_fleet_backs_off_as_the_loop_would() -> None:
    retry = RetryPolicy(base_delay_s=2.0, max_delay_s=30.0)
    steps = [Fault(RateLimited("x")) for _ in range(4)]
    provider, recorder, clock = limited(*steps, text("ok"), Fault(RateLimited("x")), retry=retry)
    await refused(provider)
    await refused(provider)  # refused again within the pause: the same refusal, no escalation
    clock.time += 3.0
    await refused(provider)  # refused after the pause: the fleet's second in a row
    clock.time += 5.0
    await refused(provider)
    clock.time += 9.0
    await call(provider)  # an answer ends the run of refusals
    clock.time += 11.0
    await refused(provider)
    first, same, second, third, after = pauses(recorder)
    assert 2.0 <= first <= 2.5 and 2.0 <= same <= 2.5  # the loop's jitter adds up to a quarter
    assert 4.0 <= second <= 5.0
    assert 8.0 <= third <= 10.0
    assert 2.0 <= after <= 2.5


async def test_only_a_refusal_to_go_faster_holds_the_fleet() -> None:
    busy = Overloaded("busy", status=529, retry_after=4.0)
    provider, recorder, _ = limited(Fault(ServerError("boom", status=500)), Fault(busy))
    await refused(provider)
    assert pauses(recorder) == []  # a server error says nothing about the rate
    await refused(provider)
    assert pauses(recorder) == [4.0]  # but a server that names a wait is heard, whatever it is


async def test_without_a_tokens_limit_nothing_is_estimated_or_settled() -> None:
    model = ScriptedProvider([text("ok")])
    recorder = Recorder(model)
    await call(LimitedProvider(model, recorder, count_tokens=False))
    assert recorder.calls == [("acquire", "scripted", 0, 0)]
