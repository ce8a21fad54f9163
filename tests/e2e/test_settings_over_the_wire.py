"""A project set up for Claude Code works unchanged: `stayer -p` reads `.claude/settings.json`
(and stayer's `.stayer/`), `--settings` and `--setting-sources` are acted on, and a broken
settings file stops the run in one line (exit status 2) before the model is asked anything,
unless `STAYER_IGNORE_BAD_SETTINGS=1` leaves the file out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import stayer
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / "secrets").mkdir(parents=True)
    (path / "secrets" / "key.txt").write_text("hunter2\n")
    (path / "data").mkdir()
    (path / "data" / "rows.csv").write_text("1,2\n")
    (path / ".claude").mkdir()
    (path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secrets/**)", "Bash(rm:*)"]}}, indent=2)
    )
    return path


def test_a_claude_code_projects_deny_rules_hold_even_when_bypassing(
    server: FakeModelServer, project: Path
) -> None:
    server.enqueue(
        reply(
            ToolCall("toolu_read", "Read", {"file_path": str(project / "secrets" / "key.txt")}),
            ToolCall("toolu_rm", "Bash", {"command": "rm -rf data"}),
        ),
        reply("I could not."),
    )
    done = stayer("-p", "clean up", "--dangerously-skip-permissions", "--output-format",
                  "stream-json", "--verbose", cwd=project, env=server.env())  # fmt: skip

    assert done.status == 0, done.stderr
    read, rm = tool_results(server.requests[1])
    for result in (read, rm):
        assert result["is_error"] is True
        assert "has been denied by a deny rule" in result_text(result)
    assert "hunter2" not in json.dumps(server.requests[1].messages)
    assert (project / "data" / "rows.csv").read_text() == "1,2\n"
    init = done.json_lines()[0]
    assert (init["subtype"], init["settings_files"], init["settings_warnings"]) == (
        "init", [str(project / ".claude" / "settings.json")], [],
    )  # fmt: skip


def test_reading_claude_codes_files_can_be_turned_off(
    server: FakeModelServer, project: Path
) -> None:
    server.enqueue(reply(ToolCall("toolu_rm", "Bash", {"command": "rm -rf data"})), reply("ok"))
    env = {**server.env(), "STAYER_NO_CLAUDE_SETTINGS": "1"}
    done = stayer("-p", "clean up", "--dangerously-skip-permissions", cwd=project, env=env)

    assert done.status == 0, done.stderr
    (rm,) = tool_results(server.requests[1])
    assert rm.get("is_error") is not True
    assert not (project / "data").exists()


BROKEN_DENY = {
    "trailing comma": (
        '{\n  "permissions": {\n    "deny": ["Read(secret.txt)"],\n  }\n}\n',
        "4:3: not valid JSON (Expecting property name enclosed in double quotes)",
    ),
    "deny as a string": (
        '{\n  "permissions": {\n    "deny": "Read(secret.txt)"\n  }\n}\n',
        '3:13: permissions.deny: input should be a valid array (got "Read(secret.txt)")',
    ),
    "rule missing its )": (
        '{\n  "permissions": {\n    "deny": ["Read(secret.txt"]\n  }\n}\n',
        "3:14: permissions.deny[0]: bad permission rule 'Read(secret.txt'; write Tool or "
        "Tool(pattern)",
    ),
}
"""`.claude/settings.json` texts whose deny rule for secret.txt is broken, and what is wrong."""


@pytest.mark.parametrize("example", list(BROKEN_DENY))
def test_a_broken_deny_rule_stops_the_run_before_the_denied_file_is_read(
    server: FakeModelServer, tmp_path: Path, example: str
) -> None:
    text, what = BROKEN_DENY[example]
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / "secret.txt").write_text("hunter2\n")
    settings = project / ".claude" / "settings.json"
    settings.write_text(text)
    message = (
        f"{settings}:{what}; fix the file, or set STAYER_IGNORE_BAD_SETTINGS=1 to go on without it"
    )

    for output in ("text", "json", "stream-json"):
        done = stayer("-p", "show me secret.txt", "--output-format", output, "--verbose",
                      cwd=project, env=server.env())  # fmt: skip
        assert (done.status, done.stderr.splitlines(), server.requests) == (
            2, [f"stayer: {message}"], [],
        )  # fmt: skip
        assert "hunter2" not in done.stdout + done.stderr
        if output != "text":
            (result,) = done.json_lines()
            assert (result["type"], result["is_error"], result["terminal_reason"]) == (
                "result", True, "turn_setup_failed",
            )  # fmt: skip
            assert result["result"] == message and result["errors"] == [message]

    # with the switch, the file is left out whole, and said so: its deny rule no longer holds
    server.enqueue(
        reply(ToolCall("toolu_read", "Read", {"file_path": str(project / "secret.txt")})),
        reply("It says hunter2."),
    )
    env = {**server.env(), "STAYER_IGNORE_BAD_SETTINGS": "1"}
    done = stayer("-p", "show me secret.txt", cwd=project, env=env)

    assert (done.status, done.stdout) == (0, "It says hunter2.\n")
    assert done.stderr.splitlines() == [
        f"stayer: {settings}:{what}; left the whole file out, as STAYER_IGNORE_BAD_SETTINGS is "
        "set: none of its settings apply"
    ]
    (read,) = tool_results(server.requests[1])
    assert "hunter2" in result_text(read)


def test_inline_settings_set_the_model_and_setting_sources_pick_the_files(
    server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user-home"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"env": {"WHO": "user"}}))
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"WHO": "local"}}))
    server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "echo who=$WHO"})), reply("ok"))
    env = {**server.env(), "STAYER_CONFIG_DIR": str(user)}

    done = stayer("-p", "who", "--settings", '{"model":"claude-opus-4-1"}', "--setting-sources",
                  "user,project", "--allowedTools", "Bash", cwd=project, env=env)  # fmt: skip

    assert done.status == 0, done.stderr
    assert server.requests[0].model == "claude-opus-4-1"
    (echo,) = tool_results(server.requests[1])
    assert result_text(echo) == "who=user"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--settings", '{"model": 3}'),
         "stayer: --settings:1:11: model: input should be a valid string (got 3); fix it, or "
         "leave --settings out"),
        (("--setting-sources", "user,managed"),
         "stayer: --setting-sources: unknown source 'managed'; use user, project and/or local, "
         "comma-separated"),
    ],
)  # fmt: skip
def test_a_bad_settings_flag_is_one_line_and_nothing_runs(
    server: FakeModelServer, project: Path, flags: tuple[str, ...], message: str
) -> None:
    done = stayer("-p", "hi", *flags, cwd=project, env=server.env())
    assert (done.status, done.stderr.splitlines(), server.requests) == (2, [message], [])
