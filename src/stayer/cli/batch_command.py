"""`stayer batch TASKS.jsonl --out DIR`: many agent tasks at once (`stayer.batch`).

The flags become one `BatchConfig`; the tasks file is read and validated whole before anything
runs (a bad line: one line naming file and line, exit status 2, nothing made, nothing sent).
The batch then runs on this machine's event loop, or with `--ray` as Ray tasks
(`stayer.batch.ray`, imported only then: without Ray installed `--ray` is one line, exit
status 2; a Ray that cannot start or be reached is one line, exit status 1); Ctrl-C or SIGTERM
stops the sessions in flight the orderly way, keeps every result written, and says how to go
on. Exit status 0 when every task has a result line, 1 when some have none, 130/143 when
stopped by a signal.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol

from stayer.errors import ConfigError
from stayer.permissions.policy import PERMISSION_MODES

from .flags import at_least_one

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from stayer.batch.config import BatchConfig, RayPlacement
    from stayer.batch.listener import BatchListener
    from stayer.batch.results import ResultFacts, ResultsLog
    from stayer.batch.tasks import BatchTask

    class Runner(Protocol):
        """How a batch runs: on this machine (`stayer.batch.local`) or on Ray."""

        async def __call__(
            self,
            tasks: Sequence[BatchTask],
            config: BatchConfig,
            listener: BatchListener,
            *,
            log: ResultsLog | None = None,
        ) -> list[ResultFacts]: ...


USAGE = (
    "stayer batch TASKS.jsonl --out DIR [--concurrency N] [--ray [ADDRESS]] [--model MODEL] "
    "[--permission-mode MODE] [--output-format text|json] [--retry-errors] [--timeout SECONDS] "
    "[--requests-per-minute N] [--tokens-per-minute N] [--ray-cpus-per-task N] "
    "[--ray-memory-per-task MIB] [--setting-sources SOURCES] [--sandbox] [--keep-workspaces]"
)
DESCRIPTION = (
    "Run every task of TASKS.jsonl (one JSON object per line: id, prompt, repo, and optionally "
    "ref, model, max_turns, timeout_s, setup, check, permission_mode, allowed_tools, env) as a "
    "full stayer session in a workspace of its own under DIR/workspaces/<id>, many at once. "
    "Each finished task is one line of DIR/results.jsonl, written as it finishes; running the "
    "same command again skips the tasks that have one. Nobody can answer a permission "
    "question in a batch: what the task's permission mode and allowed tools would ask about "
    "is denied."
)
EXIT_STOPPED = {"SIGINT": 130, "SIGTERM": 143}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"batch: {message}; usage: {USAGE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stayer batch", usage=USAGE, description=DESCRIPTION, allow_abbrev=False)
    _task_flags(parser)
    _limit_flags(parser)
    _ray_flags(parser)
    _reach_flags(parser)
    return parser


def _task_flags(parser: argparse.ArgumentParser) -> None:
    """What runs, where its output goes, and the defaults of tasks that name none."""
    add = parser.add_argument
    add("tasks", metavar="TASKS.jsonl", help="the tasks file")
    add("--out", metavar="DIR", required=True, help="where results, workspaces and transcripts go")
    add("--concurrency", metavar="N", type=_count, default=None, help="tasks at once (default 8)")
    add("--model", help="the model of tasks that name none (an alias or id)")
    add(
        "--permission-mode",
        metavar="MODE",
        choices=PERMISSION_MODES,
        help=f"of tasks that name none: {', '.join(PERMISSION_MODES)} (default: default)",
    )
    add(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="json prints one summary object on standard output at the end",
    )
    add(
        "--retry-errors",
        action="store_true",
        help="run again the tasks whose result is an infrastructure error",
    )
    add(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        default=None,
        help="the time of tasks that give no timeout_s (default 1800)",
    )


def _limit_flags(parser: argparse.ArgumentParser) -> None:
    """The batch's one rate limit."""
    parser.add_argument(
        "--requests-per-minute",
        metavar="N",
        type=_rate,
        default=None,
        help="model requests per minute per provider, for the whole batch (over the "
        "settings' batch.rateLimits)",
    )
    parser.add_argument(
        "--tokens-per-minute",
        metavar="N",
        type=_rate,
        default=None,
        help="tokens (sent and received) per minute per provider, for the whole batch",
    )


