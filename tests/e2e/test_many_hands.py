"""Subagents, custom agents, skills, commands and a local plugin over the real CLI, in Claude
Code's file formats, against the fake model server: the issue's held-out scenarios, each read
from real files in a project folder.

A subagent shares its parent's connection, so one fake server answers both; `Router` tells
their requests apart by the conversation's first user message (a child's is its prompt) and
answers each by how far its own conversation has got.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer, RecordedRequest
from tests.fakes.sse import Response, ToolCall, reply

STREAM = ("--output-format", "stream-json", "--verbose")

Script = Callable[[RecordedRequest, int], Response]
"""Answers one party's request, given how many model turns that party has had before it."""


class Router:
    """Answers each request by whose it is: the party whose key its first user message holds."""

    def __init__(self, parties: dict[str, Script]) -> None:
        self.parties = parties
        self.seen: dict[str, list[RecordedRequest]] = {key: [] for key in parties}
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Response:
        first = first_user_text(request)
        key = next((k for k in self.parties if k in first), None)
        if key is None:
            raise AssertionError(f"a request nobody scripted: {first[:200]!r}")
        with self.lock:
            turn = len(self.seen[key])
            self.seen[key].append(request)
        return self.parties[key](request, turn)


def texts(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content or [] if isinstance(part, dict)]


def first_user_text(request: RecordedRequest) -> str:
    return "\n".join(texts(request.messages[0])) if request.messages else ""


def last_user_text(request: RecordedRequest) -> str:
    return "\n".join(texts(request.messages[-1]))


def tool_results(request: RecordedRequest) -> dict[str, str]:
    last = request.messages[-1]
    assert isinstance(last, dict) and isinstance(last["content"], list)
    found: dict[str, str] = {}
    for part in last["content"]:
        if isinstance(part, dict) and part.get("type") == "tool_result":
            content: Any = part["content"]
            found[str(part["tool_use_id"])] = (
                content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            )
    return found


def tool_names(request: RecordedRequest) -> list[str]:
    assert isinstance(request.body, dict)
    return [tool["name"] for tool in request.body.get("tools", [])]


def system_text(request: RecordedRequest) -> str:
    assert isinstance(request.body, dict)
    system = request.body.get("system", "")
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def result_line(stdout: str) -> dict[str, Any]:
    return next(line for line in lines(stdout) if line["type"] == "result")


def init_line(stdout: str) -> dict[str, Any]:
    return next(line for line in lines(stdout) if line.get("subtype") == "init")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(instant=True) as fake:
        yield fake


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)  # a repository root, for the walk up
    return folder


