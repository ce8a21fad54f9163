"""What a tree of sessions shares about its subagents: how deep they may nest, how many run at
once, and what every run of the tree has spent against the top session's budget.

A top-level session makes one `Tree`; every child derived from it, and their children, hold
the same one. Runaway cost is the complaint users make most of subagents, so the bounds are
the tree's, not each session's: ten children each allowed ten more would otherwise be a
hundred, and each child checking only its own spend would let the tree spend the budget many
times over.

The ledger keeps one `Account` per run in the tree (the top run's and each child's): what its
own model calls cost so far, and which finished descendants were billed into it (a foreground
child's spend becomes part of its parent's run through the tool's result; a background
child's through `take_spent`). A run's budget check adds to its own cost everything else the
tree spent: every account's own cost, less its own and those already billed into it, so no
dollar is counted twice and none is missed while a child is still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any

from msgspec.structs import replace

from stayer.events import Event, Finished
from stayer.loop.abort import AbortSignal, until_aborted
from stayer.messages import ModelSpend, Usage
from stayer.tools.base import ToolFailure

DEFAULT_MAX_DEPTH = 3
"""How deep subagents may nest (a child of the top session is at depth 1), as Claude Code's
`CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH` defaults."""
DEFAULT_MAX_CONCURRENT = 10
"""How many subagents of one tree may run at once (`CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`);
more wait for a slot."""

DEPTH_VAR = "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH"
CONCURRENT_VAR = "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"


class Account:
    """One run's spend in the tree: its own model calls, and the runs billed into it; and, for
    a child's run, its place among the running children."""

    __slots__ = ("billed", "holds", "own", "placed", "waits")

    def __init__(self) -> None:
        self.own = 0.0
        self.billed: list[Account] = []
        self.placed = False
        """The run is a child's, which runs in a place among the running children."""
        self.holds = False
        """... and holds its place now (it gave it back while it waits on its children)."""
        self.waits = 0
        """How many waits on its own children the run is in (foreground calls, the end)."""


class Tree:
    """The bounds and the ledger a session tree shares (see the module's docstring).

    The cap counts the children doing work. A run blocked on its own children gives its place
    back while it waits (`pause`) and takes one again as it goes on (`resume`): a place is
    then only ever held by a run that goes forward without waiting on another place, so the
    runs waiting for one are always served in the end, however deep and wide the tree is."""

    def __init__(self, env: Mapping[str, str]) -> None:
        warnings: list[str] = []
        self.max_depth = _limit(env, DEPTH_VAR, DEFAULT_MAX_DEPTH, warnings, least=0)
        self.max_concurrent = _limit(env, CONCURRENT_VAR, DEFAULT_MAX_CONCURRENT, warnings, least=1)
        self.warnings = tuple(warnings)
        self._slots: asyncio.Semaphore | None = None
        self._accounts: list[Account] = []
        self.running = 0
        """Children holding a place now, in the whole tree."""

    def open_top(self) -> Account:
        """A new top-level run: its account, the ledger starting from it (the runs of earlier
        prompts were settled, and their children stopped, as those runs ended)."""
        account = Account()
        self._accounts = [account]
        return account

    def open(self) -> Account:
        """A child's run: its account, counted from now on."""
        account = Account()
        self._accounts.append(account)
        return account

    def elsewhere(self, account: Account) -> float:
        """What the tree has spent that `account`'s run has not counted as its own."""
        mine = {id(account), *(id(billed) for billed in account.billed)}
        return sum(other.own for other in self._accounts if id(other) not in mine)

    def bill(self, parent: Account, child: Account) -> None:
        """`child`'s run is now part of `parent`'s (its spend reached the parent's run)."""
        parent.billed.extend((child, *child.billed))

    async def slot(self, abort: AbortSignal, child: Account) -> None:
        """Wait for a place among the running children for `child`'s run (an abort ends the
        wait with a `ToolFailure`); `release` gives it back."""
        if not await self._take(abort, child):
            raise ToolFailure("the subagent was stopped while it waited for a free slot")
        child.placed = True

    def release(self, child: Account) -> None:
        """`child`'s run ended: its place, if it held one, is free again."""
        child.placed = False
        self._give(child)

    def pause(self, account: Account) -> None:
        """`account`'s run waits on its children: it gives its place back meanwhile."""
        account.waits += 1
        self._give(account)

    def unpause(self, account: Account) -> None:
        """A wait of `account`'s run is over, and its run ends: it takes no place again."""
        account.waits -= 1

    async def resume(self, abort: AbortSignal, account: Account) -> None:
        """A wait of `account`'s run is over: once it waits on nothing, it takes a place again
        before it goes on (an abort ends the wait; the run stops without one)."""
        account.waits -= 1
        if account.placed and not account.holds and account.waits == 0:
            await self._take(abort, account)

    async def _take(self, abort: AbortSignal, account: Account) -> bool:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent)
        if await until_aborted(self._slots.acquire(), abort) is None:
            return False
        account.holds = True
        self.running += 1
        return True

    def _give(self, account: Account) -> None:
        if not account.holds:
            return
        assert self._slots is not None
        account.holds = False
        self.running -= 1
        self._slots.release()