def _ray_flags(parser: argparse.ArgumentParser) -> None:
    """Where on Ray, and what each task asks of it."""
    add = parser.add_argument
    add(
        "--ray",
        metavar="ADDRESS",
        nargs="?",
        const="",
        default=None,
        help="run the tasks on Ray: a cluster's address, or none to start a local Ray",
    )
    add(
        "--ray-cpus-per-task",
        metavar="N",
        type=_rate,
        default=None,
        help="with --ray: CPUs each task asks for (default 1)",
    )
    add(
        "--ray-memory-per-task",
        metavar="MIB",
        type=_count,
        default=None,
        help="with --ray: memory each task asks for, in MiB",
    )


def _reach_flags(parser: argparse.ArgumentParser) -> None:
    """What a task's repository and agent may reach on this machine."""
    add = parser.add_argument
    add(
        "--sandbox",
        action="store_true",
        help="run the agents' Bash commands under bubblewrap: only the task's workspace "
        "writable (the source repository too is read-only), no network",
    )
    add(
        "--keep-workspaces",
        action="store_true",
        help="keep DIR/workspaces/<id> once a task's diff and check are taken (default: removed)",
    )
    add(
        "--setting-sources",
        metavar="SOURCES",
        default=None,
        help="the settings the sessions read: user, project and/or local, comma-separated "
        "(default: user; a task's repository's own settings are read only when named here)",
    )


def _count(text: str) -> int:
    return at_least_one(text, "a whole number of at least 1")


