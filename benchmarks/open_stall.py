"""How long the event loop stalls while 50 Sessions open at once (`Session.open`).

A server driving many sessions (ACP, a batch) opens them on one event loop. Their start-up
I/O (settings and memory files, the git snapshot, the model client) runs in worker threads, so
the loop should go on serving; what is left on it is assembling each session (pure work) and
the GIL the threads share. A ticker on the loop asks to wake every millisecond and records how
late it wakes; the figure is the longest lateness while the sessions open, against the same
ticker with nothing opening (the machine's own noise).

    .venv/bin/python -m benchmarks.open_stall [--sessions 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from stayer.session.session import Session

TICK_S = 0.001


async def _ticker(stop: asyncio.Event, lateness: list[float]) -> None:
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(TICK_S)
        lateness.append(time.perf_counter() - asked - TICK_S)


async def _longest_stall(project: Path, sessions: int) -> float:
    """The longest lateness of the ticker while `sessions` sessions open (0: none open)."""
    stop, lateness = asyncio.Event(), list[float]()
    ticking = asyncio.create_task(_ticker(stop, lateness))
    env = {"STAYER_CONFIG_DIR": str(project / "config"), "PATH": "/usr/bin:/bin"}
    options = [
        QueryOptions(
            cwd=project, env=env, provider=ScriptedProvider([text("hi")]), persist_session=False
        )
        for _ in range(sessions)
    ]
    if sessions:
        opened = await asyncio.gather(*(Session.open(each) for each in options))
    else:
        opened = []
        await asyncio.sleep(0.5)
    stop.set()
    await ticking
    for session in opened:
        await session.aclose()
    return max(lateness, default=0.0)


def _project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Keep answers short.\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Read(.env)"]}}')
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.open_stall")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="stayer-open-stall-") as tmp:
        project = _project(Path(tmp))
        idle, busy = [], []
        for _ in range(args.runs):
            idle.append(asyncio.run(_longest_stall(project, 0)))
            busy.append(asyncio.run(_longest_stall(project, args.sessions)))
    print(
        f"longest event-loop stall while {args.sessions} sessions open: median "
        f"{statistics.median(busy) * 1000:.1f} ms, worst {max(busy) * 1000:.1f} ms "
        f"(ticker alone: median {statistics.median(idle) * 1000:.1f} ms) over {args.runs} runs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
