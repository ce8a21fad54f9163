"""The flags claude-agent-sdk passes take effect on the wire: each test builds its command line
with the SDK's own `_build_command` and runs this checkout's stayer with it against the fake
model server (the prompt given with `-p`, as the stdin protocol has tests of its own), then
reads what reached the model: the system prompt and its appended text, thinking and effort in
the request body, the fallback model, the settings files the sources pick, the agents."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage
from claude_agent_sdk._internal.message_parser import parse_message
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from stayer.context.prompt import BASE_PROMPT
from stayer.tools.names import AGENT, STRUCTURED_OUTPUT
from tests.e2e.cli import Completed, stayer
from tests.e2e.test_agent_flag import system_text
from tests.e2e.test_headless_over_the_wire import result_text, tool_results
from tests.e2e.test_model_fallback import overloaded
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply
from tests.sandboxes import outside_tmp, skip_without_sandbox

BASE_OPENING = BASE_PROMPT.strip().splitlines()[0]


def sdk_flags(**given: Any) -> list[str]:
    """The flags the SDK starts its CLI with for these options, its stdin switch left out."""
    options = ClaudeAgentOptions(cli_path="stayer", **given)
    argv = SubprocessCLITransport(prompt="", options=options)._build_command()[1:]
    assert argv[-2:] == ["--input-format", "stream-json"]
    return argv[:-2]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """User folders of the test's own, so no real settings or agents apply."""
    folder = tmp_path / "home"
    folder.mkdir()
    return {"HOME": str(folder), "STAYER_CONFIG_DIR": str(folder / ".stayer"),
            "CLAUDE_CONFIG_DIR": str(folder / ".claude")}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def run(server: FakeModelServer, project: Path, home: dict[str, str], **given: Any) -> Completed:
    openai = str(given.get("model", "")).startswith("openai:")
    env = {**server.env("openai" if openai else "anthropic"), **home}
    done = stayer("-p", "hi", *sdk_flags(**given), cwd=project, env=env)
    assert done.status == 0, done.stderr
    assert done.json_lines()[-1]["type"] == "result"
    return done


@pytest.mark.parametrize(
    ("system_prompt", "opens", "ends"),
    [
        (None, "", "\n"),  # the SDK's default: an empty prompt, not stayer's
        ("Only Go.", "Only Go.", "\n"),
        ({"type": "preset", "preset": "claude_code"}, BASE_OPENING, "\n"),
        (
            {"type": "preset", "preset": "claude_code", "append": "Answer in French."},
            BASE_OPENING,
            "\n\nAnswer in French.\n",
        ),
    ],
)
def test_the_system_prompt_and_its_preset_forms_reach_the_model(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    system_prompt: Any,
    opens: str,
    ends: str,
) -> None:
    server.enqueue(reply("ok"))
    run(server, project, home, system_prompt=system_prompt)

    system = system_text(server.requests[0])
    assert system.startswith(opens) and system.endswith(ends)
    assert (BASE_OPENING in system) == (opens == BASE_OPENING)


@pytest.mark.parametrize(
    ("given", "thinking", "output_config"),
    [
        ({}, None, None),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 5000, "display": "summarized"},
             "effort": "low"},
            {"type": "enabled", "budget_tokens": 5000, "display": "summarized"},
            {"effort": "low"},
        ),
        ({"thinking": {"type": "adaptive"}}, {"type": "adaptive"}, None),
        ({"thinking": {"type": "disabled"}, "effort": "max"},
         {"type": "disabled"}, {"effort": "max"}),
        ({"max_thinking_tokens": 0}, {"type": "disabled"}, None),
    ],
)  # fmt: skip
def test_thinking_and_effort_go_out_in_the_request_body(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    given: dict[str, Any],
    thinking: Any,
    output_config: Any,
) -> None:
    server.enqueue(reply("ok"))
    run(server, project, home, **given)

    body = server.requests[0].body
    assert isinstance(body, dict)
    assert (body.get("thinking"), body.get("output_config")) == (thinking, output_config)


