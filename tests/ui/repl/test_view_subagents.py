"""The REPL shows each running subagent under the Agent call that started it (its type and
task, its latest action, a count of its tool calls), one line when it ends, background ones
until they end even after their call returned, and subagents of subagents indented."""

from __future__ import annotations

from stayer.events import (
    BlockStarted,
    Event,
    Finished,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    SubagentEvent,
    Terminal,
    TextDelta,
    ToolCallStarted,
)
from stayer.messages import Usage
from stayer.ui.repl.ansi import plain
from tests.ui.repl.test_view import feed_all, lines, make, result

STARTED = SessionStarted("agent-1", "haiku", "scripted", (), "/w", "default")


def _explore(event: Event, *, background: bool = False, agent: str = "a1") -> SubagentEvent:
    return SubagentEvent("call1", event, agent, "Explore", "find the loader", background)


def _end(terminal: Terminal = Terminal.COMPLETED, seconds: float = 4.2) -> Finished:
    return Finished(terminal, "", 2, Usage(10, 5), 0.001, "ok", None, seconds * 1000, 1.0)


def test_a_running_subagent_shows_its_task_latest_action_and_tool_calls() -> None:
    view, clock = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(STARTED))
    view.feed(_explore(BlockStarted(0, "thinking")))
    assert plain(view.live()).splitlines()[1:] == [
        "  ↳ Explore: find the loader · 0 tool calls · 0s",
        "      thinking",
    ]
    clock.now += 3
    view.feed(_explore(ToolCallStarted("s1", "Grep", {"pattern": "load"})))
    view.feed(_explore(ToolCallStarted("s2", "Read", {"file_path": "loader.py"})))
    assert plain(view.live()).splitlines()[1:] == [
        "  ↳ Explore: find the loader · 2 tool calls · 3s",
        "      Read(loader.py)",
    ]
    view.feed(_explore(TextDelta(0, "The loader is")))
    assert plain(view.live()).splitlines()[-1] == "      writing"


def test_its_end_is_one_line_printed_with_the_call_s_result() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    out = feed_all(
        view,
        [
            _explore(STARTED),
            _explore(ToolCallStarted("s1", "Grep", {"pattern": "load"})),
            _explore(_end()),
        ],
    )
    assert out == []
    assert plain(view.live()).splitlines()[1:] == [
        "  ✓ Explore: find the loader · done · 1 tool call · 4.2s"
    ]
    assert lines(view.feed(result("call1", "It is in loader.py.", "Agent"))) == [
        "● Agent(find the loader)",
        "  ✓ Explore: find the loader · done · 1 tool call · 4.2s",
        "  ⎿  It is in loader.py.",
    ]
    assert view.live() == ""


def test_a_failed_subagent_says_why() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(_end(Terminal.MAX_TURNS, 1.0)))
    out = view.feed(result("call1", "cut off", "Agent", "failed"))
    assert (
        lines(out)[1] == "  ✗ Explore: find the loader · failed (max_turns) · 0 tool calls · 1.0s"
    )


def test_parallel_subagents_each_show_under_their_own_call() -> None:
    view, _ = make(100)
    for call, task in (("c1", "read the docs"), ("c2", "read the tests")):
        view.feed(ToolCallStarted(call, "Agent", {"description": task}))
    view.feed(
        SubagentEvent("c2", ToolCallStarted("x", "Glob", {"pattern": "tests/*"}), "b", "", "")
    )
    view.feed(SubagentEvent("c1", BlockStarted(0, "thinking"), "a", "Plan", "read the docs"))
    assert plain(view.live()).splitlines() == [
        "· Agent(read the docs) · 0s",
        "  ↳ Plan: read the docs · 0 tool calls · 0s",
        "      thinking",
        "· Agent(read the tests) · 0s",
        "  ↳ subagent · 1 tool call · 0s",
        "      Glob(tests/*)",
    ]


def test_a_subagent_of_a_subagent_is_indented_under_it() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(ToolCallStarted("inner", "Agent", {"description": "look deeper"})))
    deeper = SubagentEvent("inner", ToolCallStarted("g", "Grep", {"pattern": "x"}), "a2", "Explore")
    view.feed(_explore(deeper))
    assert plain(view.live()).splitlines()[1:] == [
        "  ↳ Explore: find the loader · 1 tool call · 0s",
        "      Agent(look deeper)",
        "      ↳ Explore · 1 tool call · 0s",
        '          Grep(pattern: "x")',
    ]


def test_a_background_subagent_stays_live_after_its_call_returns_and_ends_in_a_line() -> None:
    view, clock = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(STARTED, background=True))
    printed = view.feed(result("call1", "Started agent a1 in the background.", "Agent"))
    assert lines(printed) == [
        "● Agent(find the loader)",
        "  ⎿  Started agent a1 in the background.",
    ]
    clock.now += 5
    view.feed(_explore(ToolCallStarted("s1", "Bash", {"command": "make test"}), background=True))
    assert plain(view.live()).splitlines()[1:] == [
        "  ↳ Explore: find the loader · 1 tool call · 5s",
        "      Bash(make test)",
    ]
    out = view.feed(_explore(_end(seconds=6.0), background=True))
    assert lines(out) == [
        "",
        "✓ Explore: find the loader (in the background) · done · 1 tool call · 6.0s",
    ]
    assert view.live() == ""


def test_a_subagent_waiting_for_an_answer_says_so() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    ask = PermissionRequested("s1", "Bash", {"command": "rm x"}, "asks", agent="Explore")
    view.feed(_explore(ask))
    assert plain(view.live()).splitlines()[-1] == "      ? waiting for your answer"
    view.feed(_explore(PermissionResolved("s1", "Bash", "allow", "user")))
    assert plain(view.live()).splitlines()[-1] == "      starting"


def test_an_interrupted_call_takes_its_subagents_with_it() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(STARTED))
    assert lines(view.flush()) == ["● Agent(find the loader)", "  ⎿  Interrupted"]
    assert view.live() == ""


def test_a_background_subagent_whose_end_never_came_is_said_when_the_run_ends() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    view.feed(_explore(STARTED, background=True))
    view.feed(result("call1", "Started agent a1 in the background.", "Agent"))
    out = view.feed(_end(Terminal.ABORTED_TOOLS))
    assert lines(out)[:2] == [
        "",
        "✗ Explore: find the loader (in the background) · stopped: the run ended before it did",
    ]
    assert view.live() == ""


def test_a_call_a_rule_refused_a_subagent_is_said_naming_it() -> None:
    view, _ = make(100)
    view.feed(ToolCallStarted("call1", "Agent", {"description": "find the loader"}))
    refused = PermissionResolved("s1", "Bash", "deny", "rule", "Bash(rm:*) is denied")
    assert lines(view.feed(_explore(refused))) == [
        "Explore: find the loader: ⊘ Bash denied by rule: Bash(rm:*) is denied"
    ]
