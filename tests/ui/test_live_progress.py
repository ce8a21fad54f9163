"""On a terminal, the live view draws a running call's latest lines under it and puts the
result in their place when the call ends; where output cannot be taken back it shows results
only."""

from __future__ import annotations

import io
from pathlib import Path

from stayer.events import (
    Event,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolResultsAppended,
)
from stayer.messages import TextBlock, ToolResultBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.live import LiveView
from tests.ui.screen import Screen


async def test_a_running_command_shows_its_last_lines_until_its_result_replaces_them(
    tmp_path: Path,
) -> None:
    command = "for i in 1 2 3 4 5 6 7 8; do echo line$i; done"
    model = ScriptedProvider([tool_call("Bash", {"command": command}), text("Eight lines.")])
    screen = Screen()
    view = LiveView(screen, live=True)
    options = QueryOptions(cwd=tmp_path, provider=model, permission_mode="bypassPermissions")
    while_running: list[list[str]] = []
    async for event in query("count", options=options):
        view.show(event)
        if isinstance(event, ToolCallProgress):
            while_running.append(screen.shown[1:])

    assert while_running[-1] == [
        f"● Bash({command})",
        "  ⎿  line4",
        "     line5",
        "     line6",
        "     line7",
        "     line8",
    ]
    assert screen.shown[1:-2] == [
        f"● Bash({command})",
        "  ⎿  line1",
        "     line2",
        "     line3",
        "     line4",
        "     line5",
        "     line6",
        "     … 2 more lines",
        "Eight lines.",
    ]
    assert screen.shown[-1].startswith("✓ done · 2 turns · ")


def _started(tool_use_id: str, command: str) -> ToolCallStarted:
    return ToolCallStarted(tool_use_id, "Bash", {"command": command})


def _finished(tool_use_id: str, said: str) -> ToolCallFinished:
    result = ToolResultBlock(tool_use_id, (TextBlock(said),))
    return ToolCallFinished(tool_use_id, "Bash", "completed", result, duration_ms=1.0)


def test_calls_running_together_show_their_lines_each_under_its_name() -> None:
    screen = Screen()
    view = LiveView(screen, live=True)
    steps: list[tuple[Event, list[str]]] = [
        (_started("a", "make a"), ["● Bash(make a)"]),
        (_started("b", "make b"), ["● Bash(make a)", "● Bash(make b)"]),
        (ToolCallProgress("a", "a1\n"), ["● Bash(make a)", "● Bash(make b)", "  ⎿  a1"]),
        (
            ToolCallProgress("b", "b1\nb2\n"),
            [
                "● Bash(make a)",
                "● Bash(make b)",
                "  Bash(make a)",
                "  ⎿  a1",
                "  Bash(make b)",
                "  ⎿  b1",
                "     b2",
            ],
        ),
        (
            _finished("a", "a done"),
            ["● Bash(make a)", "● Bash(make b)", "  ⎿  a done", "  ⎿  b1", "     b2"],
        ),
        (
            _finished("b", "b done"),
            ["● Bash(make a)", "● Bash(make b)", "  ⎿  a done", "  ⎿  b done"],
        ),
    ]
    for event, expected in steps:
        view.show(event)
        assert screen.shown == expected, event


def test_drawn_lines_are_made_safe_and_fit_the_terminal_width() -> None:
    screen = Screen()
    view = LiveView(screen, live=True, width=lambda: 20)
    view.show(_started("a", "x"))
    view.show(
        ToolCallProgress(
            "a", "\x1b[31mred\x1b[0m\tend\x07\n" + "y" * 50 + "\n宽字符宽字符宽字符宽字符\n"
        )
    )
    assert screen.shown == [
        "● Bash(x)",
        "  ⎿  red end",
        "     yyyyyyyyyyyyy…",
        "     宽字符宽字符…",
    ]


def test_where_output_cannot_be_taken_back_only_results_are_shown() -> None:
    out = io.StringIO()
    view = LiveView(out)
    for event in (
        _started("a", "make"),
        ToolCallProgress("a", "compiling\n"),
        _finished("a", "built"),
        ToolResultsAppended(UserMessage((ToolResultBlock("a", (TextBlock("built"),)),))),
    ):
        view.show(event)
    assert out.getvalue() == "● Bash(make)\n  ⎿  built\n"
