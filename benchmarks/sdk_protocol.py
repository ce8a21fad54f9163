"""What driving stayer through claude-agent-sdk costs: start-up to the first answer, and each
further message over the stdin protocol against a fresh `stayer -p` per message.

    .venv/bin/python -m benchmarks.sdk_protocol [--runs 10] [--messages 20]

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
from pathlib import Path

from claude_agent_sdk import AssistantMessage, ClaudeSDKClient, ResultMessage, query
from tests.e2e.cli import clean_env
from tests.e2e.sdk_client import sdk_options
from tests.fakes.sse import reply

from benchmarks.stats import Summary, summarize
from benchmarks.timed_server import TimedServer

MS = 1e3


async def first_answer_s(server: TimedServer, cwd: Path) -> float:
    """Seconds from `query()` to its first `AssistantMessage`."""
    server.enqueue(reply("hello"))
    started = time.perf_counter()
    first = float("nan")
    async for message in query(prompt="hi", options=sdk_options(server, cwd)):
        if isinstance(message, AssistantMessage) and first != first:
            first = time.perf_counter() - started
    return first


async def session_messages_s(server: TimedServer, cwd: Path, messages: int) -> list[float]:
    """Seconds each message of one `ClaudeSDKClient` session took (query → result)."""
    for _ in range(messages):
        server.enqueue(reply("noted"))
    took: list[float] = []
    async with ClaudeSDKClient(sdk_options(server, cwd)) as client:
        for number in range(messages):
            started = time.perf_counter()
            await client.query(f"message {number}")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    took.append(time.perf_counter() - started)
    return took


def print_mode_s(server: TimedServer, cwd: Path, messages: int) -> list[float]:
    """Seconds each `stayer -p` process took, spawn to exit, one message each."""
    took: list[float] = []
    env = clean_env(server.env())
    for number in range(messages):
        server.enqueue(reply("noted"))
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "stayer", "-p", f"message {number}"],
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
        f"{label:<34} median {summary.median * MS:7.1f} ms   p95 {summary.p95 * MS:7.1f} ms"
        f"   (n={summary.n})"
    )


async def main(runs: int, messages: int) -> None:
    """Run the three measurements and print them."""
    os.environ.setdefault("STAYER_CONFIG_DIR", tempfile.mkdtemp(prefix="stayer-bench-config-"))
    os.environ.setdefault("CLAUDE_CONFIG_DIR", tempfile.mkdtemp(prefix="stayer-bench-claude-"))
    with TimedServer() as server, tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder) / "work"
        cwd.mkdir()
        firsts = [await first_answer_s(server, cwd) for _ in range(runs)]
        in_session = (await session_messages_s(server, cwd, messages + 1))[1:]
        per_process = await asyncio.to_thread(print_mode_s, server, cwd, messages)
    print(_line("SDK spawn → first AssistantMessage", summarize(firsts)))
    print(_line("SDK session, per further message", summarize(in_session)))
    print(_line("stayer -p, per message (process)", summarize(per_process)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--messages", type=int, default=20)
    given = parser.parse_args()
    asyncio.run(main(given.runs, given.messages))
