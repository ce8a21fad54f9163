"""The async floor: the same bare loop as `floor.py`, on asyncio and httpx's async client.

`floor.py` is the floor of any harness; this one is the floor of a harness that streams with
asyncio (as stayer does, to read a stream, run tools and watch for a stall or an interrupt at
once). It pays what such a harness cannot drop: asyncio itself, and anyio, which httpx's async
transport needs on asyncio. Against `floor.py` it shows what the async stack alone costs, and
stayer over it what stayer adds. Run as a plain script (`python benchmarks/floor_async.py
PROMPT`) like `floor.py`, whose request, stream parsing and tool it shares:

    while True:
        stream one Messages response over SSE (httpx.AsyncClient, keep-alive);
        no tool_use block?  print the text and stop;
        else run each command with `bash -c` (asyncio subprocess) and send the results back.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

# run as a script, so the repository is not on the path: put it there for benchmarks.floor
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # as floor.py does

import httpx  # noqa: E402

from benchmarks.floor import HEADERS_VERSION, MODEL, SYSTEM, TOOLS, _apply  # noqa: E402


async def stream_reply(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], messages: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One streamed model call; returns the assistant's content blocks."""
    body = {
        "model": MODEL,
        "max_tokens": 4096,
        "stream": True,
        "system": SYSTEM,
        "tools": TOOLS,
        "messages": messages,
    }
    blocks: list[dict[str, Any]] = []
    inputs: list[str] = []
    async with client.stream("POST", url, headers=headers, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            raise SystemExit(f"floor: HTTP {response.status_code}: {response.text}")
        async for line in response.aiter_lines():  # to the end, so the connection is reused
            if line.startswith("data:"):
                _apply(json.loads(line[5:]), blocks, inputs)
    return blocks


async def run_tool(block: dict[str, Any]) -> dict[str, Any]:
    """Run one Bash call and turn its output into a tool_result block."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        str(block["input"].get("command", "")),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    stdout, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    output = stdout.decode("utf-8", "replace").strip() or "(Bash completed with no output)"
    return {
        "type": "tool_result",
        "tool_use_id": block["id"],
        "content": output,
        "is_error": process.returncode != 0,
    }


async def main(argv: list[str]) -> int:
    """The loop; prints the final text."""
    prompt = argv[1] if len(argv) > 1 else "hi"
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
    headers = {
        "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
        "anthropic-version": HEADERS_VERSION,
        "accept": "text/event-stream",
    }
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    async with httpx.AsyncClient(timeout=600) as client:
        while True:
            blocks = await stream_reply(client, f"{base}/v1/messages", headers, messages)
            messages.append({"role": "assistant", "content": blocks})
            calls = [block for block in blocks if block["type"] == "tool_use"]
            if not calls:
                break
            results = [await run_tool(call) for call in calls]
            messages.append({"role": "user", "content": results})
    print("".join(block.get("text", "") for block in blocks if block["type"] == "text"))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))
