"""A whole scripted run through the REPL's view: real tools, real files, every line checked
against the width, no escape sequence without colour, and a live tail that does not grow with
the conversation."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from msgspec import Struct
from rich.cells import cell_len

from stayer.events import (
    Compacted,
    Continue,
    Continuing,
    Event,
    Finished,
    HookRan,
    ModelSwitched,
    PartialKept,
    PermissionResolved,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    Withdrawn,
)
from stayer.messages import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from stayer.providers.scripted import Reply, ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.repl.ansi import Painter, plain
from stayer.ui.repl.view import View

COMMAND = "printf 'one\\ntwo\\nthree\\nfour\\nfive\\n'"
MARKDOWN = (
    "## Done\n\nI changed **two** files and ran the tests; here is a summary with a very long "
    "word: supercalifragilisticexpialidocious-and-then-some.\n\n"
    "```python\nprint('a line of code that is longer than forty columns wide, surely')\n```\n\n"
    "| file | change |\n|---|---|\n| a.py | renamed a variable |\n\n- first point\n- second point\n"
)


def _script(tmp_path: Path) -> ScriptedProvider:
    target = tmp_path / "a.py"
    return ScriptedProvider(
        [
            Reply(
                (
                    ThinkingBlock("Let me look at the files first.\nThen edit.", "sig"),
                    TextBlock("I will \x1b[31mlook\x1b]0;pwned\x07 first."),
                    ToolUseBlock("b1", "Bash", {"command": COMMAND, "description": "list"}),
                )
            ),
            tool_call("Write", {"file_path": str(target), "content": "x = 1\ny = 2\n"}, id="w1"),
            tool_call("Read", {"file_path": str(target)}, id="r1"),
            tool_call(
                "Edit",
                {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 3"},
                id="e1",
            ),
            tool_call(
                "TodoWrite",
                {"todos": [{"content": "edit a.py", "status": "completed", "activeForm": "x"}]},
                id="t1",
            ),
            text(MARKDOWN),
        ]
    )


async def _events(tmp_path: Path) -> list[Event]:
    options = QueryOptions(
        cwd=tmp_path, provider=_script(tmp_path), permission_mode="bypassPermissions"
    )
    return [event async for event in query("go", options=options)]


def _notices() -> list[Event]:
    return [
        Retrying(1, 10, 2.0, "overloaded (529)", 529),
        Compacted("auto", "summary", 150_000, 20_000),
        ModelSwitched("big", "small", "big was overloaded"),
        Withdrawn("m1", "the stream broke"),
        PartialKept(AssistantMessage((TextBlock("x"),)), "the stream broke"),
        *[Continuing(reason) for reason in Continue],
        HookRan("h", "PreToolUse", "PreToolUse:Bash", "check.sh", 2, 5.0, "blocked", "no rm"),
        HookRan("h", "PostToolUse", "PostToolUse:Bash", "log.sh", 0, 5.0, "success"),
        PermissionResolved("x", "Bash", "deny", "hook", "rm is not allowed here"),
        PermissionResolved("y", "Bash", "deny", "user", "no"),
    ]


def _fixed(width: int) -> Callable[[], int]:
    return lambda: width


def _watch(view: View, events: Sequence[Event]) -> tuple[list[str], list[str]]:
    """Feed every event; what was printed, and every live tail drawn on the way."""
    printed: list[str] = []
    tails: list[str] = []
    for event in events:
        printed += view.feed(event)
        tails.append(view.live())
    return printed, tails


async def test_a_whole_run_reads_as_a_person_would_want(tmp_path: Path) -> None:
    view = View(width=lambda: 100, color=False)
    options = QueryOptions(
        cwd=tmp_path, provider=_script(tmp_path), permission_mode="bypassPermissions"
    )
    printed: list[str] = []
    async for event in query("go", options=options):  # fed as they come, files as they are
        printed += view.feed(event)
    shown = plain("".join(printed))
    assert "✻ Thought for 0s" in shown
    assert "I will look first." in shown
    assert "● Bash(printf 'one\\ntwo\\nthree\\nfour\\nfive\\n')" in shown
    assert "  ⎿  one\n     two\n     three\n     … +2 lines (ctrl+o to expand)" in shown
    assert "● Write(a.py)\n  ⎿  Wrote a.py with 2 additions and 0 removals" in shown
    assert "● Edit(a.py)\n  ⎿  Updated a.py with 1 addition and 1 removal" in shown
    assert "         1   x = 1\n         2 - y = 2\n         2 + y = 3" in shown
    assert "● TodoWrite(1 task)\n  ⎿  ☒ edit a.py" in shown
    assert "Done\n\nI changed two files" in shown
    assert shown.rstrip().splitlines()[-1].startswith("6 turns · $")
    assert view.live() == ""


async def test_every_line_fits_the_width_at_40_and_120_columns(tmp_path: Path) -> None:
    events = [*await _events(tmp_path), *_notices()]
    for width in (40, 120):
        for color in (False, True):
            view = View(width=_fixed(width), color=color)
            printed, tails = _watch(view, events)
            printed += view.user_prompt("a prompt " * 30)
            printed += view.notice("a notice " * 30, level="warning")
            printed += view.expand_last()
            every = plain("".join(printed)).splitlines()
            every += [line for tail in tails for line in plain(tail).splitlines()]
            every += plain(view.describe_call("Bash", {"command": "echo " + "x" * 200})).split("\n")
            too_wide = [line for line in every if cell_len(line) > width]
            assert too_wide == [], (width, color)


async def test_without_colour_no_escape_sequence_is_ever_written(tmp_path: Path) -> None:
    events = [*await _events(tmp_path), *_notices()]
    view = View(width=lambda: 40, color=False)
    printed, tails = _watch(view, events)
    history = next(event for event in events if isinstance(event, Finished)).messages
    printed += view.expand_last() + view.replay(history)
    described = view.describe_call(
        "Edit", {"file_path": str(tmp_path / "a.py"), "old_string": "x", "new_string": "z"}
    )
    assert not any("\x1b" in part for part in [*printed, *tails, described])


async def test_escape_sequences_from_the_model_never_reach_the_terminal(tmp_path: Path) -> None:
    view = View(width=lambda: 80, color=True)
    printed, tails = _watch(view, await _events(tmp_path))
    everything = "".join(printed) + "".join(tails)
    assert "\x1b]" not in everything and "\x07" not in everything
    assert "\x1b[31mlook" not in everything


def test_notices_are_one_line_each() -> None:
    view = View(width=lambda: 200, color=False)
    printed, _ = _watch(view, _notices())
    shown = [line for line in plain("".join(printed)).splitlines() if line]
    assert shown[:5] == [
        "↻ retrying in 2s (attempt 1/10): overloaded (529)",
        "⟲ summarised the conversation: about 150,000 → 20,000 tokens",
        "⇄ switched from big to small for the rest of this run: big was overloaded",
        "the partial answer above was discarded: the stream broke",
        "the answer broke off (the stream broke); what arrived is kept",
    ]
    recoveries = shown[5 : 5 + len(Continue) - 1]
    assert all(line.startswith("↻ ") for line in recoveries)
    assert shown[5 + len(Continue) - 1 :] == [
        "⚑ PreToolUse:Bash hook `check.sh` blocked: no rm",
        "⊘ Bash denied by hook: rm is not allowed here",
    ]


def _result(tool_use_id: str, text: str) -> ToolCallFinished:
    block = ToolResultBlock(tool_use_id, (TextBlock(text),))
    return ToolCallFinished(tool_use_id, "Bash", "completed", block, 1.0)


def _held(value: object) -> int:
    """How many items `value` holds, counted through containers and records (the console
    that renders is not state, and is left out)."""
    if isinstance(value, Painter):
        return 0
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(_held(item) for item in value.values()) + len(value)
    if isinstance(value, list | tuple | set | deque):
        return sum(_held(item) for item in value) + 1
    if isinstance(value, Struct):
        return sum(_held(getattr(value, name)) for name in value.__struct_fields__)
    if hasattr(value, "__dict__") and not callable(value):
        return _held(vars(value))
    return 1


def test_the_live_tail_does_not_grow_with_the_conversation() -> None:
    view = View(width=lambda: 80, color=False)
    held: list[int] = []
    for n in range(1000):
        view.feed(TextDelta(0, f"Message {n} with a few words in it.\n\n"))
        view.feed(ToolCallStarted(f"t{n}", "Bash", {"command": f"echo {n}"}))
        view.feed(ToolCallProgress(f"t{n}", f"{n}\n"))
        view.feed(_result(f"t{n}", f"{n}\n"))
        if n in (9, 999):
            held.append(_held(vars(view)))
    # What the view holds is the live tail and the last call, not the conversation.
    assert held[0] == held[1]
    view.feed(TextDelta(0, "and now a block still streaming"))
    start = time.perf_counter()
    for _ in range(50):
        tail = view.live()
    per_call = (time.perf_counter() - start) / 50
    assert tail == "\nand now a block still streaming"
    assert per_call < 0.02
