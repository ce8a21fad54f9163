"""Permission modes in a whole session: plan mode and its way out, dontAsk, acceptEdits, bypass,
and the caller's `can_use_tool` answering what the policy asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from stayer.permissions import Decision
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions

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
