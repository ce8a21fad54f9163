"""`stayer -p --output-format stream-json` with a subagent in the background, as an SDK caller
reads it: a `task_started` line as it starts, its messages each with the Agent call as
`parent_tool_use_id`, a `task_notification` line when it ends (its transcript, on disk, as the
`output_file`), and only then the run's `result`. Real CLI, the fake model server telling the
session's requests from the subagent's by their conversations."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Response, ToolCall, reply

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        find_spec("stayer.session.spawn") is None,
        reason="subagents made from their agent type (session/spawn.py) are not merged yet",
    ),
]

TASK = "Count the Markdown files here and report the number."
AGENT = {
    "description": "count markdown files",
    "prompt": TASK,
    "subagent_type": "general-purpose",
    "run_in_background": True,
}


def _respond(request: RecordedRequest) -> Response:
    said = str(request.messages)
    if request.messages and TASK in str(request.messages[0]):  # the subagent's
        if "toolu_glob" not in said:
            return reply(ToolCall("toolu_glob", "Glob", {"pattern": "*.md"}))
        return reply("There is one Markdown file.")
    if "toolu_agent" not in said:
        return reply(ToolCall("toolu_agent", "Agent", AGENT))
    if "There is one Markdown file." in said:
        return reply("The helper found one Markdown file.")
    return reply("A helper is counting them.")


def test_a_background_subagent_is_announced_and_closed_before_the_result(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# notes\n")
    with FakeModelServer() as server:
        server.respond_with(_respond)
        env = {**server.env(), "HOME": str(tmp_path / "home")}
        done = stayer(
            "-p", "count the markdown files", "--output-format", "stream-json", "--verbose",
            cwd=tmp_path, env=env,
        )  # fmt: skip
    assert done.status == 0, done.stderr
    lines = done.json_lines()
    kinds = [_kind(line) for line in lines]
    started = lines[kinds.index("task_started")]
    notified = lines[kinds.index("task_notification")]
    assert kinds.index("task_started") < kinds.index("task_notification") < kinds.index("result")
    assert kinds[-1] == "result" and lines[-1]["result"] == "The helper found one Markdown file."

    agent_id = started["task_id"]
    assert (started["tool_use_id"], started["task_type"], started["is_backgrounded"]) == (
        "toolu_agent",
        "local_agent",
        True,
    )
    assert (started["description"], started["subagent_type"]) == (
        "count markdown files",
        "general-purpose",
    )
    assert (notified["task_id"], notified["status"], notified["tool_use_id"]) == (
        agent_id,
        "completed",
        "toolu_agent",
    )
    assert notified["usage"]["tool_uses"] == 1
    assert notified["summary"].startswith("general-purpose: count markdown files · done")
    output = Path(notified["output_file"])
    assert output.name == f"agent-{agent_id}.jsonl" and output.is_file()
    for line in (started, notified):
        assert {"uuid", "session_id"} <= set(line) and line["session_id"] == lines[0]["session_id"]

    nested = [line for line in lines if line.get("parent_tool_use_id") == "toolu_agent"]
    assert [_kind(line) for line in nested] == ["assistant", "user", "assistant"]


def _kind(line: dict[str, Any]) -> str:
    return str(line.get("subtype") if line["type"] == "system" else line["type"])
