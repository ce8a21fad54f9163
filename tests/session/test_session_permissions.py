"""Permission modes in a whole session: plan mode and its way out, dontAsk, acceptEdits, bypass,
and the caller's `can_use_tool` answering what the policy asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import stayer
from stayer.events import (
    Event,
    Finished,
    PermissionDenial,
    PermissionRequested,
    PermissionResolved,
    Terminal,
    ToolCallFinished,
)
from stayer.loop.state import ToolCall
from stayer.messages import AssistantMessage, TextBlock, UserMessage
from stayer.permissions import Decision, PermissionPolicy, PermissionState
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.listings import is_listing
from stayer.session.mode_reminder import (
    ModeReminder,
    plan_mode_off,
    plan_mode_on,
    reminder_block,
)
from stayer.session.options import QueryOptions
from stayer.session.setup import prepare

PLAN = "1. Write notes.md.\n2. Say it is done."


class Decider:
    """Answers every request with the next answer, and keeps what it was asked."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequested] = []

    async def __call__(self, request: PermissionRequested) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0)


def options(tmp_path: Path, model: ScriptedProvider, **more: Any) -> QueryOptions:
    env = {"STAYER_CONFIG_DIR": str(tmp_path / "config")}
    return QueryOptions(cwd=tmp_path / "work", provider=model, env=env, **more)


async def submit(session: stayer.Session, prompt: str = "go") -> list[Event]:
    return [event async for event in session.submit(prompt)]


def outcomes(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.name, e.status) for e in events if isinstance(e, ToolCallFinished)]


def result_of(events: list[Event], name: str) -> str:
    return next(e.result.text for e in events if isinstance(e, ToolCallFinished) and e.name == name)


def last(events: list[Event]) -> Finished:
    end = events[-1]
    assert isinstance(end, Finished)
    return end


def write(path: Path, content: str = "notes\n") -> dict[str, object]:
    return {"file_path": str(path), "content": content}


def plan_then_write(work: Path) -> ScriptedProvider:
    return ScriptedProvider(
        [
            tool_call("Write", write(work / "early.md"), id="toolu_early"),
            tool_call("ExitPlanMode", {"plan": PLAN}),
            tool_call("Write", write(work / "notes.md")),
            text("done"),
        ]
    )


async def test_an_accepted_plan_leaves_plan_mode_for_the_mode_before_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    decider = Decider(Decision("allow"))
    model = plan_then_write(work)
    async with stayer.Session(
        options(tmp_path, model, permission_mode="acceptEdits", can_use_tool=decider)
    ) as session:
        session.set_permission_mode("plan")
        events = await submit(session)
        assert session.permission_mode == "acceptEdits"

    assert outcomes(events) == [
        ("Write", "denied"),
        ("ExitPlanMode", "completed"),
        ("Write", "completed"),  # acceptEdits again: no question asked
    ]
    assert "plan mode allows only read-only tools" in result_of(events, "Write")
    assert [(r.name, r.input, r.mode) for r in decider.asked] == [
        ("ExitPlanMode", {"plan": PLAN}, "acceptEdits")
    ]
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [(r.behavior, r.mode) for r in resolved] == [("allow", "acceptEdits")]
    assert not (work / "early.md").exists() and (work / "notes.md").exists()