def test_a_budget_above_the_output_limit_is_kept_below_it(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(reply("ok"))
    run(server, project, home, max_thinking_tokens=10_000_000)

    body = server.requests[0].body
    assert isinstance(body, dict)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": body["max_tokens"] - 1}


def test_effort_reaches_an_openai_model_as_reasoning_effort(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(reply("ok"))
    done = run(server, project, home, model="openai:gpt-4.1", effort="xhigh")

    body = server.requests[0].body
    assert isinstance(body, dict)
    assert body["reasoning_effort"] == "high" and "thinking" not in body
    assert done.stderr == ""


def test_a_thinking_budget_an_openai_model_cannot_take_is_said_in_one_line(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(reply("ok"))
    done = run(server, project, home, model="openai:gpt-4.1", max_thinking_tokens=4000)

    body = server.requests[0].body
    assert isinstance(body, dict) and "thinking" not in body and "reasoning_effort" not in body
    assert done.stderr.splitlines() == [
        "stayer: --thinking and --max-thinking-tokens have no effect on OpenAI-compatible "
        "models; --effort sets their reasoning_effort"
    ]


def test_the_fallback_model_answers_when_the_model_stays_overloaded(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(*[overloaded()] * 3, reply("from haiku"))
    done = run(server, project, home, model="opus", fallback_model="haiku")

    assert [request.model for request in server.requests] == [
        *["claude-opus-5-5"] * 3,
        "claude-haiku-5-5",
    ]
    assert done.json_lines()[-1]["result"] == "from haiku"


@pytest.mark.parametrize(
    ("sources", "model"),
    [
        (None, "claude-haiku-5-5"),  # every file: the project's over the user's
        (["user"], "claude-sonnet-5-5"),
        (["project"], "claude-haiku-5-5"),
        ([], "claude-opus-5-5"),  # none: the default model
    ],
)
def test_setting_sources_pick_the_settings_files_read(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    sources: list[str] | None,
    model: str,
) -> None:
    user = Path(home["CLAUDE_CONFIG_DIR"])
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"model": "sonnet"}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"model": "haiku"}))
    server.enqueue(reply("ok"))
    run(server, project, home, setting_sources=sources)

    assert server.requests[0].model == model


