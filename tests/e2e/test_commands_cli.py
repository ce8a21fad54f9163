"""`stayer -p "/name args"` through the real CLI against the fake model server: a command file
becomes Claude Code's two-block user message, its `!` command run first; a `!` command the
policy would not allow stops the run in one line before any request leaves."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import ToolCall, reply

GREET = """---
description: Greet someone by name
argument-hint: NAME
---
Greet $ARGUMENTS warmly. Today is !`echo Tuesday`.
"""

DEPLOY = """---
description: Ship it
---
Shipping: !`touch shipped`
"""


HAIKU = """---
name: haiku
description: Write a haiku about a topic
---
Write a haiku about $ARGUMENTS. Files here: !`ls`
"""


def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(GREET)
    (commands / "deploy.md").write_text(DEPLOY)
    skill = work / ".claude" / "skills" / "haiku"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(HAIKU)
    return work


def test_a_command_with_arguments_is_sent_as_its_name_and_its_rendered_body(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = project(tmp_path)
    server.enqueue(reply("Hello, Ada!"))
    env = {**server.env(), "HOME": str(tmp_path / "home")}
    done = stayer("-p", "/greet Ada", "--allowedTools", "Bash(echo:*)", cwd=work, env=env)

    assert done.status == 0, done.stderr
    assert done.stdout.strip() == "Hello, Ada!"
    [request] = server.requests
    last = request.messages[-1]
    assert isinstance(last, dict) and last["role"] == "user"
    *texts, listing = [block["text"] for block in last["content"] if block["type"] == "text"]
    assert listing.startswith("<system-reminder>") and "- greet: Greet someone by name" in listing
    assert texts == [
        "<command-message>greet is running…</command-message>\n"
        "<command-name>/greet</command-name>\n<command-args>Ada</command-args>",
        "Greet Ada warmly. Today is Tuesday.",
    ]


def test_a_command_the_policy_would_not_allow_stops_before_any_request(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = project(tmp_path)
    env = {**server.env(), "HOME": str(tmp_path / "home")}
    done = stayer("-p", "/deploy", cwd=work, env=env)

    assert done.status != 0
    assert server.requests == []
    assert not (work / "shipped").exists()
    assert done.stderr.strip().splitlines() == [
        "stayer: skill deploy: `touch shipped` was not run: it would need approval, and nobody "
        'is asked about a skill\'s commands; allow it with --allowedTools "Bash(touch shipped)" '
        "or remove it from the skill"
    ]


def test_the_model_loads_a_skill_and_reads_it_after_the_calls_result(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = project(tmp_path)
    server.enqueue(
        reply(ToolCall("toolu_1", "Skill", {"skill": "haiku", "args": "rain"})),
        reply("Soft rain on the roof."),
    )
    env = {**server.env(), "HOME": str(tmp_path / "home")}
    done = stayer("-p", "write me a poem", cwd=work, env=env)

    assert done.status == 0, done.stderr
    first, second = server.requests
    assert "- haiku: Write a haiku about a topic" in first.messages[0]["content"][-1]["text"]
    result, followup = second.messages[-1]["content"]
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert followup.pop("cache_control", None) in (None, {"type": "ephemeral"})
    assert followup == {
        "type": "text",
        "text": f"Base directory for this skill: {work / '.claude' / 'skills' / 'haiku'}\n\n"
        "Write a haiku about rain. Files here: ",
    }


def test_a_prompt_hooks_refusal_comes_before_a_commands_shell_commands(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = project(tmp_path)
    refuse = {"type": "command", "command": "echo 'no deploys today' >&2; exit 2"}
    hooks = {"UserPromptSubmit": [{"matcher": "", "hooks": [refuse]}]}
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    env = {**server.env(), "HOME": str(tmp_path / "home")}
    done = stayer("-p", "/deploy", "--allowedTools", "Bash(touch:*)", cwd=work, env=env)

    assert "no deploys today" in done.stdout + done.stderr
    assert server.requests == []
    assert not (work / "shipped").exists()