def _limit(
    env: Mapping[str, str], name: str, default: int, warnings: list[str], *, least: int
) -> int:
    """A whole-number limit from the environment; an unusable value keeps the default, said
    in one line (a typo must not lift the bound, nor stop the session)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = least - 1
    if value < least:
        warnings.append(f"{name}={raw!r} is not a whole number >= {least}; using {default}")
        return default
    return value


def priced(model: str, usage: Usage) -> float:
    """What one call of `model` cost at list prices (the pricing tables load on first use)."""
    from stayer.providers.profiles import cost_usd

    return cost_usd(model, usage)


class Background:
    """A session's children running in the background: their events on the way to the
    session's stream, and what each left for the parent's model and bill when it ended."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._tasks: dict[str, tuple[asyncio.Task[None], AbortSignal]] = {}
        self._notes: list[str] = []
        self._spent: list[tuple[Account, tuple[ModelSpend, ...]]] = []
        self._waiting = False

    def launch(
        self, agent_id: str, run: Callable[[AbortSignal], Coroutine[Any, Any, None]]
    ) -> None:
        """Start a child's run (`run(abort)`) in the session's keeping."""
        abort = AbortSignal()
        task = asyncio.ensure_future(run(abort))
        self._tasks[agent_id] = (task, abort)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[None]) -> None:
        """A child's task ended: wake whoever waits on the queue. Its run reports its own
        failures in its notification; what escaped it is taken here, not left unretrieved."""
        if not task.cancelled():
            task.exception()
        self._queue.put_nowait(None)

    @property
    def running(self) -> int:
        return sum(1 for task, _ in self._tasks.values() if not task.done())

    def put(self, event: Event) -> None:
        self._queue.put_nowait(event)

    def ended(self, note: str, account: Account, spent: tuple[ModelSpend, ...]) -> None:
        self._notes.append(note)
        self._spent.append((account, spent))

    def owe(self, account: Account, spent: tuple[ModelSpend, ...]) -> None:
        """A foreground child stopped before its call could bill it: its spend, billed to the
        run as an ended background child's is."""
        self._spent.append((account, spent))

    def drain(self) -> list[Event]:
        """The children's events so far (none while the loop waits on them: it yields them)."""
        if self._waiting:
            return []
        found: list[Event] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None:
                found.append(item)
        return found

    async def until_done(self, abort: AbortSignal, account: Account) -> AsyncIterator[Event]:
        """The children's events as they come, until every one has ended; the run of
        `account` waiting on them gives its place back meanwhile, and takes one again after."""
        if not self.running and self._queue.empty():
            return  # nothing to wait on: the run keeps its place
        self._waiting = True
        self._tree.pause(account)
        resumed = False
        try:
            while self.running or not self._queue.empty():
                item = await self._queue.get()
                if item is not None:
                    yield item
            resumed = True
            await self._tree.resume(abort, account)
        finally:
            self._waiting = False
            if not resumed:  # left off (the run stops): it takes no place again
                self._tree.unpause(account)

    def take_notes(self) -> tuple[str, ...]:
        taken, self._notes = self._notes, []
        return tuple(taken)

    def late_spend(self, finished: Finished, into: Account) -> Finished:
        """`finished` with what children stopped at its run's end had spent (their spend comes
        too late for the loop to bill it)."""
        spent = self.take_spent(into)
        if not spent:
            return finished
        from stayer.loop.fallback import billed_spends
        from stayer.loop.state import LoopState

        tally = LoopState((), usage=finished.usage, model_usage=finished.model_usage)
        tally = billed_spends(tally, spent)
        cost = sum(entry.cost_usd for entry in tally.model_usage)
        return replace(finished, usage=tally.usage, model_usage=tally.model_usage, cost_usd=cost)

    def take_spent(self, into: Account) -> tuple[ModelSpend, ...]:
        """What the ended children spent, billed from now on to the run `into`."""
        taken, self._spent = self._spent, []
        for account, _ in taken:
            self._tree.bill(into, account)
        return tuple(spend for _, spent in taken for spend in spent)

    async def stop(self) -> None:
        """Stop every child still running (its notification says so) and wait for it to end."""
        running = [(task, abort) for task, abort in self._tasks.values() if not task.done()]
        for _, abort in running:
            abort.abort("stopped: the run that started it ended")
        await asyncio.gather(*(task for task, _ in running), return_exceptions=True)
        self._tasks = {k: v for k, v in self._tasks.items() if not v[0].done()}
