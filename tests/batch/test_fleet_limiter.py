"""`LocalLimiter`, the batch's one rate limit, on a clock the test moves by hand: how many
requests and tokens go when, in what order, and what a retry-after or a cancelled waiter does.
Nothing here sleeps or times anything: the clock only moves when a test says so."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from stayer.batch.config import RateLimit
from stayer.batch.limits import LocalLimiter

QUIET_STEPS = 50
"""Loop iterations that let every woken waiter run to its next wait."""


class HandClock:
    """A clock that moves only by `advance`; its sleepers wake when their moment comes."""

    def __init__(self) -> None:
        self.time = 0.0
        self.sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        woken = asyncio.get_running_loop().create_future()
        entry = (self.time + seconds, woken)
        self.sleepers.append(entry)
        try:
            await woken
        finally:
            self.sleepers.remove(entry)

    async def advance(self, seconds: float) -> None:
        """Move on by `seconds` in small steps, letting each waiter woken on the way act."""
        end = self.time + seconds
        while self.time < end:
            self.time = min(end, self.time + 0.125)
            for deadline, woken in list(self.sleepers):
                if deadline <= self.time + 1e-12 and not woken.done():
                    woken.set_result(None)
            await quiet()


async def quiet() -> None:
    for _ in range(QUIET_STEPS):
        await asyncio.sleep(0)


class Fleet:
    """Workers asking one limiter, and the moment (on the hand clock) each was let go."""

    def __init__(self, limiter: LocalLimiter, clock: HandClock) -> None:
        self.limiter, self.clock = limiter, clock
        self.granted: list[tuple[str, float]] = []
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def ask(self, name: str, *, provider: str = "anthropic", tokens: int = 0) -> None:
        async def worker() -> None:
            await self.limiter.acquire(provider, tokens)
            self.granted.append((name, self.clock.now()))

        self.tasks[name] = asyncio.create_task(worker())
        await quiet()

    async def ask_many(self, names: Iterable[str], *, provider: str = "anthropic") -> None:
        for name in names:
            await self.ask(name, provider=provider)

    def times(self) -> list[float]:
        return [at for _, at in self.granted]

    def order(self) -> list[str]:
        return [name for name, _ in self.granted]


def fleet(limits: dict[str, RateLimit], burst_s: float = 1.0) -> Fleet:
    clock = HandClock()
    return Fleet(LocalLimiter(limits, burst_s=burst_s, clock=clock), clock)


def most_in_any_span(times: list[float], span: float) -> int:
    """The largest number of `times` inside one closed span of `span` seconds."""
    return max(sum(1 for t in times if start <= t <= start + span) for start in times)


async def test_requests_go_at_the_limits_pace_in_the_order_they_asked() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.ask_many(["a", "b", "c", "d", "e"])
    await f.clock.advance(10)
    assert f.granted == [("a", 0.0), ("b", 1.0), ("c", 2.0), ("d", 3.0), ("e", 4.0)]


async def test_a_burst_is_what_the_limit_allows_in_the_burst_window_and_no_more() -> None:
    # 120 a minute is 2 a second; a 2-second burst is 4 requests at once.
    f = fleet({"*": RateLimit(requests_per_minute=120)}, burst_s=2.0)
    await f.ask_many(str(n) for n in range(20))
    await f.clock.advance(20)
    times = f.times()
    assert times[:5] == [0.0, 0.0, 0.0, 0.0, 0.5]
    assert f.order() == [str(n) for n in range(20)]
    for span in (0.0, 0.5, 1.0, 3.0, 7.5):
        assert most_in_any_span(times, span) <= 120 * (span + 2.0) / 60


async def test_nobody_waits_without_a_limit_and_a_limit_names_its_provider() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.ask_many(["o1", "o2", "o3"], provider="openai")
    await f.ask_many(["a1", "a2"], provider="anthropic")
    assert f.granted == [("o1", 0.0), ("o2", 0.0), ("o3", 0.0), ("a1", 0.0)]


async def test_the_star_limit_applies_to_each_provider_on_its_own() -> None:
    f = fleet({"*": RateLimit(requests_per_minute=60), "openai": RateLimit(120)})
    await f.ask_many(["a1", "a2"], provider="anthropic")
    await f.ask_many(["x1", "x2"], provider="scripted")
    await f.ask_many(["o1", "o2", "o3"], provider="openai")
    await f.clock.advance(1)
    assert sorted(f.granted, key=lambda g: (g[1], g[0])) == [
        ("a1", 0.0),
        ("o1", 0.0),
        ("o2", 0.0),
        ("x1", 0.0),
        ("o3", 0.5),
        ("a2", 1.0),
        ("x2", 1.0),
    ]


async def test_tokens_per_minute_hold_a_request_until_its_tokens_are_there() -> None:
    # 600 tokens a minute: 10 a second, 10 at most at once.
    f = fleet({"anthropic": RateLimit(tokens_per_minute=600)})
    await f.ask("a", tokens=6)
    await f.ask("b", tokens=6)
    await f.clock.advance(2)
    assert f.granted == [("a", 0.0), ("b", 0.25)]  # 4 left after a; 2 more came in 0.2 s


async def test_a_request_larger_than_the_bucket_goes_alone_and_the_next_wait_out_its_debt() -> None:
    f = fleet({"anthropic": RateLimit(tokens_per_minute=600)})
    await f.ask("big", tokens=35)  # the bucket holds 10: full, so it goes, 25 in debt
    await f.ask("next", tokens=5)
    await f.clock.advance(5)
    assert f.granted == [("big", 0.0), ("next", 3.0)]  # 25 of debt and 5 more at 10 a second


async def test_settling_a_lower_usage_gives_tokens_back_to_the_waiter_at_once() -> None:
    f = fleet({"anthropic": RateLimit(tokens_per_minute=600)})
    await f.ask("first", tokens=10)
    await f.ask("second", tokens=5)  # would wait half a second for its 5
    assert f.order() == ["first"]
    await f.limiter.settle("anthropic", estimated=10, used=2)
    await quiet()
    assert f.granted == [("first", 0.0), ("second", 0.0)]  # no clock moved


async def test_settling_a_higher_usage_makes_the_next_request_wait_longer() -> None:
    f = fleet({"anthropic": RateLimit(tokens_per_minute=600)})
    await f.ask("first", tokens=5)
    await f.limiter.settle("anthropic", estimated=5, used=25)  # 20 over: 15 in debt
    await f.ask("second", tokens=5)
    await f.clock.advance(3)
    assert f.granted == [("first", 0.0), ("second", 2.0)]


async def test_a_retry_after_holds_every_waiter_until_it_ends_then_they_go_in_order() -> None:
    f = fleet({})  # no rate limit: the retry-after alone holds them
    await f.limiter.slow_down("anthropic", 30.0)
    await f.ask_many(["a", "b", "c"])
    await f.ask("elsewhere", provider="openai")
    await f.clock.advance(29.875)
    assert f.granted == [("elsewhere", 0.0)]
    await f.clock.advance(0.125)
    assert f.granted[1:] == [("a", 30.0), ("b", 30.0), ("c", 30.0)]


async def test_a_shorter_retry_after_never_shortens_a_longer_one() -> None:
    f = fleet({})
    await f.limiter.slow_down("anthropic", 10.0)
    await f.clock.advance(1)
    await f.limiter.slow_down("anthropic", 2.0)
    await f.ask("a")
    await f.clock.advance(9)
    assert f.granted == [("a", 10.0)]


async def test_a_retry_after_and_the_rate_limit_both_hold() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.limiter.slow_down("anthropic", 5.0)
    await f.ask_many(["a", "b", "c"])
    await f.clock.advance(10)
    # The bucket filled while everyone waited: one at once when the pause ends, then 1 a second.
    assert f.granted == [("a", 5.0), ("b", 6.0), ("c", 7.0)]


async def test_only_the_first_waiter_sleeps_the_others_wait_their_turn_without_polling() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.ask_many(str(n) for n in range(10))
    assert len(f.clock.sleepers) == 1
    await f.clock.advance(3.5)
    assert len(f.clock.sleepers) == 1
    assert f.order() == ["0", "1", "2", "3"]


async def test_a_cancelled_waiter_takes_no_slot_and_blocks_nobody() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.ask_many(["first", "sleeping", "queued", "last"])
    await f.clock.advance(0.5)
    f.tasks["sleeping"].cancel()  # the one waiting on the clock
    f.tasks["queued"].cancel()  # one waiting its turn behind it
    await quiet()
    await f.clock.advance(5)
    assert f.granted == [("first", 0.0), ("last", 1.0)]
    assert all(task.done() for task in f.tasks.values())
    assert f.clock.sleepers == []


async def test_waiters_cancelled_at_the_moment_they_would_go_leave_the_slot_to_the_next() -> None:
    f = fleet({"anthropic": RateLimit(requests_per_minute=60)})
    await f.ask_many(["first", "second", "third"])
    await f.clock.advance(0.875)
    f.clock.time = 1.0  # the sleeper's moment has come, but it has not run yet
    for _, woken in f.clock.sleepers:
        woken.set_result(None)
    f.tasks["second"].cancel()
    await quiet()
    await f.clock.advance(3)
    assert f.granted == [("first", 0.0), ("third", 1.0)]


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (
            RateLimit(requests_per_minute=0),
            "the rate limit of anthropic: requests per minute must be a number above 0, not 0",
        ),
        (
            RateLimit(tokens_per_minute=-5),
            "the rate limit of anthropic: tokens per minute must be a number above 0, not -5",
        ),
    ],
)
def test_a_limit_that_allows_nothing_is_refused_in_one_line(limit: RateLimit, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        LocalLimiter({"anthropic": limit})
    assert str(caught.value) == message


@pytest.mark.parametrize("wait", [float("inf"), float("nan"), -3.0, 0.0])
async def test_a_wait_of_no_finite_length_holds_nobody(wait: float) -> None:
    f = fleet({})
    await f.limiter.slow_down("anthropic", wait)
    await f.ask("a")
    assert f.granted == [("a", 0.0)]
