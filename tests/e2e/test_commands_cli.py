"""`stayer -p "/name args"` through the real CLI against the fake model server: a command file
becomes Claude Code's two-block user message, its `!` command run first; a `!` command the
policy would not allow stops the run in one line before any request leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from stayer.agents.catalog import load_catalog
from tests.e2e.cli import stayer
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply

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


def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(GREET)
    (commands / "deploy.md").write_text(DEPLOY)
    catalog = load_catalog(work, project_root=work, env={"HOME": str(tmp_path / "home")})
    if catalog.skill("greet") is None:
        pytest.skip("command files are read once stayer.agents reads them (the files' helper)")
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
    texts = [block["text"] for block in last["content"] if block["type"] == "text"]
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
