"""The floor: the bare agent loop (SPEC's toy `while True` over httpx and subprocess).

Nothing a harness does can make a turn cheaper than this script does, so its figures are the
floor stayer's are divided by. It imports only the standard library and httpx, and is run as a
plain script (`python benchmarks/floor.py PROMPT`), never as part of the `benchmarks` package,
so its start-up is the interpreter plus httpx and nothing else:

    while True:
        stream one Messages response over SSE (keep-alive client, same endpoint as stayer);
        no tool_use block?  print the text and stop;
        else run each command with `bash -c` via subprocess and send the results back.

It reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY like stayer, offers one Bash tool, and parses
just enough of the stream to rebuild the content blocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

# httpx imports its optional command-line client (click, rich, pygments) whenever they are
# installed, as they are in the dev environment; stayer skips it the same way, and a runtime-only
# install does not have them. Without this the floor would pay ~100 ms that stayer does not.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None = "absent"

import httpx  # noqa: E402

MODEL = "claude-sonnet-4-5"
HEADERS_VERSION = "2023-06-01"
SYSTEM = "You are a minimal agent. Use the Bash tool to act."
TOOLS: list[dict[str, Any]] = [
    {
        "name": "Bash",
        "description": "Run a shell command with bash and return its output.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    }
]


def _apply(event: dict[str, Any], blocks: list[dict[str, Any]], inputs: list[str]) -> None:
    """Fold one stream event into the content blocks being built."""
    kind = event.get("type")
    if kind == "content_block_start":
        blocks.append(dict(event["content_block"]))
        inputs.append("")
    elif kind == "content_block_delta":
        index, delta = event["index"], event["delta"]
        if delta["type"] == "text_delta":
            blocks[index]["text"] += delta["text"]
        elif delta["type"] == "input_json_delta":
            inputs[index] += delta["partial_json"]
    elif kind == "content_block_stop":
        index = event["index"]
        if blocks[index]["type"] == "tool_use":
            blocks[index]["input"] = json.loads(inputs[index] or "{}")
    elif kind == "error":
        raise SystemExit(f"floor: stream error {event.get('error')}")


def stream_reply(
    client: httpx.Client, url: str, headers: dict[str, str], messages: list[dict[str, Any]]
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
    with client.stream("POST", url, headers=headers, json=body) as response:
        if response.status_code != 200:
            response.read()
            raise SystemExit(f"floor: HTTP {response.status_code}: {response.text}")
        for line in response.iter_lines():  # read to the end so the connection is reused
            if line.startswith("data:"):
                _apply(json.loads(line[5:]), blocks, inputs)
    return blocks


def run_tool(block: dict[str, Any]) -> dict[str, Any]:
    """Run one Bash call and turn its output into a tool_result block."""
    done = subprocess.run(
        ["bash", "-c", str(block["input"].get("command", ""))],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = (done.stdout + done.stderr).strip() or "(Bash completed with no output)"
    return {
        "type": "tool_result",
        "tool_use_id": block["id"],
        "content": output,
        "is_error": done.returncode != 0,
    }


def main(argv: list[str]) -> int:
    """The loop; prints the final text."""
    prompt = argv[1] if len(argv) > 1 else "hi"
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
    headers = {
        "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
        "anthropic-version": HEADERS_VERSION,
        "accept": "text/event-stream",
    }
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    with httpx.Client(timeout=600) as client:
        while True:
            blocks = stream_reply(client, f"{base}/v1/messages", headers, messages)
            messages.append({"role": "assistant", "content": blocks})
            calls = [block for block in blocks if block["type"] == "tool_use"]
            if not calls:
                break
            messages.append({"role": "user", "content": [run_tool(call) for call in calls]})
    print("".join(block.get("text", "") for block in blocks if block["type"] == "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
