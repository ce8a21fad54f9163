"""The model server of the batch benchmark, in a process of its own so its CPU is not billed to
the harness: `python -m benchmarks.batch_server [--delay-ms 150] [--turns 5]`.

It is the fake model server of the tests (`tests.fakes.model_server`: real HTTP and SSE on
loopback, every request's history checked), answering every task from one stateless rule, so
any number of tasks can share it without a script each: a request whose conversation holds k
assistant messages gets tool call k+1 while k < `--turns` (even k: a Read of the workspace's
README; odd k: a Write of `note-k.txt` beside it), then a final text. The workspace is read
from the tag `[ws:PATH]` the task's prompt carries (`task_prompt`). `--delay-ms` holds each
answer that long before its headers, as a model's time to first token would.

It prints `URL <base url>` on standard output once it serves, and when its standard input
closes, one line `DONE <json>` (requests answered, history violations, unexpected requests),
then exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys

from tests.fakes.model_server import FakeModelServer, Receive, RecordedRequest, Responder, Send
from tests.fakes.sse import Response, ToolCall, reply

from stayer.tools.names import READ, WRITE

_WORKSPACE = re.compile(r"\[ws:([^\]]+)\]")
FINAL_TEXT = "all done"


def task_prompt(task_id: str, workspace: str) -> str:
    """A task's prompt: what the server needs to answer it (its workspace), and the task."""
    return f"[task:{task_id}] [ws:{workspace}] Read the README and leave notes beside it."


def _first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    str(block.get("text", "")) for block in content if isinstance(block, dict)
                )
    return ""


def responder(turns: int) -> Responder:
    """The rule every request is answered by (see the module's docstring)."""

    def respond(request: RecordedRequest) -> Response:
        found = _WORKSPACE.search(_first_user_text(request))
        if found is None:
            raise LookupError("the request names no workspace ([ws:PATH] in its first message)")
        workspace = found.group(1)
        done = sum(
            1 for m in request.messages if isinstance(m, dict) and m.get("role") == "assistant"
        )
        if done >= turns:
            return reply(FINAL_TEXT)
        call_id = f"toolu_bench_{done:03d}"
        if done % 2 == 0:
            call = ToolCall(call_id, READ, {"file_path": f"{workspace}/README.md"})
        else:
            path = f"{workspace}/note-{done}.txt"
            call = ToolCall(call_id, WRITE, {"file_path": path, "content": f"note {done}\n"})
        return reply(call, stop_reason="tool_use")

    return respond


class DelayedServer(FakeModelServer):
    """The instant fake, holding each model call `delay_s` before answering."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(instant=True)
        self.delay_s = delay_s

    async def handle(self, request: RecordedRequest, receive: Receive, send: Send) -> None:
        if self.delay_s and request.method == "POST":
            await asyncio.sleep(self.delay_s)
        await super().handle(request, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    server = DelayedServer(args.delay_ms / 1e3)
    server.respond_with(responder(args.turns))
    server.start()
    print(f"URL {server.url}", flush=True)
    sys.stdin.read()  # until the benchmark closes our standard input
    server.close()
    summary = {
        "requests": len(server.requests),
        "violations": server.violations[:3],
        "unexpected": [u.reason for u in server.unexpected[:3]],
    }
    print(f"DONE {json.dumps(summary)}", flush=True)


if __name__ == "__main__":
    main()