def test_agents_from_a_file_as_older_sdks_pass_them_are_the_subagents_used(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    agents = tmp_path / "agents.json"
    agents.write_text(
        json.dumps(
            {"checker": {"description": "Checks spelling.", "prompt": "You check spelling."}}
        )
    )
    call = {"description": "check", "prompt": "check README", "subagent_type": "checker",
            "run_in_background": False}  # fmt: skip
    server.enqueue(reply(ToolCall("toolu_1", AGENT, call)), reply("all fine"), reply("done"))
    run(server, project, home, extra_args={"agents": f"@{agents}"})

    parent, child, _ = server.requests
    assert "You check spelling." in system_text(child)
    assert "You check spelling." not in system_text(parent)


def test_the_sdks_version_checks_accept_stayer(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 0.2.x reads the first system/init line; verbatim prompts need 2.1.248 or later
    server.enqueue(reply("ok"))
    init = run(server, project, home).json_lines()[0]
    options = ClaudeAgentOptions(cli_path="stayer", verbatim_prompts=True)
    with caplog.at_level(logging.WARNING, logger="claude_agent_sdk"):
        SubprocessCLITransport(prompt="", options=options)._check_claude_version(init)
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert caplog.records == []
    # 0.1.x ran `cli -v` and took the first N.N.N at its start, warning below 2.0.0
    for flag in ("-v", "--version"):
        shown = stayer(flag, cwd=project).stdout
        found = re.match(r"(\d+)\.(\d+)\.(\d+)", shown)
        assert found is not None and tuple(map(int, found.groups())) >= (2, 1, 248)
        assert found.group(0) == init["claude_code_version"]


def test_the_sdks_sandbox_option_sandboxes_bash_commands(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    # the SDK merges `sandbox` into --settings; a command then cannot write outside the project
    skip_without_sandbox(project)
    with outside_tmp() as outside:
        call = ToolCall("toolu_1", "Bash", {"command": f"touch {outside}/escaped"})
        server.enqueue(reply(call), reply("done"))
        run(server, project, home, sandbox={"enabled": True}, permission_mode="bypassPermissions")
        assert not (outside / "escaped").exists()
    (refused,) = tool_results(server.requests[1])
    assert "Read-only file system" in result_text(refused)


def test_a_projects_settings_cannot_turn_off_the_users_sandbox(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    skip_without_sandbox(project)
    user = Path(home["CLAUDE_CONFIG_DIR"])
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": False}}))
    with outside_tmp() as outside:
        call = ToolCall("toolu_1", "Bash", {"command": f"touch {outside}/escaped"})
        server.enqueue(reply(call), reply("done"))
        run(server, project, home, permission_mode="bypassPermissions")
        assert not (outside / "escaped").exists()


@pytest.mark.parametrize(("asked", "child_effort"), [(None, "high"), ("max", "max")])
def test_a_subagent_works_at_the_effort_its_call_or_its_type_asks(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    asked: str | None,
    child_effort: str,
) -> None:
    checker = {"description": "Checks.", "prompt": "You check.", "effort": "high"}
    call: dict[str, Any] = {"description": "check", "prompt": "check it",
                            "subagent_type": "checker", "run_in_background": False}  # fmt: skip
    if asked is not None:
        call["effort"] = asked
    server.enqueue(reply(ToolCall("toolu_1", AGENT, call)), reply("fine"), reply("done"))
    run(
        server, project, home, effort="low", extra_args={"agents": json.dumps({"checker": checker})}
    )

    efforts = [request.body["output_config"] for request in server.requests]
    assert efforts == [{"effort": "low"}, {"effort": child_effort}, {"effort": "low"}]


ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "files": {"type": "array"}},
    "required": ["count"],
}


def test_an_output_format_answer_comes_back_as_structured_output(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", STRUCTURED_OUTPUT, {"files": []})),  # no count: refused
        reply(ToolCall("toolu_2", STRUCTURED_OUTPUT, {"count": 2, "files": ["a", "b"]})),
        reply("Two files."),
    )
    output_format = {"type": "json_schema", "schema": ANSWER_SCHEMA}
    done = run(server, project, home, output_format=output_format)

    first = server.requests[0].body
    assert isinstance(first, dict)
    (offered,) = [tool for tool in first["tools"] if tool["name"] == STRUCTURED_OUTPUT]
    assert offered["input_schema"] == ANSWER_SCHEMA
    (refused,) = tool_results(server.requests[1])
    assert refused["is_error"] is True and "count" in result_text(refused)
    result = parse_message(done.json_lines()[-1])  # as the SDK reads it
    assert isinstance(result, ResultMessage)
    assert (result.result, result.structured_output) == (
        "Two files.",
        {"count": 2, "files": ["a", "b"]},
    )


def test_a_model_that_stops_without_its_answer_is_sent_back_to_give_it(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(
        reply("There are 3."),
        reply(ToolCall("toolu_1", STRUCTURED_OUTPUT, {"count": 3})),
        reply("Done."),
    )
    done = run(
        server, project, home, output_format={"type": "json_schema", "schema": ANSWER_SCHEMA}
    )

    assert STRUCTURED_OUTPUT in json.dumps(server.requests[1].messages[-1])
    assert done.json_lines()[-1]["structured_output"] == {"count": 3}


def test_a_schema_that_is_no_json_schema_stops_the_run_in_one_line(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    done = stayer("-p", "hi", "--json-schema", '{"type": "object", "required": 3}',
                  cwd=project, env={**server.env(), **home})  # fmt: skip
    assert done.status == 2
    assert done.stderr.startswith("stayer: --json-schema: not a valid JSON Schema (")
    assert len(done.stderr.splitlines()) == 1 and server.requests == []


@pytest.mark.parametrize(
    ("given", "offered"),
    [
        ({"tools": []}, set()),
        ({"tools": ["Read", "Grep"]}, {"Read", "Grep"}),
        ({"tools": {"type": "preset", "preset": "claude_code"}}, None),  # every built-in
        ({"tools": ["Read", "Grep"], "disallowed_tools": ["Grep"]}, {"Read"}),
    ],
)
def test_the_tools_offered_are_those_the_sdk_names(
    server: FakeModelServer,
    project: Path,
    home: dict[str, str],
    given: dict[str, Any],
    offered: set[str] | None,
) -> None:
    server.enqueue(reply("ok"))
    run(server, project, home, **given)

    body = server.requests[0].body
    assert isinstance(body, dict)
    names = {tool["name"] for tool in body.get("tools", [])}
    if offered is None:
        assert {"Bash", "Read", "Edit", "Write", AGENT} <= names
    else:
        assert names == offered


def test_allowed_tools_let_a_call_run_without_asking_and_others_are_denied(
    server: FakeModelServer, project: Path, home: dict[str, str]
) -> None:
    server.enqueue(
        reply(ToolCall("toolu_1", "Bash", {"command": "echo allowed"})),
        reply(ToolCall("toolu_2", "Bash", {"command": "touch made"})),
        reply("done"),
    )
    run(server, project, home, allowed_tools=["Bash(echo:*)"])

    (allowed,) = tool_results(server.requests[1])
    (denied,) = tool_results(server.requests[2])
    assert result_text(allowed) == "allowed"
    assert denied["is_error"] is True and not (project / "made").exists()


def test_betas_session_id_and_added_directories_take_effect(
    server: FakeModelServer, project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    write = {"file_path": str(shared / "note.txt"), "content": "kept\n"}
    server.enqueue(reply(ToolCall("toolu_1", "Write", write)), reply("written"))
    session = "0b5e3c2a-7d4f-4e8a-9c1b-2f6d8e0a4b7c"
    done = run(
        server, project, home, betas=["context-management-2025-06-27"], session_id=session,
        add_dirs=[shared], permission_mode="acceptEdits",
    )  # fmt: skip

    first = server.requests[0]
    assert "context-management-2025-06-27" in first.headers["anthropic-beta"].split(",")
    assert done.json_lines()[-1]["session_id"] == session
    assert (shared / "note.txt").read_text() == "kept\n"  # acceptEdits reaches the added folder
