"""`stayer batch --ray`: the same batch, each task a Ray task, results gathered by the driver.

The one module of stayer that imports Ray (an optional extra, `pip install 'stayer[ray]'`);
`stayer batch` imports this module only when `--ray` is given. The driver (this process)
connects to a cluster, or starts a local Ray instance sized to this machine, makes the batch's
one limiter actor (`ray_limiter`), and keeps about `concurrency` tasks in flight: each is a
Ray task asking for `cpus_per_task` CPUs and `memory_per_task_mib` of memory that runs
`ray_worker.run_on_worker` (the local runner's `run_task` on the worker). Results are taken as
they complete, written to the same `results.jsonl` as a local batch, transcripts under the
output folder, and told to the listener (each attempt's `ObjectRef` future is awaited on the
batch's event loop, which stays free for the display and the signals, where a blocking
`ray.wait` would hold it). The variables that choose and reach the model service
(`ANTHROPIC_*`, `OPENAI_*`, ...: `pool.endpoint_environment`) travel with each task as its
runtime environment, so a worker talks to the model the way the driver would; the rest of a
worker's environment is the cluster's own.

A task lost with its worker (the process killed, its node gone) is run once more; a second
loss is an infrastructure failure (stage `worker`). Ray's own retries are off so that this
module counts the attempts. An exception from the task's own code is not retried: it is a
bug, not a lost machine, and is reported (stage `internal`), unless it says stayer cannot be
imported on the worker (stage `worker`, with what to install).

A worker that does not stop at its task's timeout (stuck in a C call, a blocked thread, a
stopped process: nothing the task's own clock can interrupt) does not hold the batch: the
driver watches each attempt from when it began on its worker (the limiter actor keeps that
time), and past the longest an honest run can take (`overdue_after_s`) it cancels the Ray task
by force (its worker killed) and writes the task's line at once as `timeout` with stage
`worker`.

An address is probed before Ray dials it (`auto` looked up as Ray would), so a cluster that
is gone is one line at once rather than minutes of Ray's retries.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

import ray
from msgspec import Struct
from msgspec.structs import replace
from ray.exceptions import (
    NodeDiedError,
    OutOfMemoryError,
    RaySystemError,
    RayTaskError,
    WorkerCrashedError,
)

from stayer.errors import StayerError

from .config import BatchConfig, RayPlacement
from .listener import BatchListener
from .pool import endpoint_environment
from .ray_limiter import LimiterHandle, LimiterHost, attempt_key
from .ray_worker import MARKER, WorkerOutcome, WorkerPlan, run_on_worker
from .results import ResultFacts, ResultsLog, Stage, TaskResult
from .task_run import STOP_GRACE_S, failure, one_line
from .tasks import BatchTask

LOST = (WorkerCrashedError, NodeDiedError, RaySystemError, OutOfMemoryError)
"""How Ray says a task's worker is gone (killed, killed for memory, its node lost)."""
ATTEMPTS = 2
"""A lost task runs at most this many times."""
WATCHDOG_GRACE_S = 20.0
"""How long past the longest an honest run of a task can take the driver waits before it
cancels the task's worker (its diff, its workspace's removal, a busy machine)."""
WATCH_EVERY_S = 1.0
"""How often the driver looks for overdue attempts (only once one could be)."""
_PROBE_TIMEOUT_S = 5.0
_MIB = 1024 * 1024


class RayUnavailable(StayerError):
    """Ray could not be started or reached, or was lost mid-batch; the message says why."""


class _Flight(Struct, frozen=True):
    """One attempt of one task, in flight on the cluster."""

    task: BatchTask
    attempt: int
    started: float
    """When the task's first attempt was sent (`time.monotonic`): its line's duration."""
    ref: Any
    """The attempt's `ray.ObjectRef`."""
    sent: float
    """When this attempt was sent: it cannot have begun on its worker before."""


@contextmanager
def on_ray(placement: RayPlacement) -> Iterator[int]:
    """Ray started (or connected to) for the block, shut down after it; yields how many tasks
    the cluster's CPUs run at once (`cluster_slots`). Raises `RayUnavailable` in one line.
    Start it before installing signal handlers: `ray.init` sets its own."""
    start_ray(placement)
    try:
        yield cluster_slots(placement)
    finally:
        ray.shutdown()


def cluster_slots(placement: RayPlacement) -> int:
    """How many tasks asking `placement.cpus_per_task` CPUs the cluster's CPUs run at once
    now (at least one: an autoscaler may add a node for a task that does not fit yet)."""
    resources = ray.cluster_resources()  # type: ignore[no-untyped-call]  # Ray leaves it bare
    cpus = float(resources.get("CPU", 0.0))
    if placement.cpus_per_task <= 0:
        return 1_000_000  # a task asking no CPU waits for none
    return max(1, int(cpus / placement.cpus_per_task + 1e-9))


