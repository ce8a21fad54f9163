"""MCP servers at start-up and in the context window.

    .venv/bin/python -m benchmarks.mcp_start [--runs 10]

* Start-up with servers: seconds from spawning `stayer -p` to its first request reaching the
  fake model server, with no MCP server and with five (four test servers that come up at once,
  one that never answers). The target is no slower with the five than with none: the servers
  connect in the background and the first model call never waits for them.
* Exit with a hung server: how long the same runs take from spawn to exit, since a server that
  ignores its closed stdin is the one thing that could hold the end of a run.
* Deferral: the tool definitions the first request carries (its `tools` JSON, in tokens at
  about four characters each) with the 200-tool test server, deferral off and on, on a model
  with a 200k window (where 30k tokens of definitions pass the 10% share).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.measure import DEFAULT_VENV, REPO, clean_env, spawn, stayer_subject
from benchmarks.stats import summarize
from benchmarks.timed_server import TimedServer, text_reply

KITCHEN = REPO / "tests" / "mcp_servers" / "kitchen.py"


def _config(workdir: Path, *, servers: int, hung: bool) -> str:
    entries: dict[str, object] = {
        f"ready{index}": {"command": sys.executable, "args": [str(KITCHEN)]}
        for index in range(servers)
    }
    if hung:
        never = workdir / "never-created"
        entries["hung"] = {
            "command": sys.executable,
            "args": [str(KITCHEN), "--wait-file", str(never)],
        }
    return json.dumps({"mcpServers": entries})


def start_once(workdir: Path, extra: Sequence[str]) -> tuple[float, float]:
    """(seconds to the first request, seconds to exit) of one `stayer -p` run."""
    argv = (*stayer_subject(DEFAULT_VENV).argv, *extra)
    with TimedServer() as server:
        server.enqueue(text_reply())
        done = spawn(argv, clean_env(server.env("anthropic"), workdir), workdir)
        if done.status != 0 or len(server.timings) != 1:
            raise RuntimeError(f"run failed ({done.status}): {done.stderr[-1500:]}")
        return server.timings[0].arrived - done.started, done.ended - done.started


def tools_tokens(workdir: Path, setting: str) -> int:
    """The first request's tool definitions, in tokens (characters / 4), with the 200-tool
    server and `ENABLE_TOOL_SEARCH=setting`."""
    config = json.dumps(
        {
            "mcpServers": {
                "many": {"command": sys.executable, "args": [str(KITCHEN), "--tools", "200"]}
            }
        }
    )
    argv = (
        *stayer_subject(DEFAULT_VENV).argv,
        "--model",
        "claude-sonnet-4-6",
        "--mcp-config",
        config,
    )
    with TimedServer() as server:
        server.enqueue(text_reply())
        env = {
            **clean_env(server.env("anthropic"), workdir),
            "MCP_CONNECTION_NONBLOCKING": "0",
            "ENABLE_TOOL_SEARCH": setting,
        }
        done = spawn(argv, env, workdir)
        if done.status != 0:
            raise RuntimeError(f"run failed ({done.status}): {done.stderr[-1500:]}")
        (request,) = server.requests
        body = request.body
        assert isinstance(body, dict)
        return len(json.dumps(body["tools"])) // 4


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.mcp_start")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        five = ("--mcp-config", _config(workdir, servers=4, hung=True))
        start_once(workdir, five)  # warm the caches (the SDK's bytecode, the servers')
        none_start, none_exit, five_start, five_exit = [], [], [], []
        for run in range(args.runs):
            print(f"run {run + 1}/{args.runs}", file=sys.stderr)
            first, end = start_once(workdir, ())
            none_start.append(first)
            none_exit.append(end)
            first, end = start_once(workdir, five)
            five_start.append(first)
            five_exit.append(end)
        whole = tools_tokens(workdir, "false")
        deferred = tools_tokens(workdir, "auto")
    rows = [
        ("start-up, no MCP server", summarize(none_start)),
        ("start-up, 5 servers (1 hung)", summarize(five_start)),
        ("run to exit, no MCP server", summarize(none_exit)),
        ("run to exit, 5 servers (1 hung)", summarize(five_exit)),
    ]
    for label, summary in rows:
        print(
            f"{label:34} median {summary.median * 1000:7.0f} ms   p95 {summary.p95 * 1000:7.0f} ms"
        )
    ratio = summarize(five_start).median / summarize(none_start).median
    print(f"start-up ratio, 5 servers / none: {ratio:.2f}x (target: 1.0x, no slower)")
    print(
        f"tool definitions, 200-tool server: {whole:,} tokens whole, {deferred:,} deferred "
        f"({whole - deferred:,} saved, {100 * (whole - deferred) / whole:.0f}%)"
    )
    return 0 if ratio <= 1.10 else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