def _positive(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def _seconds(text: str) -> float:
    return _positive(text, "a number of seconds above 0")


def _rate(text: str) -> float:
    return _positive(text, "a number above 0")


def batch_config(args: argparse.Namespace) -> BatchConfig:
    """The batch the flags describe; raises `ConfigError` for flags that do not go together."""
    from stayer.batch.config import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S, BatchConfig
    from stayer.batch.rate_limits import batch_rate_limits

    ray = _placement(args)
    limits = batch_rate_limits(
        Path.cwd(),
        os.environ,
        requests_per_minute=args.requests_per_minute,
        tokens_per_minute=args.tokens_per_minute,
    )
    return BatchConfig(
        out_dir=_out_dir(args.out),
        concurrency=args.concurrency or DEFAULT_CONCURRENCY,
        model=args.model,
        permission_mode=args.permission_mode,
        timeout_s=args.timeout or DEFAULT_TIMEOUT_S,
        retry_errors=args.retry_errors,
        rate_limits=limits,
        ray=ray,
        output_format=args.output_format,
        setting_sources=_setting_sources(args.setting_sources),
        sandbox=args.sandbox,
        keep_workspaces=args.keep_workspaces,
    )


def _setting_sources(given: str | None) -> tuple[str, ...]:
    """`--setting-sources` as the main command reads it; the user's settings alone when not
    given."""
    from stayer.batch.config import DEFAULT_SETTING_SOURCES
    from stayer.config.sources import parse_levels

    if given is None:
        return DEFAULT_SETTING_SOURCES
    try:
        return parse_levels(given)
    except ConfigError as error:
        raise ConfigError(f"batch: {error}") from None


def _out_dir(text: str) -> Path:
    try:
        return Path(text).expanduser().absolute()
    except RuntimeError as error:  # `~someone` with no such user
        raise ConfigError(f"batch: --out {text}: {error}; give the folder's path") from None


def _placement(args: argparse.Namespace) -> RayPlacement | None:
    from stayer.batch.config import RayPlacement

    if args.ray is None:
        for flag, value in (
            ("--ray-cpus-per-task", args.ray_cpus_per_task),
            ("--ray-memory-per-task", args.ray_memory_per_task),
        ):
            if value is not None:
                raise ConfigError(f"batch: {flag} needs --ray; add --ray or leave it out")
        return None
    return RayPlacement(
        address=args.ray or None,
        cpus_per_task=args.ray_cpus_per_task or 1.0,
        memory_per_task_mib=args.ray_memory_per_task,
    )


def run_batch_command(argv: Sequence[str]) -> int:
    """`stayer batch`: parse, validate the tasks file whole, run; the exit status. Raises
    `ConfigError` in one line for what the user gave wrong (nothing has run then)."""
    from stayer.batch.tasks import load_tasks

    args = _parser().parse_args(list(argv))
    config = batch_config(args)
    tasks = load_tasks(Path(args.tasks))
    if config.ray is not None:
        _need_ray()
    import asyncio

    return asyncio.run(_run_here(tasks, config))


async def _run_here(tasks: Sequence[BatchTask], config: BatchConfig) -> int:
    """The batch on this machine, shown as it goes, stopped the orderly way by SIGINT or
    SIGTERM, its summary at the end; raises `ConfigError` when another batch holds the output
    folder."""
    from stayer.batch.lock import holding

    with holding(config.out_dir):  # before the results file is read, or rewritten
        if config.ray is None:
            from stayer.batch.local import run_batch

            return await _run_holding(tasks, config, run_batch)
        try:
            from stayer.batch.ray import on_ray, run_batch_on_ray
        except ImportError as error:  # installed, but broken: say so as plainly
            raise ConfigError(
                f"batch: --ray needs Ray, which cannot be imported ({error}): "
                "pip install 'stayer[ray]'"
            ) from None
        with on_ray(config.ray) as slots:  # before the signal handlers: ray.init sets its own
            at_once = min(config.concurrency, slots)  # what the display says runs at once
            return await _run_holding(tasks, config, run_batch_on_ray, at_once=at_once)


def _need_ray() -> None:
    """Raise `ConfigError` in one line when Ray, an optional extra, is not installed."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise ConfigError(
            "batch: --ray needs Ray, which is not installed: pip install 'stayer[ray]'"
        )


async def _run_holding(
    tasks: Sequence[BatchTask], config: BatchConfig, runner: Runner, *, at_once: int | None = None
) -> int:
    """The batch run by `runner`, shown with `at_once` tasks running together (None: the
    concurrency), its summary printed; the exit status."""
    from stayer.batch.results import ResultsLog
    from stayer.ui.batch_summary import print_summary
    from stayer.ui.batch_view import stderr_view

    log = ResultsLog(config.out_dir, retry_errors=config.retry_errors)
    for line in log.dropped:
        print(f"stayer: {line}", file=sys.stderr)
    with stderr_view(at_once or config.concurrency) as view:
        stopped_by, results = await _stoppable(runner(tasks, config, view, log=log), tasks, log)
    facts = view.facts(results, planned=len(tasks), results_file=log.path)
    print_summary(facts, config.output_format)
    if stopped_by:
        print(
            f"stayer batch: stopped ({stopped_by}); the results written are kept: run the "
            "same command to go on",
            file=sys.stderr,
        )
        return EXIT_STOPPED[stopped_by]
    return 0 if len(results) == len(tasks) else 1


async def _stoppable(
    running: Coroutine[None, None, list[ResultFacts]],
    tasks: Sequence[BatchTask],
    log: ResultsLog,
) -> tuple[str | None, list[ResultFacts]]:
    """Run the batch until it ends or SIGINT or SIGTERM stops it (then, the results written
    so far); which signal stopped it, if one did. Closes `log`."""
    import asyncio
    import signal

    batch = asyncio.ensure_future(running)
    stopped_by: list[str] = []
    loop = asyncio.get_running_loop()

    def stop(name: str) -> None:
        stopped_by.append(name)
        batch.cancel()

    for name in EXIT_STOPPED:
        loop.add_signal_handler(getattr(signal, name), stop, name)
    try:
        results = await batch
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        log.close()  # the lines handed over before the stop are written first
        results = [log.done[task.id] for task in tasks if task.id in log.done]
    finally:
        for name in EXIT_STOPPED:
            loop.remove_signal_handler(getattr(signal, name))
        log.close()
    return (stopped_by[0] if stopped_by else None), results