async def run_batch_on_ray(
    tasks: Sequence[BatchTask],
    config: BatchConfig,
    listener: BatchListener,
    *,
    log: ResultsLog | None = None,
) -> list[ResultFacts]:
    """Run the tasks of `tasks` that have no result yet as Ray tasks (inside `on_ray`);
    returns the facts of every task that has a result now, in file order. `log` is the results
    file if the caller opened it already, else it is opened (and closed) here."""
    owned = log is None
    log = log or ResultsLog(config.out_dir, retry_errors=config.retry_errors)
    try:
        todo = [task for task in tasks if task.id not in log.done]
        listener.planned(len(tasks), len(tasks) - len(todo))
        await _Driver(config, listener, log).run(todo)
        return [log.done[task.id] for task in tasks if task.id in log.done]
    finally:
        if owned:
            log.close()


def start_ray(placement: RayPlacement) -> None:
    """Connect to the cluster at `placement.address`, or start a local Ray instance (None);
    logs quiet, no dashboard. Raises `RayUnavailable` in one line."""
    address = placement.address
    try:
        if address is None:
            ray.init(
                address="local",
                include_dashboard=False,
                logging_level=logging.ERROR,
                log_to_driver=False,
                configure_logging=True,
            )
        else:
            _probe(address)
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except RayUnavailable:
        raise
    except Exception as error:  # Ray raises many kinds here; each is the same to a user
        what = (
            "cannot start a local Ray instance"
            if address is None
            else f"cannot connect to the Ray cluster at {address}"
        )
        raise RayUnavailable(f"{what}: {one_line(str(error))}") from None
    _check_fits(placement, local=address is None)


def _probe(address: str) -> None:
    """Fail fast when nothing listens where `address` points (Ray itself waits minutes, and
    `auto` may name a cluster that has since gone)."""
    dialled = _dialled(address)
    host, _, port = dialled.rpartition(":")
    if not host or not port.isdigit():
        return  # a form only Ray knows: let it judge
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_TIMEOUT_S).close()
    except OSError as error:
        seen = address if dialled == address else f"{address} ({dialled})"
        raise RayUnavailable(
            f"cannot reach the Ray cluster at {seen}: {error.strerror or error}; check the "
            "address (`ray status` on the head node prints it), or give --ray alone to start "
            "a local instance"
        ) from None


def _dialled(address: str) -> str:
    """The `host:port` Ray would connect to for `address`."""
    if address.startswith("ray://"):
        return address.removeprefix("ray://").split("/", 1)[0]
    if address == "auto":  # RAY_ADDRESS, else the last cluster started on this machine
        from ray._private.services import get_ray_address_from_environment

        found: str = get_ray_address_from_environment(address, None)
        return found
    return address


def _check_fits(placement: RayPlacement, *, local: bool) -> None:
    """On a local instance (no autoscaler to add a node) a task asking more than the machine
    has would wait forever: say so now."""
    if not local:
        return
    resources = ray.cluster_resources()  # type: ignore[no-untyped-call]  # Ray leaves it bare
    cpus = float(resources.get("CPU", 0.0))
    memory_mib = float(resources.get("memory", 0.0)) / _MIB
    problem = None
    if placement.cpus_per_task > cpus:
        problem = f"--ray-cpus-per-task {placement.cpus_per_task:g} is more than its {cpus:g} CPUs"
    elif (placement.memory_per_task_mib or 0) > memory_mib:
        problem = (
            f"--ray-memory-per-task {placement.memory_per_task_mib} is more than the "
            f"{memory_mib:.0f} MiB Ray may use on it"
        )
    if problem is not None:
        ray.shutdown()
        raise RayUnavailable(f"no task could ever run on this machine: {problem}; ask for less")


