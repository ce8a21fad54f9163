"""`/name args` prompts: a command the user may invoke becomes Claude Code's two-block user
message (its name and arguments, then its rendered body); its `!` commands are judged by the
policy before anything is sent; a `/word` that is no command goes as typed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

import stayer
from stayer.agents.model import Skill
from stayer.context.compact import SUMMARY_INTRO
from stayer.errors import ConfigError
from stayer.events import Finished, Terminal, ToolCallFinished
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.commands import command_header
from stayer.session.listings import is_listing
from tests.session.skill_kit import options, skill, submit, with_skills


def sent(model: ScriptedProvider, request: int = 0) -> list[str]:
    last = model.requests[request].messages[-1]
    assert isinstance(last, UserMessage)
    return [block.text for block in last.content if isinstance(block, TextBlock)]


def command(name: str, body: str, folder: Path, **more: object) -> Skill:
    return skill(name, body, folder, kind="command", **more)


async def test_a_command_with_arguments_is_sent_as_its_name_then_its_body(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("Hello, Ada.")])
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(echo:*)"])
    async with stayer.Session(given) as session:
        greet = command("greet", "Greet $ARGUMENTS warmly. Today: !`echo Tuesday`", tmp_path)
        await submit(with_skills(session, greet), "/greet Ada")
    assert sent(model) == [
        command_header("greet", "Ada"),
        "Greet Ada warmly. Today: Tuesday",
    ]
    assert command_header("greet", "Ada") == (
        "<command-message>greet is running…</command-message>\n"
        "<command-name>/greet</command-name>\n<command-args>Ada</command-args>"
    )


async def test_a_skill_run_as_a_command_names_its_folder(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        tidy = skill("tidy", "Tidy $0.", tmp_path)
        await submit(with_skills(session, tidy), "/tidy src")
    assert sent(model) == [
        command_header("tidy", "src"),
        f"Base directory for this skill: {tidy.base_dir}\n\nTidy src.",
    ]


async def test_a_word_that_is_no_command_is_sent_as_typed(tmp_path: Path) -> None:
    model = ScriptedProvider([text("ok"), text("ok")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        hidden = command("hidden", "Secret.", tmp_path, user_invocable=False)
        with_skills(session, hidden, command("greet", "Hi.", tmp_path))
        await submit(session, "/tmp/x is a file")
        await submit(session, "/hidden now")
    assert sent(model, 0) == ["/tmp/x is a file"]
    assert sent(model, 1) == ["/hidden now"]


async def test_a_refused_command_raises_one_line_and_sends_nothing(tmp_path: Path) -> None:
    model = ScriptedProvider([text("later")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        work = session.setup.params.tool_context.cwd
        deploy = command("deploy", "Go: !`touch shipped`", tmp_path)
        with_skills(session, deploy)
        with pytest.raises(ConfigError) as raised:
            await submit(session, "/deploy now")
        assert session.history == ()
        await submit(session, "plain")  # the session goes on
    assert str(raised.value) == (
        "skill deploy: `touch shipped` was not run: it would need approval, and nobody is "
        'asked about a skill\'s commands; allow it with --allowedTools "Bash(touch shipped)" '
        "or remove it from the skill"
    )
    assert not (work / "shipped").exists()
    assert len(model.requests) == 1 and sent(model) == ["plain"]


async def test_a_commands_allowed_tools_hold_for_its_turn_only(tmp_path: Path) -> None:
    touch = [tool_call("Bash", {"command": f"touch {n}"}, id=f"t{n}") for n in ("one", "two")]
    model = ScriptedProvider([touch[0], text("made"), touch[1], text("not")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        work = session.setup.params.tool_context.cwd
        maker = command("make", "Make it.", tmp_path, allowed_tools=("Bash(touch:*)",))
        with_skills(session, maker)
        first = await submit(session, "/make")
        second = await submit(session, "more")
    statuses = [e.status for e in (*first, *second) if isinstance(e, ToolCallFinished)]
    assert statuses == ["completed", "denied"]
    assert (work / "one").exists() and not (work / "two").exists()


async def test_a_commands_model_answers_its_turn_only(tmp_path: Path) -> None:
    model = ScriptedProvider([text("quick"), text("usual")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        usual = session.setup.params.model
        with_skills(session, command("quick", "Be quick.", tmp_path, model="fast-one"))
        await submit(session, "/quick")
        await submit(session, "and now")
    assert [request.model for request in model.requests] == ["fast-one", usual]


async def test_a_subagents_prompt_never_runs_a_command(tmp_path: Path) -> None:
    model = ScriptedProvider([text("as typed")])
    async with stayer.Session(options(tmp_path, model, tools=["Bash"])) as session:
        with_skills(session, command("deploy", "Go: !`touch shipped`", tmp_path))
        child = session.derive()
        async with child:
            await submit(child, "/deploy")
    assert sent(model) == ["/deploy"]


async def test_interrupting_a_commands_shell_command_sends_nothing(tmp_path: Path) -> None:
    model = ScriptedProvider([])
    given = options(
        tmp_path, model, tools=["Bash"], allowed_tools=["Bash(touch:*)", "Bash(sleep:*)"]
    )
    async with stayer.Session(given) as session:
        marker = session.setup.params.tool_context.cwd / "started"
        with_skills(session, command("slow", "!`touch started && sleep 60`", tmp_path))
        running = asyncio.create_task(submit(session, "/slow"))
        while not marker.exists():  # the command says it has started
            await asyncio.sleep(0.01)
            assert not running.done()
        began = time.monotonic()
        session.interrupt()
        with pytest.raises(ConfigError, match="interrupted while its ! commands ran"):
            await running
        assert time.monotonic() - began < 5
        assert session.history == ()
    assert model.requests == []


async def test_a_prompt_hook_judges_the_command_as_typed_before_its_shell_commands_run(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    seen = tmp_path / "seen.json"
    refuse = f"cat > {seen}; echo 'not today' >&2; exit 2"
    hooks = {
        "UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command", "command": refuse}]}]
    }
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}))
    model = ScriptedProvider([text("never")])
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(touch:*)"])
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        with_skills(session, command("go", "Ran: !`touch ran`", tmp_path))
        events = await submit(session, "/go now")
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.terminal is not Terminal.COMPLETED
    assert json.loads(seen.read_text())["prompt"] == "/go now"
    assert not (work / "ran").exists()
    assert model.requests == []


async def test_a_commands_body_is_not_shown_again_after_a_summary(tmp_path: Path) -> None:
    model = ScriptedProvider([text("hi Ada"), text("SUMMARY"), text("ok")])
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(echo:*)"])
    async with stayer.Session(given) as session:
        with_skills(session, command("greet", "Greet $ARGUMENTS. Now: !`echo 10:00`", tmp_path))
        await submit(session, "/greet Ada")
        [_ async for _ in session.compact()]
        await submit(session, "next")
    first = model.requests[2].messages[0]
    assert isinstance(first, UserMessage)
    shown = [b.text for b in first.content if isinstance(b, TextBlock) and not is_listing(b.text)]
    assert shown == [SUMMARY_INTRO + "SUMMARY", "next"]


async def test_session_start_hooks_run_before_a_first_commands_shell_commands(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    work = tmp_path / "work"
    started = {"type": "command", "command": f"touch {work / 'began'}"}
    hooks = {"SessionStart": [{"matcher": "", "hooks": [started]}]}
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}))
    model = ScriptedProvider([text("ok")])
    given = options(tmp_path, model, tools=["Bash"], allowed_tools=["Bash(ls:*)"])
    async with stayer.Session(given) as session:
        with_skills(session, command("check", "Found: !`ls began`", tmp_path))
        await submit(session, "/check")
    assert sent(model) == [command_header("check", ""), "Found: began"]


async def test_a_command_the_model_loads_is_not_shown_again_after_a_summary(
    tmp_path: Path,
) -> None:
    load = tool_call("Skill", {"skill": "greet"}, id="s1")
    model = ScriptedProvider([load, text("done"), text("SUMMARY"), text("ok")])
    async with stayer.Session(options(tmp_path, model)) as session:
        with_skills(session, command("greet", "Greet everyone.", tmp_path))
        loaded = await submit(session, "go")
        [_ async for _ in session.compact()]
        await submit(session, "next")
    assert [e.status for e in loaded if isinstance(e, ToolCallFinished)] == ["completed"]
    first = model.requests[3].messages[0]
    assert isinstance(first, UserMessage)
    shown = [b.text for b in first.content if isinstance(b, TextBlock) and not is_listing(b.text)]
    assert shown == [SUMMARY_INTRO + "SUMMARY", "next"]
