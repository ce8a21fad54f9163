"""What a Ray worker does with one task of a batch: the same run as on one machine, then home.

The driver sends each task to a worker with the batch's config and a `WorkerPlan`. The worker
runs its own event loop (`asyncio.run`) and its own model clients (a `ProviderPool` for this
one task, wrapped by the batch's limiter actor, so the rate limit stays fleet-wide), and runs
the task exactly as the local runner does (`run_task`).

Where the workspace lives: each worker makes the task's workspace itself, cloning `repo`, so
the repository must be reachable from every worker (a path all nodes see, or a git URL). When
the worker sees the driver's output folder (the same machine, or a shared filesystem: it finds
the driver's marker file there holding this batch's token) the workspace goes where the local
runner puts it, `DIR/workspaces/<id>`, and the transcript straight to `DIR/transcripts`.
Otherwise both go under the worker's temporary folder (`<tmp>/stayer-batch/<token>/`), and the
transcript's bytes travel back with the result for the driver to write under `DIR`.

Nothing here imports Ray: a worker imports this module to run the function the driver sent.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from .config import BatchConfig
from .limited import limited_by
from .pool import ProviderPool
from .ray_limiter import ActorLimiter, LimiterHandle, attempt_key
from .results import TaskResult
from .task_run import run_task
from .tasks import BatchTask

MARKER = ".stayer-ray-batch"
"""The file in the output folder whose content (the batch's token) tells a worker it sees it."""


class WorkerPlan(Struct, frozen=True):
    """What the driver tells every worker of one batch, besides the task and the config."""

    token: str
    """This batch's name on the workers: the marker's content, the temporary folder's name."""


class WorkerOutcome(Struct, frozen=True):
    """What a worker sends back: the task's result and, unless written in place, its
    transcript's bytes and its path under the worker's transcripts folder."""

    result: TaskResult
    transcript: bytes | None = None
    transcript_name: str | None = None

    def landed(self, transcripts: Path, *, attempts: int) -> TaskResult:
        """The result as the driver writes it: the transcript's bytes, if they came, written
        under `transcripts` where the worker had it (and named so), and the attempts taken."""
        result = self.result
        if self.transcript is not None and self.transcript_name is not None:
            path = transcripts / self.transcript_name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self.transcript)
            result = replace(result, transcript=str(path))
        return replace(result, attempts=attempts)


def run_on_worker(
    task: BatchTask, config: BatchConfig, plan: WorkerPlan, limiter: LimiterHandle, attempt: int
) -> WorkerOutcome:
    """The body of one Ray task, the `attempt`th of `task`: run it on this worker to its end
    (never raises for the task's own failures: they are in the result)."""
    return asyncio.run(_run(task, config, plan, ActorLimiter(limiter), attempt))


async def _run(
    task: BatchTask, config: BatchConfig, plan: WorkerPlan, limiter: ActorLimiter, attempt: int
) -> WorkerOutcome:
    await limiter.began(attempt_key(task.id, attempt))  # the driver's watchdog counts from here
    shared = sees_driver_folder(config.out_dir, plan.token)
    if shared:
        workspaces, transcripts = config.workspaces, config.transcripts
    else:
        home = Path(tempfile.gettempdir()) / "stayer-batch" / plan.token
        workspaces, transcripts = home / "workspaces", home / "transcripts"
    counted = any(limit.tokens_per_minute for limit in config.rate_limits.values())
    providers = ProviderPool(concurrency=1, wrap=limited_by(limiter, count_tokens=counted))
    try:
        result = await run_task(
            task, config, providers=providers, workspaces=workspaces, transcripts=transcripts
        )
    finally:
        await providers.aclose()
    if shared or result.transcript is None:
        return WorkerOutcome(result)
    path = Path(result.transcript)
    name = path.relative_to(transcripts) if path.is_relative_to(transcripts) else path.name
    return WorkerOutcome(result, _read(path), str(name))


def sees_driver_folder(out_dir: Path, token: str) -> bool:
    """Whether this process sees the driver's output folder (the marker holds `token`)."""
    try:
        return (out_dir / MARKER).read_text(encoding="utf-8") == token
    except (OSError, UnicodeDecodeError):
        return False


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