async def test_the_decider_may_choose_the_mode_an_accepted_plan_goes_to(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    decider = Decider(Decision("allow", mode="acceptEdits"))
    model = plan_then_write(work)
    async with stayer.Session(
        options(tmp_path, model, permission_mode="plan", can_use_tool=decider)
    ) as session:
        events = await submit(session)
        assert session.permission_mode == "acceptEdits"

    assert outcomes(events)[1:] == [("ExitPlanMode", "completed"), ("Write", "completed")]
    assert result_of(events, "ExitPlanMode").startswith("The user accepted your plan")


async def test_a_refused_plan_stays_in_plan_mode(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    decider = Decider(Decision("deny", "add a test first"))
    model = ScriptedProvider(
        [
            tool_call("ExitPlanMode", {"plan": PLAN}),
            tool_call("Write", write(work / "notes.md")),
            text("I will revise the plan."),
        ]
    )
    async with stayer.Session(
        options(tmp_path, model, permission_mode="plan", can_use_tool=decider)
    ) as session:
        events = await submit(session)
        assert session.permission_mode == "plan"

    assert outcomes(events) == [("ExitPlanMode", "denied"), ("Write", "denied")]
    assert "saying: add a test first" in result_of(events, "ExitPlanMode")
    assert len(decider.asked) == 1  # the write is refused by plan mode, never asked about
    assert not (work / "notes.md").exists()


async def test_headless_plan_mode_ends_with_the_plan_as_the_result(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    model = ScriptedProvider([tool_call("ExitPlanMode", {"plan": PLAN}), text(PLAN)])
    async with stayer.Session(options(tmp_path, model, permission_mode="plan")) as session:
        events = await submit(session)
        assert session.permission_mode == "plan"

    said = result_of(events, "ExitPlanMode")
    assert said.startswith("Nobody is here to accept the plan")
    assert "Give the plan, in full, as your final answer and stop" in said
    end = last(events)
    assert (end.terminal, end.result_text) == (Terminal.COMPLETED, PLAN)
    assert end.permission_denials == (
        PermissionDenial("ExitPlanMode", "toolu_exitplanmode", {"plan": PLAN}),
    )
    assert not any(isinstance(e, PermissionRequested) for e in events)


async def test_outside_plan_mode_there_is_no_plan_to_accept(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    decider = Decider()
    model = ScriptedProvider([tool_call("ExitPlanMode", {"plan": PLAN}), text("ok")])
    async with stayer.Session(options(tmp_path, model, can_use_tool=decider)) as session:
        events = await submit(session)

    assert result_of(events, "ExitPlanMode").startswith("There is no plan to accept")
    assert decider.asked == []


async def test_dont_ask_denies_what_would_ask_and_never_calls_the_decider(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    decider = Decider()
    model = ScriptedProvider(
        [
            tool_call("Write", write(work / "notes.md")),
            tool_call("Read", {"file_path": str(work)}),
            text("ok"),
        ]
    )
    async with stayer.Session(
        options(tmp_path, model, permission_mode="dontAsk", can_use_tool=decider)
    ) as session:
        events = await submit(session)

    said = result_of(events, "Write")
    assert said.startswith(
        "Permission to use Write has been denied because the session runs in dontAsk mode"
    )
    assert "--allowedTools Write" in said
    assert outcomes(events)[0] == ("Write", "denied")
    assert outcomes(events)[1][1] != "denied"  # reading needs no approval
    assert decider.asked == [] and not (work / "notes.md").exists()


async def test_accept_edits_writes_unasked_and_asks_about_commands(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    decider = Decider(Decision("allow"))
    model = ScriptedProvider(
        [
            tool_call("Write", write(work / "notes.md")),
            tool_call("Bash", {"command": "touch made.txt"}),
            text("ok"),
        ]
    )
    async with stayer.Session(
        options(tmp_path, model, permission_mode="acceptEdits", can_use_tool=decider)
    ) as session:
        events = await submit(session)

    assert outcomes(events) == [("Write", "completed"), ("Bash", "completed")]
    assert [(r.name, r.suggestions) for r in decider.asked] == [
        ("Bash", ("Bash(touch made.txt)", "Bash"))
    ]
    assert (work / "notes.md").exists() and (work / "made.txt").exists()


async def test_bypass_runs_unasked_but_asks_before_writing_a_protected_path(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    decider = Decider(Decision("deny"))
    model = ScriptedProvider(
        [
            tool_call("Bash", {"command": "touch made.txt"}),
            tool_call("Write", write(work / ".git" / "config", "[core]\n")),
            text("ok"),
        ]
    )
    async with stayer.Session(
        options(tmp_path, model, permission_mode="bypassPermissions", can_use_tool=decider)
    ) as session:
        events = await submit(session)

    assert outcomes(events) == [("Bash", "completed"), ("Write", "denied")]
    (asked,) = decider.asked
    assert asked.suggestions == ("Write(.git/config)",)
    assert ".git/ is protected" in asked.reason
    assert result_of(events, "Write").startswith("The user denied permission to use Write.")
    assert not (work / ".git" / "config").exists()


async def test_headless_default_mode_denies_with_the_rule_to_add(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = ScriptedProvider([tool_call("Bash", {"command": "touch made.txt"}), text("ok")])
    async with stayer.Session(options(tmp_path, model)) as session:
        events = await submit(session)

    said = result_of(events, "Bash")
    assert "nobody is here to approve it in default mode" in said
    assert "--allowedTools Bash" in said
    assert len(last(events).permission_denials) == 1
    assert not (work / "made.txt").exists()


# --- reading outside the working directories, and reaching the web ----------------------------


async def decided(work: Path, tool: str, given: dict[str, Any], **more: Any) -> Decision:
    """What the session's own permission callback decides for one call (headless, no decider)."""
    setup = prepare(
        QueryOptions(cwd=work, provider=ScriptedProvider([]), persist_session=False, **more)
    )
    made = setup.params.tools.tools()[tool]
    call = ToolCall(made, "toolu_1", made.input_model.model_validate(given))
    return await setup.params.can_use_tool(call)


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A project, a folder beside it, and a home directory with a key in it."""
    work, beside, home = tmp_path / "work", tmp_path / "beside", tmp_path / "home"
    (work / "src").mkdir(parents=True)
    (work / "src" / "main.py").write_text("a = 1\n")
    beside.mkdir()
    (beside / "notes.txt").write_text("private\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (work / "src" / "leak").symlink_to(beside / "notes.txt")
    monkeypatch.setenv("HOME", str(home))
    return work, beside, home


@pytest.mark.parametrize(
    ("tool", "given", "rule"),
    [
        ("Read", {"file_path": "{beside}/notes.txt"}, "Read({beside}/notes.txt)"),
        ("Read", {"file_path": "~/.ssh/id_rsa"}, "Read(~/.ssh/id_rsa)"),
        ("Read", {"file_path": "../beside/notes.txt"}, "Read({beside}/notes.txt)"),
        ("Read", {"file_path": "src/leak"}, "Read({beside}/notes.txt)"),  # a symlink out
        ("Grep", {"pattern": "x", "path": "{beside}"}, "Read({beside}/**)"),
        ("Glob", {"pattern": "*", "path": "{beside}"}, "Read({beside}/**)"),
        ("Glob", {"pattern": "{beside}/*.txt"}, "Read({beside}/**)"),
        ("Bash", {"command": "cat ~/.ssh/id_rsa"}, "Read(~/.ssh/id_rsa)"),
        ("Bash", {"command": "cat ../beside/notes.txt"}, "Read({beside}/notes.txt)"),
        ("Bash", {"command": "ls {beside}"}, "Read({beside}/**)"),
        ("Bash", {"command": "head -n 1 < {beside}/notes.txt"}, "Read({beside}/notes.txt)"),
        ("Bash", {"command": "grep -r x ~"}, "Read(~/**)"),
    ],
)
async def test_reading_outside_the_working_directories_asks_naming_the_rule(
    places: tuple[Path, Path, Path], tool: str, given: dict[str, str], rule: str
) -> None:
    work, beside, _ = places
    given = {key: value.replace("{beside}", str(beside)) for key, value in given.items()}
    rule = rule.replace("{beside}", "/" + str(beside))
    decision = await decided(work, tool, given)
    assert decision.behavior == "ask", decision.reason
    assert decision.suggestions == (rule,)
    assert f'--allowedTools "{rule}"' in decision.reason and "--add-dir" in decision.reason
    # that rule lets it through, and so does bypassPermissions
    assert (await decided(work, tool, given, allowed_tools=[rule])).behavior == "allow"
    bypassed = await decided(work, tool, given, permission_mode="bypassPermissions")
    assert bypassed.behavior == "allow"


@pytest.mark.parametrize(
    ("tool", "given"),
    [
        ("Read", {"file_path": "src/main.py"}),
        ("Grep", {"pattern": "x"}),
        ("Glob", {"pattern": "**/*.py"}),
        ("Bash", {"command": "cat src/main.py | wc -l"}),
        ("Bash", {"command": "cat /dev/null; wc -c < /dev/stdin 2>/dev/null"}),
        ("Bash", {"command": "echo ~/.ssh/id_rsa /etc/passwd"}),  # echo opens nothing
    ],
)
async def test_reading_inside_the_working_directories_is_allowed_unasked(
    places: tuple[Path, Path, Path], tool: str, given: dict[str, str]
) -> None:
    decision = await decided(places[0], tool, given)
    assert decision.behavior == "allow", decision.reason


async def test_an_add_dir_makes_a_folder_readable_and_plan_mode_asks_rather_than_refuses(
    places: tuple[Path, Path, Path],
) -> None:
    work, beside, _ = places
    read = {"file_path": str(beside / "notes.txt")}
    assert (await decided(work, "Read", read, add_dirs=[beside])).behavior == "allow"
    planned = await decided(work, "Read", read, permission_mode="plan")
    assert planned.behavior == "ask" and "outside the working directories" in planned.reason


async def test_a_shell_line_whose_reads_cannot_be_told_asks(
    places: tuple[Path, Path, Path],
) -> None:
    decision = await decided(places[0], "Bash", {"command": "find / -name x | xargs cat"})
    assert decision.behavior == "ask"
    assert "which files it reads cannot be told from its words" in decision.reason


async def test_the_sessions_own_folder_is_readable_unasked(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = ScriptedProvider([])
    async with stayer.Session(options(tmp_path, model)) as session:
        context = session.setup.params.tool_context
        assert context.session_dir is not None and not context.session_dir.is_relative_to(work)
        saved = context.session_dir / "tool-results" / "toolu_x.txt"
        saved.parent.mkdir(parents=True)
        saved.write_text("long output\n")
        read = session.setup.params.tools.tools()["Read"]
        call = ToolCall(read, "toolu_2", read.input_model.model_validate({"file_path": str(saved)}))
        decision = await session.setup.params.can_use_tool(call)
    assert decision.behavior == "allow", decision.reason


async def test_a_headless_run_is_refused_an_outside_read_and_told_the_rule(
    places: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    beside = places[1]
    secret = beside / "notes.txt"
    model = ScriptedProvider(
        [tool_call("Bash", {"command": f"cat {secret}"}), text("I could not read it.")]
    )
    async with stayer.Session(options(tmp_path, model)) as session:
        events = await submit(session)
    said = result_of(events, "Bash")
    assert "private" not in said
    assert said.startswith(f"Permission to use Bash has been denied: it reads {secret}, outside")
    assert f'--allowedTools "Read(/{secret})"' in said
    assert len(last(events).permission_denials) == 1


@pytest.mark.parametrize(
    ("more", "url", "behavior"),
    [
        ({}, "https://example.com/", "ask"),
        ({}, "https://docs.python.org/3/", "allow"),  # a pre-approved documentation site
        ({"env": {"STAYER_NO_PREAPPROVED_HOSTS": "1"}}, "https://docs.python.org/3/", "ask"),
        (
            {"disallowed_tools": ["WebFetch(domain:docs.python.org)"]},
            "https://docs.python.org/",
            "deny",
        ),
        ({"allowed_tools": ["WebFetch(domain:example.com)"]}, "https://EXAMPLE.com./x", "allow"),
        (
            {"allowed_tools": ["WebFetch(domain:example.com)"]},
            "https://example.com@evil.test/",
            "ask",
        ),
        ({"permission_mode": "plan"}, "https://example.com/", "ask"),
    ],
)
async def test_webfetch_asks_per_host_in_a_session(
    tmp_path: Path, more: dict[str, Any], url: str, behavior: str
) -> None:
    decision = await decided(tmp_path, "WebFetch", {"url": url, "prompt": "?"}, **more)
    assert decision.behavior == behavior, decision.reason


async def test_only_rules_naming_a_host_exactly_open_local_addresses_to_webfetch(
    tmp_path: Path,
) -> None:
    rules = [
        "WebFetch(domain:LOCALHOST.)",
        "WebFetch(domain:[::1])",
        "WebFetch(domain:*.internal.test)",
        "WebFetch",
        "Bash(ls:*)",
    ]
    setup = prepare(
        QueryOptions(
            cwd=tmp_path,
            provider=ScriptedProvider([]),
            persist_session=False,
            allowed_tools=rules,
        )
    )
    # not the wildcard, not the bare tool, not the pre-approved documentation sites
    assert setup.params.tool_context.web_hosts == frozenset({"localhost", "::1"})


def reminders(model: ScriptedProvider) -> list[list[str]]:
    """For each request, the system reminders in the user message it ends with."""
    found = []
    for request in model.requests:
        last = request.messages[-1]
        assert isinstance(last, UserMessage)
        texts = [b.text for b in last.content if isinstance(b, TextBlock)]
        found.append([t for t in texts if t.startswith("<system-reminder>") and not is_listing(t)])
    return found


async def test_the_model_is_told_when_plan_mode_is_on_and_when_it_ends(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = ScriptedProvider(
        [
            tool_call("Glob", {"pattern": "*"}, id="toolu_look"),
            text("looked"),
            tool_call("Glob", {"pattern": "*"}, id="toolu_plan"),
            tool_call("ExitPlanMode", {"plan": PLAN}),
            tool_call("Write", write(work / "notes.md")),
            text("done"),
            text("and again"),
        ]
    )
    decider = Decider(Decision("allow"), Decision("allow"))
    async with stayer.Session(options(tmp_path, model, can_use_tool=decider)) as session:
        await submit(session)  # default mode: nothing to say
        session.set_permission_mode("plan")
        events = await submit(session)
        await submit(session)  # back in default: nothing to say again

    on = reminder_block(plan_mode_on(can_ask=True))
    off = reminder_block(plan_mode_off("default"))
    assert reminders(model) == [[], [], [on], [], [off], [], []]
    assert "ExitPlanMode tool" in on
    assert outcomes(events)[-1] == ("Write", "completed")
    # it stays in the conversation, after the prompt it came with
    prompt = model.requests[2].messages[-1]
    assert isinstance(prompt, UserMessage)
    assert [b.text for b in prompt.content if isinstance(b, TextBlock)] == ["go", on]


async def test_a_switch_during_a_run_is_told_at_the_next_call(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    model = ScriptedProvider([tool_call("Glob", {"pattern": "*"}), text("planning now")])
    async with stayer.Session(options(tmp_path, model)) as session:
        async for event in session.submit("go"):
            if isinstance(event, ToolCallFinished):
                session.set_permission_mode("plan")

    # headless (nobody to accept a plan): the plan is the answer
    assert reminders(model) == [[], [reminder_block(plan_mode_on(can_ask=False))]]
    assert "final answer" in plan_mode_on(can_ask=False)


async def test_plan_mode_is_told_again_with_each_prompt(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    model = ScriptedProvider([text("a plan"), text("a better plan")])
    async with stayer.Session(options(tmp_path, model, permission_mode="plan")) as session:
        await submit(session)
        await submit(session, "more detail")

    on = reminder_block(plan_mode_on(can_ask=False))
    assert reminders(model) == [[on], [on]]


def test_plan_mode_is_told_again_when_a_summary_dropped_the_note() -> None:
    remind = ModeReminder(PermissionState(PermissionPolicy(mode="plan")), can_ask=False)
    note = reminder_block(plan_mode_on(can_ask=False))
    assert remind((UserMessage((TextBlock("go"),)),)) == note
    told = (UserMessage((TextBlock("go"), TextBlock(note))),)
    assert remind(told) is None  # said in this prompt already
    summary = (UserMessage((TextBlock("Summary of the conversation so far: ..."),)),)
    assert remind(summary) == note  # compaction replaced the conversation: said again


def test_a_resumed_conversation_left_in_plan_mode_is_told_plan_mode_is_over() -> None:
    # the saved conversation's last note says plan mode is on; this run is in default mode, so
    # without a word the model would go on planning and refuse to change anything
    remind = ModeReminder(PermissionState(PermissionPolicy(mode="default")), can_ask=False)
    on = reminder_block(plan_mode_on(can_ask=True))
    saved = (
        UserMessage((TextBlock("plan it"), TextBlock(on))),
        AssistantMessage((TextBlock("a plan"),)),
        UserMessage((TextBlock("go on"),)),
    )
    assert remind(saved) == reminder_block(plan_mode_off("default"))
    assert remind(saved) is None  # said once
    off = reminder_block(plan_mode_off("acceptEdits"))
    after = ModeReminder(PermissionState(PermissionPolicy(mode="default")), can_ask=False)
    assert after((*saved[:2], UserMessage((TextBlock(off),)), saved[2])) is None  # told already
    fresh = ModeReminder(PermissionState(PermissionPolicy(mode="default")), can_ask=False)
    assert fresh((saved[2],)) is None
