"""Hooks that fail, over the real CLI: each one that times out, crashes, exits with another
status than 0 and 2, cannot start, or answers JSON that is not usable is one `system`
`hook_failed` line in stream-json, without `--include-hook-events` too, so a program driving
stayer learns that a guard did not run. Hooks that succeed or block print no such line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

HANGS = "sleep 30"
CRASHES = "python3 -c 'raise SystemExit(\"the guard broke\")'"
EXITS_3 = "echo 'cannot reach the policy server' >&2; exit 3"
GARBAGE = "echo '{\"decision\": block'"
WRONG_TYPE = 'echo \'{"continue": "maybe"}\''
MISSING = "./no-such-guard"
FINE = 'echo "{}"'
BLOCKS = "echo 'not rm' >&2; exit 2"


def install(project: Path, *commands: str, timeout: float | None = None) -> None:
    handlers: list[dict[str, Any]] = []
    for command in commands:
        handler: dict[str, Any] = {"type": "command", "command": command}
        if command == HANGS:
            handler["timeout"] = timeout
        handlers.append(handler)
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}}
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))


def run_one_call(server: FakeModelServer, project: Path, *flags: str) -> list[dict[str, Any]]:
    call = ToolCall("toolu_1", "Bash", {"command": "echo ran"})
    server.enqueue(reply(call), reply("finished"))
    done = stayer("-p", "go", "--output-format", "stream-json", "--verbose",
                  "--dangerously-skip-permissions", *flags, cwd=project,
                  env=server.env())  # fmt: skip
    assert done.status == 0, done.stderr
    return done.json_lines()


def failed(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The hook_failed lines by command."""
    found = [line for line in lines if line.get("subtype") == "hook_failed"]
    by_command = {line["command"]: line for line in found}
    assert len(by_command) == len(found), "a failure reported twice"
    return by_command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tmp_path / "project"


def test_each_failing_hook_is_one_system_line_without_include_hook_events(
    server: FakeModelServer, project: Path
) -> None:
    install(project, HANGS, CRASHES, EXITS_3, GARBAGE, WRONG_TYPE, MISSING, FINE, timeout=0.5)
    lines = run_one_call(server, project)

    reports = failed(lines)
    assert set(reports) == {HANGS, CRASHES, EXITS_3, GARBAGE, WRONG_TYPE, MISSING}
    shown = {
        command: (line["reason"], line["exit_code"], line["error"])
        for command, line in reports.items()
    }
    assert shown[HANGS][0] == "timeout"
    assert shown[HANGS][2] == "did not finish within 0.5 s and was stopped"
    assert shown[CRASHES] == ("exit_status", 1, "the guard broke")
    assert shown[EXITS_3] == ("exit_status", 3, "cannot reach the policy server")
    assert shown[GARBAGE][:2] == ("bad_output", 0)
    assert shown[GARBAGE][2].startswith("its output looks like JSON but is not")
    assert shown[WRONG_TYPE] == (
        "bad_output",
        0,
        'its JSON output is not usable: continue: input should be a valid boolean (got "maybe")',
    )
    assert shown[MISSING][:2] == ("exit_status", 127)
    session = lines[0]["session_id"]
    for line in reports.values():
        assert (line["type"], line["hook_name"], line["hook_event"]) == (
            "system",
            "PreToolUse:Bash",
            "PreToolUse",
        )
        assert line["session_id"] == session and line["hook_id"] and line["uuid"]
    # they come where the hooks ran: before the call's result, and the call went on
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    first_failure = kinds.index(("system", "hook_failed"))
    assert kinds[first_failure - 1] == ("assistant", None)
    assert kinds[first_failure + len(reports)] == ("user", None)
    result = lines[first_failure + len(reports)]["message"]["content"][0]
    ran = [{"type": "text", "text": "ran"}]
    assert (result.get("is_error", False), result["content"]) == (False, ran)
    assert lines[-1]["subtype"] == "success"


def test_hooks_that_succeed_or_block_print_no_failure_line(
    server: FakeModelServer, project: Path
) -> None:
    install(project, FINE, BLOCKS)
    lines = run_one_call(server, project)
    assert failed(lines) == {}
    assert [line["subtype"] for line in lines if line["type"] == "system"] == ["init"]


def test_with_include_hook_events_the_failure_line_follows_the_hook_response(
    server: FakeModelServer, project: Path
) -> None:
    install(project, EXITS_3)
    lines = run_one_call(server, project, "--include-hook-events")
    hook_lines = [line for line in lines if str(line.get("subtype", "")).startswith("hook_")]
    assert [line["subtype"] for line in hook_lines] == [
        "hook_started",
        "hook_response",
        "hook_failed",
    ]
    assert len({line["hook_id"] for line in hook_lines}) == 1
    assert (hook_lines[1]["outcome"], hook_lines[2]["reason"]) == ("error", "exit_status")
