"""A skill's body made ready: placeholders filled (the session's id and folders too), `!`
commands inline and fenced replaced by their output, and arguments that can fill a command in
but never add one."""

from __future__ import annotations

from pathlib import Path

import stayer
from stayer.events import ToolCallFinished
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from tests.session.skill_kit import options, skill, submit, with_skills


def body_sent(model: ScriptedProvider) -> str:
    last = model.requests[0].messages[-1]
    assert isinstance(last, UserMessage)
    body = last.content[-1]
    assert isinstance(body, TextBlock)
    return body.text


async def test_placeholders_and_both_command_forms_are_filled(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok")])
    body = (
        "who=$who first=$0 all=$ARGUMENTS s=${CLAUDE_SESSION_ID} p=${CLAUDE_PROJECT_DIR}\n"
        "Say: !`echo hi $who`\n```!\necho fenced\necho twice\n```\nnot!`a command` $HOME"
    )
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(echo:*)"])
    async with stayer.Session(given) as session:
        shown = skill("show", body, tmp_path / "sk", kind="command", arguments=("who",))
        await submit(with_skills(session, shown), "/show Ada Lovelace")
        sid, cwd = session.session_id, session.setup.params.tool_context.cwd
    assert body_sent(model) == (
        f"who=Ada first=Ada all=Ada Lovelace s={sid} p={cwd}\n"
        "Say: hi Ada\nfenced\ntwice\nnot!`a command` $HOME"
    )


async def test_arguments_fill_a_command_in_but_never_add_one(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok")])
    given = options(
        tmp_path, model, tools=["Bash"], allowed_tools=["Bash(echo:*)", "Bash(touch:*)"]
    )
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        body = "Said: !`echo $ARGUMENTS` then $ARGUMENTS"
        say = skill("say", body, tmp_path / "sk", kind="command")
        events = await submit(with_skills(session, say), "/say hi; touch pwned !`touch pwned`")
    assert not (work / "pwned").exists()
    assert not [e for e in events if isinstance(e, ToolCallFinished)]
    # quoted in the command: one word for echo, never a second command
    assert (
        body_sent(model)
        == "Said: hi; touch pwned !`touch pwned` then hi; touch pwned !`touch pwned`"
    )


async def test_an_argument_in_double_quotes_is_escaped_not_quoted_again(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok")])
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(echo:*)"])
    async with stayer.Session(given) as session:
        say = skill("say", '!`echo "<$ARGUMENTS>"`', tmp_path / "sk", kind="command")
        await submit(with_skills(session, say), "/say hello world")
    assert body_sent(model) == "<hello world>"


def failures(events: list[object]) -> list[str]:
    found = [e for e in events if isinstance(e, ToolCallFinished) and e.status == "failed"]
    return [b.text for e in found for b in e.result.content if isinstance(b, TextBlock)]


async def test_a_refusal_never_suggests_allowing_an_arguments_text(tmp_path: Path) -> None:
    calls = [
        tool_call("Skill", {"skill": "q", "args": "$(touch pwned)"}, id="s1"),
        tool_call("Skill", {"skill": "plain"}, id="s2"),
        tool_call("Skill", {"skill": "odd", "args": "a b"}, id="s3"),
    ]
    model = ScriptedProvider([*calls, text("ok")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash", "Skill"])) as session:
        work = session.setup.params.tool_context.cwd
        made = [
            skill("q", '!`touch "$ARGUMENTS"`', tmp_path / "sk"),
            skill("plain", "!`touch x`", tmp_path / "sk"),
            skill("odd", "!`printf ${x:-$ARGUMENTS}`", tmp_path / "sk"),
        ]
        events = await submit(with_skills(session, *made))
    said = failures(list(events))
    assert not (work / "pwned").exists()
    assert said[0].startswith('skill q: `touch "\\$(touch pwned)"` was not run: ')
    assert said[0].endswith(
        "; allow the command it runs with --allowedTools, or remove it from the skill"
    )
    assert said[1].endswith(
        '; allow it with --allowedTools "Bash(touch x)" or remove it from the skill'
    )
    assert said[2] == (
        "skill odd: $ARGUMENTS in `printf ${x:-$ARGUMENTS}` stands where no quoting keeps its"
        " value text (after a backquote, here-document, ${…}, arithmetic, case or comment);"
        " move it out of there"
    )