class _Driver:
    """Keeps about `concurrency` tasks in flight and writes each result as it comes."""

    def __init__(self, config: BatchConfig, listener: BatchListener, log: ResultsLog) -> None:
        self.config = config
        self.listener = listener
        self.log = log
        placement = config.ray or RayPlacement()
        memory = placement.memory_per_task_mib
        self.remote = ray.remote(run_on_worker).options(
            num_cpus=placement.cpus_per_task,
            memory=None if memory is None else memory * _MIB,
            max_retries=0,
            runtime_env={"env_vars": endpoint_environment(os.environ)},
        )
        actor = ray.remote(num_cpus=0)(LimiterHost).remote(dict(config.rate_limits))
        self.limiter = cast(LimiterHandle, actor)  # Ray types a handle by its class
        self.plan = WorkerPlan(token=uuid.uuid4().hex)
        _write_marker(config.out_dir, self.plan.token)

    async def run(self, tasks: Sequence[BatchTask]) -> None:
        queue = iter(tasks)
        flying: dict[asyncio.Future[WorkerOutcome], _Flight] = {}
        try:
            self._fill(flying, queue)
            while flying:
                done, _ = await asyncio.wait(
                    flying, timeout=WATCH_EVERY_S, return_when=asyncio.FIRST_COMPLETED
                )
                for future in done:
                    await self._land(flying, flying.pop(future), future)
                await self._watch(flying)
                self._fill(flying, queue)
        finally:  # stopped: the tasks in flight are cancelled, their outcome unheard
            for future, flight in flying.items():
                future.cancel()
                with suppress(Exception):  # a cluster already gone has nothing to cancel
                    ray.cancel(flight.ref)

    def _fill(
        self, flying: dict[asyncio.Future[WorkerOutcome], _Flight], queue: Iterator[BatchTask]
    ) -> None:
        while len(flying) < max(1, self.config.concurrency):
            task = next(queue, None)
            if task is None:
                return
            self.listener.started(task.id)
            self._submit(flying, task, 1, time.monotonic())

    def _submit(
        self,
        flying: dict[asyncio.Future[WorkerOutcome], _Flight],
        task: BatchTask,
        attempt: int,
        started: float,
    ) -> None:
        try:
            ref = self.remote.remote(task, self.config, self.plan, self.limiter, attempt)
        except Exception as error:  # the cluster is gone: nothing more can run
            raise RayUnavailable(
                f"Ray takes no more tasks ({one_line(str(error))}); the results written are "
                "kept: run the same command to go on"
            ) from None
        flight = _Flight(task, attempt, started, ref, time.monotonic())
        flying[asyncio.wrap_future(ref.future())] = flight

    async def _watch(self, flying: dict[asyncio.Future[WorkerOutcome], _Flight]) -> None:
        """Cancel, by force, each attempt that has run on its worker past `overdue_after_s`,
        and write its task's line (a `timeout` of stage `worker`) without waiting for it."""
        now = time.monotonic()
        late = {
            attempt_key(flight.task.id, flight.attempt): future
            for future, flight in flying.items()
            if not future.done() and now - flight.sent > overdue_after_s(flight.task, self.config)
        }
        if not late:
            return
        running: dict[str, float] = {}
        with suppress(Exception):  # the actor unreachable: look again next time
            running = await asyncio.wait_for(self.limiter.running_for.remote(list(late)), 10.0)
        for key, future in late.items():
            flight = flying[future]
            overdue = running.get(key, 0.0) > overdue_after_s(flight.task, self.config)
            if overdue and not future.done():  # a result that came meanwhile is landed next
                del flying[future]
                await self._overdue(future, flight)

    async def _overdue(self, future: asyncio.Future[WorkerOutcome], flight: _Flight) -> None:
        future.cancel()
        with suppress(Exception):  # a cluster already gone has nothing to cancel
            ray.cancel(flight.ref, force=True)
        timeout_s = flight.task.timeout_s or self.config.timeout_s
        message = (
            f"the worker did not stop at the task's timeout ({timeout_s:g} s); "
            "its Ray task was cancelled and its worker killed"
        )
        result = replace(_failed(flight, "worker", message, self.config), terminal_reason="timeout")
        await self.log.append(result)
        self.listener.finished(result)

    async def _land(
        self,
        flying: dict[asyncio.Future[WorkerOutcome], _Flight],
        flight: _Flight,
        future: asyncio.Future[WorkerOutcome],
    ) -> None:
        """A flight ended: write its result, or send a lost task once more."""
        config = self.config
        try:
            outcome = future.result()
        except LOST as error:
            if flight.attempt < ATTEMPTS:
                self._submit(flying, flight.task, flight.attempt + 1, flight.started)
                return
            result = _failed(flight, "worker", f"its Ray worker was lost twice: {error}", config)
        except RayTaskError as error:  # the task's own code raised: not retried
            result = _failed(flight, *_raised(error), config)
        except Exception as error:  # Ray could not run it (its runtime environment, say)
            result = _failed(flight, "worker", f"Ray could not run the task: {error}", config)
        else:
            result = outcome.landed(self.config.transcripts, attempts=flight.attempt)
        await self.log.append(result)  # durable before anyone hears of it
        self.listener.finished(result)


def overdue_after_s(task: BatchTask, config: BatchConfig) -> float:
    """How long an attempt of `task` may run on its worker before the driver kills it: the
    task's time and the interrupted session's grace, the check's own time if it has one,
    and `WATCHDOG_GRACE_S`."""
    timeout_s = task.timeout_s or config.timeout_s
    check_s = timeout_s if task.check is not None else 0.0
    return timeout_s + STOP_GRACE_S + check_s + WATCHDOG_GRACE_S


def _failed(flight: _Flight, stage: Stage, message: str, config: BatchConfig) -> TaskResult:
    """The line of a task that no worker brought back a result for."""
    result = failure(
        flight.task, stage, message, flight.started, model=flight.task.model or config.model
    )
    return replace(result, attempts=flight.attempt)


def _raised(error: RayTaskError) -> tuple[Stage, str]:
    """What an exception from a task's worker code means: stayer missing there, or a bug."""
    cause = getattr(error, "cause", None) or error
    text = f"{type(cause).__name__}: {cause}"
    if "failed to import on the worker" in text:
        return "worker", (
            "stayer cannot be imported on the Ray worker: install it there (the driver's "
            f"version, with `pip install 'stayer[ray]'`); Ray said: {text}"
        )
    return "internal", f"the task raised on its Ray worker: {text}"


def _write_marker(out_dir: Path, token: str) -> None:
    (out_dir / MARKER).write_text(token, encoding="utf-8")
