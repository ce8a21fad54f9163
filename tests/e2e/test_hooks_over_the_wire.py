"""The issue's example over the real CLI: a project whose `.claude/settings.json` installs a
blocking PreToolUse hook gets it run, the call blocked with the hook's word to the model and a
line on standard error; `--include-hook-events` adds Claude Code's hook lines to stream-json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

GUARD = 'cat > "$CLAUDE_PROJECT_DIR/hook-input.json"; echo "rm is not allowed here" >&2; exit 2'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / "data").mkdir(parents=True)
    (path / "data" / "rows.csv").write_text("1,2\n")
    (path / ".claude").mkdir()
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": GUARD}]}]}}  # fmt: skip
    (path / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return path


def test_a_projects_blocking_pre_tool_use_hook_blocks_the_call(
    server: FakeModelServer, project: Path
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_rm", "Bash", {"command": "rm -rf data"})), reply("I could not.")
    )
    done = stayer("-p", "clean up", "--dangerously-skip-permissions", cwd=project,
                  env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    assert (project / "data" / "rows.csv").read_text() == "1,2\n"
    (blocked,) = tool_results(server.requests[1])
    assert blocked["is_error"] is True
    assert result_text(blocked) == f"PreToolUse:Bash hook error: [{GUARD}]: rm is not allowed here"
    heard = json.loads((project / "hook-input.json").read_text())
    assert (heard["hook_event_name"], heard["tool_name"], heard["tool_input"]) == (
        "PreToolUse", "Bash", {"command": "rm -rf data"},
    )  # fmt: skip
    assert f"stayer: PreToolUse:Bash hook `{GUARD}` blocked: rm is not allowed here" in (
        done.stderr.splitlines()
    )
    assert done.stdout == "I could not.\n"


@pytest.mark.parametrize("included", [True, False])
def test_hook_lines_in_stream_json_only_when_asked(
    server: FakeModelServer, project: Path, included: bool
) -> None:
    server.enqueue(reply(ToolCall("toolu_rm", "Bash", {"command": "rm -rf data"})), reply("no"))
    flags = ["--include-hook-events"] if included else []
    done = stayer("-p", "clean up", "--dangerously-skip-permissions", "--output-format",
                  "stream-json", "--verbose", *flags, cwd=project, env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    hooks = [
        line for line in done.json_lines()
        if line["type"] == "system" and line["subtype"].startswith("hook_")
    ]  # fmt: skip
    if not included:
        assert hooks == []
        return
    started, response = hooks
    names = {"hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse"}
    assert {key: started[key] for key in ("subtype", *names)} == {
        "subtype": "hook_started",
        **names,
    }
    assert started["hook_id"] == response["hook_id"]
    fields = ("subtype", *names, "exit_code", "outcome", "stderr", "output")
    assert {key: response[key] for key in fields} == {
        "subtype": "hook_response",
        **names,
        "exit_code": 2,
        "outcome": "error",
        "stderr": "rm is not allowed here\n",
        "output": "rm is not allowed here",
    }


SESSION_END = "echo 'could not archive the session' >&2; exit 1"


@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_session_end_hook_runs_are_printed_before_the_process_ends(
    server: FakeModelServer, tmp_path: Path, output: str
) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    settings = {"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": SESSION_END}]}]}}  # fmt: skip
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    server.enqueue(reply("all done"))
    done = stayer("-p", "hi", "--output-format", output, "--verbose", "--include-hook-events",
                  cwd=project, env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    if output == "text":
        assert done.stdout == "all done\n"
        assert done.stderr.splitlines() == [
            f"stayer: SessionEnd:other hook `{SESSION_END}` failed: could not archive the session"
        ]
        return
    lines = json.loads(done.stdout) if output == "json" else done.json_lines()
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds[-4:] == [
        ("result", "success"),
        ("system", "hook_started"),
        ("system", "hook_response"),
        ("system", "hook_failed"),
    ]
    assert {line.get("hook_event") for line in lines[-3:]} == {"SessionEnd"}
    assert lines[-1]["command"] == SESSION_END
    assert lines[-2]["stderr"] == "could not archive the session\n"
