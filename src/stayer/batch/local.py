"""A batch on this machine: its tasks as sessions on one event loop, `concurrency` at a time.

`run_batch` opens the output folder's results file (skipping the tasks that already have a
line, after taking out the infrastructure failures when asked to retry them), then runs the
rest in file order, each task pulled by the next free worker, every session on the batch's
shared model clients. A task's line is written, durably, the moment it finishes, before the
listener hears of it; a task never touches another (`run_task` turns whatever it meets into
its result). Cancelling `run_batch` (the front end's Ctrl-C or SIGTERM) stops the sessions in
flight the orderly way, each ending with its `Finished`, and writes nothing for them: the lines
written stay, and the same command later runs what is missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

from .config import BatchConfig
from .limited import limited_by
from .limits import LocalLimiter
from .listener import BatchListener
from .pool import ProviderPool, Wrap
from .results import ResultFacts, ResultsLog
from .task_run import run_task
from .tasks import BatchTask


async def run_batch(
    tasks: Sequence[BatchTask],
    config: BatchConfig,
    listener: BatchListener,
    *,
    wrap: Wrap | None = None,
    log: ResultsLog | None = None,
) -> list[ResultFacts]:
    """Run the tasks of `tasks` that have no result yet; returns the facts of every task that
    has a result now, in file order (never whole results: diffs stay in the file). `wrap` goes
    around each shared model client (the fleet rate limiter; by default a `LocalLimiter` of
    `config.rate_limits`); `log` is the results file if the caller opened it already (to
    report its dropped lines), else it is opened here. Closes both on return."""
    owned = log is None
    log = log or ResultsLog(config.out_dir, retry_errors=config.retry_errors)
    if wrap is None:  # the fleet's one limiter: a retry-after holds every task, limits or not
        counted = any(limit.tokens_per_minute for limit in config.rate_limits.values())
        wrap = limited_by(LocalLimiter(config.rate_limits), count_tokens=counted)
    providers = ProviderPool(concurrency=config.concurrency, wrap=wrap)
    try:
        todo = [task for task in tasks if task.id not in log.done]
        listener.planned(len(tasks), len(tasks) - len(todo))
        pending = iter(todo)
        workers = min(config.concurrency, len(todo))
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(_worker(pending, config, providers, log, listener))
        except ExceptionGroup as failed:  # the results file could not be written: say why
            raise failed.exceptions[0] from None
        return [log.done[task.id] for task in tasks if task.id in log.done]
    finally:
        await providers.aclose()
        if owned:
            log.close()


async def _worker(
    pending: Iterator[BatchTask],
    config: BatchConfig,
    providers: ProviderPool,
    log: ResultsLog,
    listener: BatchListener,
) -> None:
    """Take the next task until none is left (one event loop: `next` is never shared)."""
    for task in pending:
        listener.started(task.id)
        result = await run_task(
            task,
            config,
            providers=providers,
            workspaces=config.workspaces,
            transcripts=config.transcripts,
        )
        await log.append(result)  # durable before anyone hears of it
        listener.finished(result)