def env_for(server: FakeModelServer, home: Path, **more: str) -> dict[str, str]:
    return {
        **server.env(),
        "HOME": str(home),
        "STAYER_CONFIG_DIR": str(home / ".stayer"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        **more,
    }


def agent_call(call_id: str, key: str, **more: Any) -> ToolCall:
    return ToolCall(
        call_id,
        "Agent",
        {"description": f"look into {key}", "prompt": f"{key}: find out and report", **more},
    )


def test_a_subagent_runs_its_own_conversation_and_the_parent_reads_only_its_report(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    def parent(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(agent_call("toolu_a", "CHILD-A", run_in_background=False))
        return reply("The child says the answer is 42.")

    def child(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(ToolCall("toolu_c1", "Glob", {"pattern": "*.md"}))
        return reply("CHILD-A REPORT: the answer is 42")

    router = Router({"PARENT": parent, "CHILD-A": child})
    server.respond_with(router)
    done = stayer("-p", "PARENT: ask a subagent", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    result = result_line(done.stdout)
    assert result["subtype"] == "success"
    assert result["result"] == "The child says the answer is 42."
    child_first, _ = router.seen["CHILD-A"]
    assert len(child_first.messages) == 1  # its own conversation, not the parent's
    assert system_text(child_first) != system_text(router.seen["PARENT"][0])
    report = tool_results(router.seen["PARENT"][1])["toolu_a"]
    assert "CHILD-A REPORT: the answer is 42" in report
    assert "toolu_c1" not in report and ".md" not in report.split("REPORT")[0]
    nested = [line for line in lines(done.stdout) if line.get("parent_tool_use_id") == "toolu_a"]
    assert {line["type"] for line in nested} >= {"assistant", "user"}
    assert result["total_cost_usd"] > 0
    subagents = list(home.glob(".stayer/projects/*/*/subagents/agent-*.jsonl"))
    assert len(subagents) == 1


def test_two_subagents_of_one_message_run_at_once(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    arrived: list[str] = []

    def parent(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(
                agent_call("toolu_a", "CHILD-A", run_in_background=False),
                agent_call("toolu_b", "CHILD-B", run_in_background=False),
            )
        return reply("both reported")

    def child(name: str) -> Script:
        def answer(request: RecordedRequest, turn: int) -> Response:
            arrived.append(name)
            answer_ = reply(f"{name} REPORT").render("anthropic", request_model=request.model)
            if len(arrived) == 1:  # the first holds its answer until the other has asked
                return answer_.paused(at=2)
            server.resume()
            return answer_

        return answer

    router = Router({"PARENT": parent, "CHILD-A": child("A"), "CHILD-B": child("B")})
    server.respond_with(router)
    done = stayer("-p", "PARENT: ask two", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    assert sorted(arrived) == ["A", "B"]
    found = tool_results(router.seen["PARENT"][1])
    assert "A REPORT" in found["toolu_a"] and "B REPORT" in found["toolu_b"]


def test_a_custom_agent_gets_only_its_tools_and_its_own_prompt(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    write(
        project / ".claude" / "agents" / "reader.md",
        "---\nname: reader\ndescription: Reads files and reports on them\ntools: Read, Grep\n"
        "---\nYou are READER-PROMPT. Read what you are asked to and say what it holds.\n",
    )

    def parent(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(
                agent_call("toolu_a", "CHILD-A", subagent_type="reader", run_in_background=False)
            )
        return reply("done")

    def child(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(ToolCall("toolu_x", "Bash", {"command": "touch escaped"}))
        return reply("could not run it")

    router = Router({"PARENT": parent, "CHILD-A": child})
    server.respond_with(router)
    done = stayer("-p", "PARENT: use reader", "--permission-mode", "bypassPermissions", *STREAM,
                  cwd=project, env=env_for(server, home))  # fmt: skip

    assert done.status == 0, done.stderr
    first = router.seen["CHILD-A"][0]
    assert sorted(tool_names(first)) == ["Grep", "Read"]
    assert "READER-PROMPT" in system_text(first)
    assert not (project / "escaped").exists()
    assert "reader" in init_line(done.stdout)["agents"]
    listing = first_user_text(router.seen["PARENT"][0])
    assert "reader" in listing and "Reads files and reports on them" in listing


def test_a_skill_is_listed_loaded_by_the_model_and_read_after_its_short_result(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    write(
        project / ".claude" / "skills" / "release-notes" / "SKILL.md",
        "---\nname: release-notes\ndescription: Writes release notes from the changelog\n---\n"
        "SKILL-BODY: read CHANGES.md, then write notes for $ARGUMENTS.\n",
    )

    def parent(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(ToolCall("toolu_s", "Skill", {"skill": "release-notes", "args": "v2"}))
        return reply("notes written")

    router = Router({"PARENT": parent})
    server.respond_with(router)
    done = stayer("-p", "PARENT: release notes", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    first, second = router.seen["PARENT"]
    assert "release-notes" in first_user_text(first)
    assert "Writes release notes from the changelog" in first_user_text(first)
    assert "SKILL-BODY" not in first_user_text(first)  # only the listing until it is loaded
    assert "SKILL-BODY" not in tool_results(second)["toolu_s"]
    after = last_user_text(second)
    assert "SKILL-BODY: read CHANGES.md, then write notes for v2." in after
    assert str(project / ".claude" / "skills" / "release-notes") in after
    assert "release-notes" in init_line(done.stdout)["skills"]


def test_a_slash_command_with_arguments_in_print_mode(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    write(
        project / ".claude" / "commands" / "greet.md",
        "---\ndescription: Greets someone\nargument-hint: NAME\n---\n"
        "Greet $0 warmly, then say the whole request was: $ARGUMENTS\n",
    )
    server.enqueue(reply("Hello, Ada!"))
    done = stayer("-p", "/greet Ada Lovelace", *STREAM, cwd=project, env=env_for(server, home))

    assert done.status == 0, done.stderr
    (request,) = server.requests
    sent = first_user_text(request)
    assert "<command-name>/greet</command-name>" in sent
    assert "<command-args>Ada Lovelace</command-args>" in sent
    assert "Greet Ada warmly, then say the whole request was: Ada Lovelace" in sent
    assert "greet" in init_line(done.stdout)["slash_commands"]


def test_a_local_plugin_brings_its_command_agent_and_hook(
    server: FakeModelServer, project: Path, home: Path, tmp_path: Path
) -> None:
    plugin = tmp_path / "kit"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "kit"}))
    write(
        plugin / "commands" / "hi.md", "---\ndescription: Says hi\n---\nPLUGIN-HI for $ARGUMENTS\n"
    )
    write(
        plugin / "agents" / "helper.md",
        "---\nname: helper\ndescription: The kit's helper\n---\nYou help.\n",
    )
    marker = tmp_path / "hook-ran"
    write(
        plugin / "hooks" / "hooks.json",
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
                    ]
                }
            }
        ),
    )
    server.enqueue(reply("hi there"))
    done = stayer("-p", "/kit:hi Bob", "--plugin-dir", str(plugin), *STREAM,
                  cwd=project, env=env_for(server, home))  # fmt: skip

    assert done.status == 0, done.stderr
    init = init_line(done.stdout)
    assert "kit:hi" in init["slash_commands"]
    assert "kit:helper" in init["agents"]
    assert [entry["name"] for entry in init["plugins"]] == ["kit"]
    assert "PLUGIN-HI for Bob" in first_user_text(server.requests[0])
    assert marker.exists()


def test_a_background_child_is_waited_for_and_read_before_the_run_completes(
    server: FakeModelServer, project: Path, home: Path
) -> None:
    def parent(request: RecordedRequest, turn: int) -> Response:
        if turn == 0:
            return reply(agent_call("toolu_a", "CHILD-A", run_in_background=True))
        if turn == 1:
            return reply("I will wait for it.")
        return reply("It reported: BACKGROUND REPORT")

    def child(request: RecordedRequest, turn: int) -> Response:
        return reply("BACKGROUND REPORT")

    router = Router({"PARENT": parent, "CHILD-A": child})
    server.respond_with(router)
    done = stayer("-p", "PARENT: in the background", *STREAM,
                  cwd=project, env=env_for(server, home))  # fmt: skip

    assert done.status == 0, done.stderr
    launched = tool_results(router.seen["PARENT"][1])["toolu_a"]
    assert "background" in launched
    last = router.seen["PARENT"][2]
    assert "BACKGROUND REPORT" in last_user_text(last)
    assert "task-notification" in last_user_text(last)
    result = result_line(done.stdout)
    assert result["subtype"] == "success" and result["result"] == "It reported: BACKGROUND REPORT"
    kinds = [line.get("subtype") for line in lines(done.stdout) if line["type"] == "system"]
    assert "task_started" in kinds and "task_notification" in kinds
