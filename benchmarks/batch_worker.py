"""One batch, run in this process and measured from inside: the batch benchmark's subject.

    python -m benchmarks.batch_worker --url URL --repo PATH --out DIR --tasks 200 \
        --concurrency 32 [--profile FILE]

`benchmarks.batch --engine sessions` starts one of these per measurement, so every figure is
this process's alone: a fresh interpreter, its own peak RSS. Each task is played with the
pieces `stayer batch` runs a task with, without its runner (so a profile shows the session's
own costs): a workspace cloned from `--repo` (`git clone --no-checkout`, then a checkout), a
`Session` opened on it (`Session.open`, off the loop) with one model client shared by every
task, one prompt run to its end through 5 tool turns in `acceptEdits` (Reads and small Writes,
answered by `benchmarks.batch_server`), the workspace's diff taken (`git add -N`, `git diff`),
the session closed. At most `--concurrency` tasks are in flight.

It prints one line of JSON: wall seconds from the first task's start to the last one's end,
this process's CPU (user + system, `RUSAGE_SELF`) and its reaped children's (git, the tools'
commands: `RUSAGE_CHILDREN`) over that span, the peak RSS (VmHWM) and the RSS before the first
task, how many tasks ran right, and the first few problems. With `--profile FILE` the tasks run
one at a time, each session opened on the calling thread so cProfile sees its start-up, and the
profile is written to FILE (pstats format).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import resource
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.batch_server import task_prompt
from stayer.events import Finished, Terminal, ToolCallFinished
from stayer.providers.anthropic import AnthropicProvider
from stayer.providers.base import Provider
from stayer.session.options import QueryOptions
from stayer.session.session import Session

MODEL = "claude-sonnet-4-5"
TURNS = 5


def vm_kib(field: str) -> int:
    """A `Vm*` line of this process's /proc status, in KiB (0 where there is none)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


async def git(*args: str) -> None:
    """Run git quietly; raise with its message when it fails."""
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {err.decode().strip()}")


async def make_workspace(repo: Path, workspace: Path) -> None:
    """A clone of `repo` at its HEAD, the source left untouched."""
    await git("clone", "--quiet", "--no-checkout", str(repo), str(workspace))
    await git("-C", str(workspace), "checkout", "--quiet", "HEAD")


async def take_diff(workspace: Path) -> None:
    """The workspace's changes against its HEAD, new files included."""
    await git("-C", str(workspace), "add", "--all", "--intent-to-add")
    await git("-C", str(workspace), "diff", "--binary", "HEAD")


def options(provider: Provider, workspace: Path, out: Path) -> QueryOptions:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(out / "home"),
        "LANG": "C.UTF-8",
        "STAYER_CONFIG_DIR": str(out / "config"),
    }
    return QueryOptions(
        provider=provider,
        model=MODEL,
        cwd=workspace,
        permission_mode="acceptEdits",
        env=env,
        max_turns=TURNS + 2,
    )


def check(events: list[Any]) -> str | None:
    """What went wrong with a task's run, or None."""
    last = events[-1] if events else None
    if not isinstance(last, Finished) or last.terminal is not Terminal.COMPLETED:
        return f"ended with {last!r:.300}"
    tools = [e for e in events if isinstance(e, ToolCallFinished)]
    failed = [e.result.text[:200] for e in tools if e.status != "completed"]
    if len(tools) != TURNS or failed:
        return f"{len(tools)} tool calls, failures: {failed[:1]}"
    return None


Opener = Callable[[QueryOptions], Awaitable[Session]]


async def one_task(
    number: int, repo: Path, out: Path, provider: Provider, opener: Opener
) -> str | None:
    """Run task `number` to its end; what went wrong, or None."""
    workspace = out / "workspaces" / f"t{number:04d}"
    await make_workspace(repo, workspace)
    session = await opener(options(provider, workspace, out))
    async with session:
        events = [e async for e in session.submit(task_prompt(f"t{number}", str(workspace)))]
    await take_diff(workspace)
    return check(events)


class _GcClock:
    """The time the garbage collector took (a `gc.callbacks` entry), and its full passes."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._began
        self.full += info.get("generation") == 2


async def _open_here(given: QueryOptions) -> Session:
    return Session(given)


async def run_batch(args: argparse.Namespace) -> dict[str, Any]:
    """Every task, `args.concurrency` at a time; the figures."""
    out: Path = args.out
    (out / "workspaces").mkdir(parents=True, exist_ok=True)
    provider = AnthropicProvider(api_key="test-key", base_url=args.url)
    opener: Opener = _open_here if args.profile else Session.open
    limit = asyncio.Semaphore(1 if args.profile else args.concurrency)
    problems: list[str] = []

    async def guarded(number: int) -> None:
        async with limit:
            try:
                problem = await one_task(number, args.repo, out, provider, opener)
            except Exception as error:  # a benchmark reports, it does not stop at the first
                problem = f"{type(error).__name__}: {error}"
            if problem:
                problems.append(f"t{number}: {problem}")

    collecting = _GcClock()
    gc.callbacks.append(collecting)
    rss_before = vm_kib("VmRSS")
    self_before, children_before = cpu_s(resource.RUSAGE_SELF), cpu_s(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    await asyncio.gather(*(guarded(n) for n in range(args.tasks)))
    wall = time.perf_counter() - started
    self_cpu = cpu_s(resource.RUSAGE_SELF) - self_before
    children_cpu = cpu_s(resource.RUSAGE_CHILDREN) - children_before
    await provider.aclose()
    return {
        "tasks": args.tasks,
        "concurrency": args.concurrency,
        "wall_s": wall,
        "self_cpu_s": self_cpu,
        "children_cpu_s": children_cpu,
        "rss_before_kib": rss_before,
        "peak_rss_kib": vm_kib("VmHWM"),
        "gc_s": collecting.seconds,
        "gc_full": collecting.full,
        "ok": args.tasks - len(problems),
        "problems": problems[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    if args.profile:
        profiler = cProfile.Profile(time.process_time)  # CPU, not waiting on the server
        figures = profiler.runcall(asyncio.run, run_batch(args))
        profiler.dump_stats(args.profile)
    else:
        figures = asyncio.run(run_batch(args))
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
