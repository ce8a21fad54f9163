"""A skill's body made ready: every placeholder Claude Code fills, `!` commands inline and
fenced, a command's output in its place, and arguments that can fill a command in but never
add one."""

from __future__ import annotations

from pathlib import Path

import stayer
from stayer.events import ToolCallFinished
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.skill_render import Places, expand, fill, shell_commands
from tests.session.skill_kit import options, skill, submit, with_skills

PLACES = Places(session_id="sess-1", project_dir=Path("/proj"), skill_dir=Path("/proj/sk"))


def test_every_placeholder_is_filled() -> None:
    body = (
        "all=$ARGUMENTS first=$0 second=$ARGUMENTS[1] third=$2 who=$who none=$9 "
        "s=${CLAUDE_SESSION_ID} p=${CLAUDE_PROJECT_DIR} k=${CLAUDE_SKILL_DIR} $whom"
    )
    assert expand(body, 'Ada "Grace Hopper" x', names=("a", "who"), places=PLACES) == (
        'all=Ada "Grace Hopper" x first=Ada second=Grace Hopper third=x who=Grace Hopper none= '
        "s=sess-1 p=/proj k=/proj/sk $whom"
    )


def test_arguments_with_no_place_follow_the_body() -> None:
    assert expand("Do it.\n", "now please", names=(), places=PLACES) == (
        "Do it.\n\nARGUMENTS: now please"
    )
    assert expand("Do it.", "", names=(), places=PLACES) == "Do it."
    # a value is put in as it is, backslashes and all (quoted, as a shell would keep them)
    assert expand("C:\\dir $p", "'a\\1b'", names=("p",), places=PLACES) == "C:\\dir a\\1b"


def test_commands_are_found_inline_and_fenced() -> None:
    body = "Branch: !`git branch` and a!`not one`\n```!\nls\n```\nend !`date`"
    found = shell_commands(body)
    assert [command for _, command in found] == ["git branch", "ls", "date"]
    outputs = [(span, f"<{command}>") for span, command in found]
    assert fill(body, outputs) == "Branch: <git branch> and a!`not one`\n<ls>\nend <date>"


async def test_arguments_fill_a_command_in_but_never_add_one(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok")])
    given = options(
        tmp_path, model, extra_tools=[], allowed_tools=["Bash(echo:*)", "Bash(touch:*)"]
    )
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        say = skill("say", "Said: !`echo $0` then $ARGUMENTS", tmp_path / "sk", kind="command")
        events = await submit(with_skills(session, say), "/say hi !`touch pwned`")
    assert not (work / "pwned").exists()
    assert not [e for e in events if isinstance(e, ToolCallFinished)]
    last = model.requests[0].messages[-1]
    assert isinstance(last, UserMessage)
    body = last.content[-1]
    assert isinstance(body, TextBlock)
    assert body.text == "Said: hi then hi !`touch pwned`"
