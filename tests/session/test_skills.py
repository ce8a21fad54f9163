"""Skills the model loads through the Skill tool: rendered with their arguments, their `!`
commands judged as the model's own Bash calls (nobody asked), their body read after the
round's results once, their rules granted for the turn only, `Skill(name)` rules applied."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import stayer
from stayer.context.compact import SUMMARY_INTRO
from stayer.events import Event, ToolCallFinished
from stayer.loop.reattach import SKILL_INTRO
from stayer.messages import TextBlock, ToolResultBlock, UserMessage, history_problems
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.skill_host import usage_path
from tests.session.hook_kit import hook, kit
from tests.session.skill_kit import options, skill, submit, with_skills


def results(events: Sequence[Event]) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for event in events:
        if isinstance(event, ToolCallFinished):
            first = event.result.content[0]
            found.append(
                (event.name, event.status, first.text if isinstance(first, TextBlock) else "")
            )
    return found


def touch(name: str, id: str) -> Reply:
    return tool_call("Bash", {"command": f"touch {name}"}, id=id)


def user_texts(message: object) -> list[str]:
    assert isinstance(message, UserMessage)
    return [block.text for block in message.content if isinstance(block, TextBlock)]


async def test_a_loaded_skill_is_read_after_the_result_with_its_arguments_and_commands(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider(
        [tool_call("Skill", {"skill": "greet", "args": "Ada 'Lovelace King'"}, id="s1"), text("hi")]
    )
    body = "Greet $0 ($1), all: $ARGUMENTS in ${CLAUDE_SKILL_DIR}.\nHost: !`echo from-shell`"
    given = options(tmp_path, model, allowed_tools=["Bash(echo:*)"])
    async with stayer.Session(given) as session:
        greet = skill("greet", body, tmp_path / "skills")
        events = await submit(with_skills(session, greet))
    assert results(events) == [("Skill", "completed", "Loaded skill greet")]
    after = model.requests[1].messages[-1]
    assert isinstance(after, UserMessage) and isinstance(after.content[0], ToolResultBlock)
    assert user_texts(after) == [
        f"Base directory for this skill: {greet.base_dir}\n\n"
        f"Greet Ada (Lovelace King), all: Ada 'Lovelace King' in {greet.base_dir}.\n"
        "Host: from-shell"
    ]
    counts = json.loads(usage_path(given.env or {}).read_text())
    assert counts == {"greet": 1}


async def test_loading_the_same_skill_again_adds_a_note_not_a_copy(tmp_path: Path) -> None:
    call = tool_call("Skill", {"skill": "tidy"}, id="s1")
    again = tool_call("Skill", {"skill": "tidy"}, id="s2")
    model = ScriptedProvider([call, again, text("done")])
    async with stayer.Session(options(tmp_path, model)) as session:
        events = await submit(with_skills(session, skill("tidy", "Tidy up.", tmp_path / "sk")))
    assert [r[2] for r in results(events)] == [
        "Loaded skill tidy",
        "Skill tidy is already loaded above, with the same content: follow its instructions there",
    ]
    assert user_texts(model.requests[2].messages[-1]) == []


async def test_a_command_the_policy_would_not_allow_aborts_the_skill_and_runs_nothing(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([tool_call("Skill", {"skill": "deploy"}, id="s1"), text("ok")])
    body = "First !`touch made` then !`echo never`"
    async with stayer.Session(options(tmp_path, model)) as session:
        work = session.setup.params.tool_context.cwd
        events = await submit(with_skills(session, skill("deploy", body, tmp_path / "sk")))
    [(name, status, said)] = results(events)
    assert (name, status) == ("Skill", "failed")
    assert said.startswith("skill deploy: `touch made` was not run: ")
    assert said.endswith(
        '; allow it with --allowedTools "Bash(touch made)" or remove it from the skill'
    )
    assert "\n" not in said
    assert not (work / "made").exists()
    assert user_texts(model.requests[1].messages[-1]) == []


async def test_a_failing_command_aborts_but_a_search_finding_nothing_does_not(
    tmp_path: Path,
) -> None:
    calls = [
        tool_call("Skill", {"skill": "bad"}, id="s1"),
        tool_call("Skill", {"skill": "find"}, id="s2"),
    ]
    model = ScriptedProvider([*calls, text("ok")])
    given = options(tmp_path, model, allowed_tools=["Bash(false)", "Bash(grep:*)"])
    async with stayer.Session(given) as session:
        bad = skill("bad", "!`false`", tmp_path / "sk")
        find = skill("find", "Found: !`grep nothing-here /dev/null`.", tmp_path / "sk")
        events = await submit(with_skills(session, bad, find))
    assert results(events) == [
        ("Skill", "failed", "skill bad: `false` failed with exit code 1"),
        ("Skill", "completed", "Loaded skill find"),
    ]
    assert user_texts(model.requests[2].messages[-1])[0].endswith("Found: .")


async def test_an_unknown_skill_names_close_ones_and_a_user_only_one_is_refused(
    tmp_path: Path,
) -> None:
    calls = [
        tool_call("Skill", {"skill": "gret"}, id="s1"),
        tool_call("Skill", {"skill": "mine"}, id="s2"),
    ]
    model = ScriptedProvider([*calls, text("ok")])
    async with stayer.Session(options(tmp_path, model)) as session:
        greet = skill("greet", "Hi.", tmp_path / "sk")
        mine = skill("mine", "Mine.", tmp_path / "sk", disable_model_invocation=True)
        events = await submit(with_skills(session, greet, mine))
    assert results(events) == [
        ("Skill", "failed", "Unknown skill: gret; did you mean greet? (skills: greet)"),
        (
            "Skill",
            "failed",
            "skill mine may only be run by the user (/mine); it cannot be loaded with the "
            "Skill tool",
        ),
    ]


async def test_allowed_tools_hold_for_the_turn_that_loads_the_skill_only(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            tool_call("Skill", {"skill": "maker"}, id="s1"),
            touch("one", "t1"),
            text("made"),
            touch("two", "t2"),
            text("could not"),
        ]
    )
    async with stayer.Session(options(tmp_path, model)) as session:
        work = session.setup.params.tool_context.cwd
        maker = skill("maker", "Make files.", tmp_path / "sk", allowed_tools=("Bash(touch:*)",))
        with_skills(session, maker)
        first = await submit(session)
        second = await submit(session, "again")
        assert history_problems(session.history) == []
    assert [r[:2] for r in results(first)] == [("Skill", "completed"), ("Bash", "completed")]
    assert [r[:2] for r in results(second)] == [("Bash", "denied")]
    assert (work / "one").exists() and not (work / "two").exists()


async def test_a_granted_rule_never_beats_a_deny_rule(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [
            tool_call("Skill", {"skill": "maker"}, id="s1"),
            tool_call("Bash", {"command": "touch one"}, id="t1"),
            text("no"),
        ]
    )
    given = options(tmp_path, model, disallowed_tools=["Bash(touch:*)"])
    async with stayer.Session(given) as session:
        maker = skill("maker", "Make.", tmp_path / "sk", allowed_tools=("Bash(touch:*)",))
        events = await submit(with_skills(session, maker))
        assert "Bash(touch:*)" in [entry.rule for entry in session.rules().deny]
    assert [r[:2] for r in results(events)] == [("Skill", "completed"), ("Bash", "denied")]


async def test_skill_rules_deny_and_allow_by_name(tmp_path: Path) -> None:
    calls = [
        tool_call("Skill", {"skill": "greet"}, id="s1"),
        tool_call("Skill", {"skill": "tidy"}, id="s2"),
    ]
    model = ScriptedProvider([*calls, text("ok")])
    given = options(
        tmp_path, model, allowed_tools=["Skill(greet)"], disallowed_tools=["Skill(tidy)"]
    )
    async with stayer.Session(given) as session:
        skills = skill("greet", "Hi.", tmp_path / "sk"), skill("tidy", "Tidy.", tmp_path / "sk")
        events = await submit(with_skills(session, *skills))
    assert [r[:2] for r in results(events)] == [("Skill", "completed"), ("Skill", "denied")]


async def test_a_forked_skill_asks_for_a_subagent_with_its_body(tmp_path: Path) -> None:
    model = ScriptedProvider([])
    async with stayer.Session(options(tmp_path, model)) as session:
        forked = skill(
            "research",
            "Look into $ARGUMENTS.",
            tmp_path / "sk",
            context="fork",
            agent="Explore",
            model="haiku",
        )
        host = with_skills(session, forked).setup.params.tool_context.skills
        assert host is not None
        loaded = await host.load("research", "caching", "toolu_1")
    assert loaded.fork is not None
    assert (loaded.fork.prompt, loaded.fork.description, loaded.fork.subagent_type) == (
        "Look into caching.",
        "skill research",
        "Explore",
    )
    assert (loaded.fork.model, loaded.fork.tool_use_id, loaded.followup) == ("haiku", "toolu_1", "")


async def test_unreadable_usage_counts_are_taken_as_none(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Skill", {"skill": "greet"}, id="s1"), text("ok")])
    given = options(tmp_path, model)
    path = usage_path(given.env or {})
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    async with stayer.Session(given) as session:
        events = await submit(with_skills(session, skill("greet", "Hi.", tmp_path / "sk")))
    assert [r[:2] for r in results(events)] == [("Skill", "completed")]
    assert json.loads(path.read_text()) == {"greet": 1}


async def test_deny_rules_and_protected_paths_judge_a_skills_commands(tmp_path: Path) -> None:
    calls = [
        tool_call("Skill", {"skill": "peek"}, id="s1"),
        tool_call("Skill", {"skill": "hook"}, id="s2"),
    ]
    model = ScriptedProvider([*calls, text("ok")])
    given = options(
        tmp_path,
        model,
        allowed_tools=["Bash(echo:*)", "Bash(cat:*)"],
        disallowed_tools=["Read(secret.txt)"],
    )
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        (work / "secret.txt").write_text("hidden")
        peek = skill("peek", "!`cat secret.txt`", tmp_path / "sk")
        hook = skill("hook", "!`echo x > .git/hooks/post-checkout`", tmp_path / "sk")
        events = await submit(with_skills(session, peek, hook))
    said = [r[2] for r in results(events)]
    assert [r[1] for r in results(events)] == ["failed", "failed"]
    assert said[0].startswith("skill peek: `cat secret.txt` was not run: Permission to read ")
    assert said[1].startswith("skill hook: `echo x > .git/hooks/post-checkout` was not run: ")
    assert not (work / ".git").exists()


async def test_a_skill_loaded_before_a_summary_is_shown_again_after_it(tmp_path: Path) -> None:
    model = ScriptedProvider(
        [tool_call("Skill", {"skill": "tidy"}, id="s1"), text("done"), text("SUMMARY"), text("ok")]
    )
    async with stayer.Session(options(tmp_path, model)) as session:
        tidy = skill("tidy", "Tidy up $ARGUMENTS.", tmp_path / "sk")
        await submit(with_skills(session, tidy))
        [_ async for _ in session.compact()]
        await submit(session, "next")
    first = model.requests[3].messages[0]
    [listed] = [text for text in user_texts(model.requests[0].messages[0]) if text != "go"]
    assert user_texts(first) == [
        SUMMARY_INTRO + "SUMMARY",
        SKILL_INTRO.format(name="tidy")
        + f"Base directory for this skill: {tidy.base_dir}\n\nTidy up .",
        listed,
        "next",
    ]


async def test_after_clear_a_skill_loads_afresh(tmp_path: Path) -> None:
    call = tool_call("Skill", {"skill": "tidy"}, id="s1")
    model = ScriptedProvider([call, text("done"), call, text("again")])
    async with stayer.Session(options(tmp_path, model)) as session:
        with_skills(session, skill("tidy", "Tidy.", tmp_path / "sk"))
        first = await submit(session)
        await session.clear()
        second = await submit(session)
    assert [r[2] for r in results(first) + results(second)] == ["Loaded skill tidy"] * 2


async def test_a_pretooluse_hook_judges_a_skills_commands_too(tmp_path: Path) -> None:
    hooks = kit(tmp_path)
    hooks.install({"PreToolUse": [hook(hooks.command("block", "no shipping today"), "Bash")]})
    model = ScriptedProvider([tool_call("Skill", {"skill": "ship"}, id="s1"), text("ok")])
    given = QueryOptions(
        cwd=hooks.project,
        env=hooks.env,
        provider=model,
        persist_session=False,
        allowed_tools=["Bash(echo:*)"],
    )
    async with stayer.Session(given) as session:
        events = await submit(with_skills(session, skill("ship", "!`echo go`", tmp_path / "sk")))
    [(_, status, said)] = results(events)
    assert status == "failed"
    assert said.startswith("skill ship: `echo go` was not run: ")
    assert "no shipping today" in said
    [seen] = hooks.of("PreToolUse")
    assert seen["tool_input"] == {"command": "echo go"}


async def test_a_skills_own_allow_rules_never_let_its_commands_run(tmp_path: Path) -> None:
    model = ScriptedProvider([tool_call("Skill", {"skill": "sneak"}, id="s1"), text("ok")])
    async with stayer.Session(options(tmp_path, model)) as session:
        work = session.setup.params.tool_context.cwd
        sneak = skill("sneak", "!`touch owned`", tmp_path / "sk", allowed_tools=("Bash",))
        events = await submit(with_skills(session, sneak))
        assert [entry.rule for entry in session.rules().allow] == []  # nothing granted either
    assert [r[1] for r in results(events)] == ["failed"]
    assert not (work / "owned").exists()


async def test_disallowed_tools_are_denied_for_the_turn_and_bad_rules_stop_it_first(
    tmp_path: Path,
) -> None:
    steps = [
        tool_call("Skill", {"skill": "careful"}, id="s1"),
        tool_call("Bash", {"command": "touch one"}, id="t1"),
        text("stopped"),
        tool_call("Skill", {"skill": "broken"}, id="s2"),
        tool_call("Bash", {"command": "touch two"}, id="t2"),
        text("done"),
    ]
    model = ScriptedProvider(steps)
    given = options(tmp_path, model, allowed_tools=["Bash(touch:*)"])
    async with stayer.Session(given) as session:
        work = session.setup.params.tool_context.cwd
        careful = skill("careful", "Careful.", tmp_path / "sk", disallowed_tools=("Bash",))
        broken = skill("broken", "!`touch three`", tmp_path / "sk", allowed_tools=("Bash(",))
        with_skills(session, careful, broken)
        first = await submit(session)
        second = await submit(session, "again")
    assert [r[:2] for r in results(first)] == [("Skill", "completed"), ("Bash", "denied")]
    [(_, status, said), bash] = results(second)
    assert (status, bash[:2]) == ("failed", ("Bash", "completed"))
    assert said.startswith("skill broken: bad permission rule") and said.endswith(
        "; fix its front matter"
    )
    assert [p.name for p in sorted(work.iterdir())] == ["two"]
