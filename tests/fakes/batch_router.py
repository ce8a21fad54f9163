"""One fake model server for a whole batch: each request is answered from its task's script.

A batch sends many conversations to one endpoint at once, interleaved. `TaskRouter` reads which
task a request belongs to from the conversation's first user message (a batch test writes
`[task:ID]` into each task's prompt) and answers with that task's next scripted response; a
task asking more than its script holds, or a request naming no task, is unexpected and fails
the test as any unscripted request does. `requests_of(id)` says how many calls a task made
(a re-run must make none for a finished task).

    router = TaskRouter({"t1": [reply(ToolCall(...)), reply("done")], ...})
    with FakeModelServer() as server:
        server.respond_with(router)
        ...
    assert router.leftover() == {}
"""

from __future__ import annotations

import re
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from stayer.messages import JSON
from tests.fakes.model_server import RecordedRequest
from tests.fakes.sse import Response, ToolCall, reply

_TAG = re.compile(r"\[task:([A-Za-z0-9._-]+)\]")


def tagged(task_id: str, prompt: str) -> str:
    """A prompt carrying the tag the router reads."""
    return f"[task:{task_id}] {prompt}"


def task_of(request: RecordedRequest) -> str | None:
    """The task a request belongs to: the tag in its first user message's text."""
    for message in request.messages:
        if isinstance(message, dict) and message.get("role") == "user":
            found = _TAG.search(_text_of(message.get("content")))
            return found.group(1) if found else None
    return None


def _text_of(content: JSON) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


class TaskRouter:
    """The responder of a `FakeModelServer` serving many tasks' scripts at once."""

    def __init__(self, scripts: Mapping[str, Sequence[Response]] | None = None) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Response]] = {
            task: deque(responses) for task, responses in (scripts or {}).items()
        }
        self._counts: Counter[str] = Counter()
        self.hooks: list[Callable[[str, RecordedRequest], None]] = []
        """Called (on the server's thread) with each routed request, before it is answered."""

    def add(self, task_id: str, responses: Iterable[Response]) -> None:
        with self._lock:
            self._scripts.setdefault(task_id, deque()).extend(responses)

    def __call__(self, request: RecordedRequest) -> Response:
        task = task_of(request)
        if task is None:
            raise LookupError("the request names no task ([task:ID] in its first message)")
        for hook in self.hooks:
            hook(task, request)
        with self._lock:
            self._counts[task] += 1
            script = self._scripts.get(task)
            if not script:
                raise LookupError(f"task {task} asked more than its script holds")
            return script.popleft()

    def requests_of(self, task_id: str) -> int:
        with self._lock:
            return self._counts[task_id]

    def leftover(self) -> dict[str, int]:
        """Tasks whose scripts were not used up, and how many responses are left."""
        with self._lock:
            return {task: len(left) for task, left in self._scripts.items() if left}


def tool_turns(task_id: str, turns: int, *, workspace: Path) -> list[Response]:
    """A script of `turns` tool turns that each write a file (`<workspace>/<task>-<n>.txt`
    holding `task n`; Write wants an absolute path), then a final answer naming the task:
    what the task's diff should show."""
    calls = [
        reply(ToolCall(f"toolu_{task_id}_{n}", "Write", _write(workspace, task_id, n)))
        for n in range(1, turns + 1)
    ]
    return [*calls, reply(f"finished {task_id}")]


def _write(workspace: Path, task_id: str, n: int) -> dict[str, JSON]:
    return {"file_path": str(workspace / f"{task_id}-{n}.txt"), "content": f"{task_id} {n}\n"}
