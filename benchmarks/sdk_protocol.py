"""What driving stayer through claude-agent-sdk costs: start-up to the first answer, and each
further message over the stdin protocol against a fresh `stayer -p` per message.

    .venv/bin/python -m benchmarks.sdk_protocol [--runs 10] [--messages 20] [--claude-code]

Both against the instant fake model server (`benchmarks.timed_server.TimedServer`) on
loopback, with a clean environment and a throwaway config folder, so what is measured is
stayer and the SDK, not a model:

* spawn to first answer: from calling the SDK's `query("hi")` (which spawns stayer, answers
  `initialize`, sends the message) to the SDK yielding its first `AssistantMessage`; median and
  p95 of `--runs` runs;
* per message: one `ClaudeSDKClient` session sends `--messages` messages one after another
  (each `query` → its `ResultMessage`), against the same number of `stayer -p` processes run
  one after another (spawn → exit), each message answered with one short text. The figure per
  message is the median over the messages (the session's first message, which pays for the
  start-up, is left out).

With `--claude-code` the same three figures are measured for the Claude Code CLI the SDK
bundles, on the same fake server and machine (run with a throwaway HOME and config folder, and
`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, so it calls nothing but the fake server; told to
use `MODEL`), and
printed beside stayer's.

Not a test: run it by hand on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import claude_agent_sdk
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    query,
)
from tests.e2e.cli import clean_env
from tests.e2e.sdk_client import sdk_options
from tests.fakes.sse import reply

from benchmarks.stats import Summary, summarize
from benchmarks.timed_server import TimedServer

MS = 1e3
MODEL = "claude-sonnet-4-5"
"""The model Claude Code is told to use: for its newest default it sends mid-conversation
`system` messages the fake server's history check (the public API's rules) refuses."""


@dataclass(frozen=True)
class Cli:
    """A CLI the SDK drives: its name, the SDK options for it, and its `-p` command line."""

    name: str
    options: Callable[[TimedServer, Path], ClaudeAgentOptions]
    print_argv: list[str]
    env: Callable[[TimedServer], dict[str, str]]


def _stayer() -> Cli:
    return Cli(
        "stayer",
        lambda server, cwd: sdk_options(server, cwd),
        [sys.executable, "-m", "stayer"],
        lambda server: clean_env(server.env()),
    )


def _claude_code() -> Cli:
    """The Claude Code CLI bundled with the SDK, kept to the fake server: a home and config
    folder of its own, no updater, telemetry or other traffic."""
    binary = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    home = Path(tempfile.mkdtemp(prefix="stayer-bench-cc-home-"))

    def env(server: TimedServer) -> dict[str, str]:
        return {
            **clean_env(server.env()),
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def options(server: TimedServer, cwd: Path) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(cli_path=binary, cwd=cwd, env=env(server), model=MODEL)

    return Cli("Claude Code", options, [str(binary), "--model", MODEL], env)


async def first_answer_s(cli: Cli, server: TimedServer, cwd: Path) -> float:
    """Seconds from `query()` to its first `AssistantMessage`."""
    server.enqueue(reply("hello"))
    started = time.perf_counter()
    first = float("nan")
    async for message in query(prompt="hi", options=cli.options(server, cwd)):
        if isinstance(message, AssistantMessage) and first != first:
            first = time.perf_counter() - started
    return first


async def session_messages_s(
    cli: Cli, server: TimedServer, cwd: Path, messages: int
) -> list[float]:
    """Seconds each message of one `ClaudeSDKClient` session took (query → result)."""
    for _ in range(messages):
        server.enqueue(reply("noted"))
    took: list[float] = []
    async with ClaudeSDKClient(cli.options(server, cwd)) as client:
        for number in range(messages):
            started = time.perf_counter()
            await client.query(f"message {number}")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    took.append(time.perf_counter() - started)
    return took


def print_mode_s(cli: Cli, server: TimedServer, cwd: Path, messages: int) -> list[float]:
    """Seconds each `-p` process took, spawn to exit, one message each."""
    took: list[float] = []
    env = cli.env(server)
    for number in range(messages):
        server.enqueue(reply("noted"))
        started = time.perf_counter()
        subprocess.run(
            [*cli.print_argv, "-p", f"message {number}"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        )
        took.append(time.perf_counter() - started)
    return took


def _line(label: str, summary: Summary) -> str:
    return (
        f"{label:<40} median {summary.median * MS:7.1f} ms   p95 {summary.p95 * MS:7.1f} ms"
        f"   (n={summary.n})"
    )


async def measure(cli: Cli, runs: int, messages: int) -> None:
    """Run the three measurements for `cli` and print them."""
    with TimedServer() as server, tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder) / "work"
        cwd.mkdir()
        firsts = [await first_answer_s(cli, server, cwd) for _ in range(runs)]
        in_session = (await session_messages_s(cli, server, cwd, messages + 1))[1:]
        per_process = await asyncio.to_thread(print_mode_s, cli, server, cwd, messages)
    print(_line(f"{cli.name}: SDK spawn → first answer", summarize(firsts)))
    print(_line(f"{cli.name}: SDK session, per message", summarize(in_session)))
    print(_line(f"{cli.name}: -p, per message (process)", summarize(per_process)))


async def main(runs: int, messages: int, claude_code: bool) -> None:
    """Measure stayer, then (if asked) Claude Code on the same machine."""
    os.environ.setdefault("STAYER_CONFIG_DIR", tempfile.mkdtemp(prefix="stayer-bench-config-"))
    os.environ.setdefault("CLAUDE_CONFIG_DIR", tempfile.mkdtemp(prefix="stayer-bench-claude-"))
    await measure(_stayer(), runs, messages)
    if claude_code:
        await measure(_claude_code(), runs, messages)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--claude-code", action="store_true", help="measure Claude Code too")
    given = parser.parse_args()
    asyncio.run(main(given.runs, given.messages, given.claude_code))
