"""/context: what fills the window, part by part, adding up to the window."""

from __future__ import annotations

import re
from pathlib import Path

from stayer.context.compact import estimate_tokens
from stayer.messages import AssistantMessage, TextBlock, UserMessage
from stayer.ui.repl.commands_context import BAR_CELLS, breakdown
from stayer.ui.repl.surface import Totals
from tests.fakes.model_server import FakeModelServer
from tests.ui.repl.commands_kit import RecordingRepl, opened, run

HISTORY = (
    UserMessage.of_text("Where is the login handler? " * 200),
    AssistantMessage((TextBlock("In src/auth/login.py, line 40. " * 300),), id="msg_1"),
)
ROW = re.compile(r"^(\S) (.+?)\s+(\d[\d.]*[kM]?)\s+(\d+\.\d)%$")


def number(text: str) -> float:
    scale = {"k": 1_000, "M": 1_000_000}.get(text[-1], 1)
    return float(text.rstrip("kM")) * scale


async def test_context_shows_each_part_and_they_add_up_to_the_window(tmp_path: Path) -> None:
    (tmp_path / "STAYER.md").write_text("Always run make lint before committing.\n" * 40)
    with FakeModelServer() as server:
        async with opened(server, tmp_path, model="claude-haiku-4-5", history=HISTORY) as session:
            window = session.setup.params.context_window
            totals = Totals(context_tokens=41_234, context_window=window)
            repl = RecordingRepl(session, totals=totals, running=True)
            [text] = await run(repl, "/context")
            found = breakdown(session, window)
    lines = text.splitlines()
    assert lines[0].startswith("Context: claude-haiku-4-5, ")
    assert f" of {window // 1000}k tokens used (" in lines[0]
    assert len(lines[1]) == BAR_CELLS
    rows = {m.group(2): m for line in lines[2:] if (m := ROW.match(line))}
    assert list(rows) == [
        "System prompt", "Memory files", f"Tools ({len(session.setup.params.tools.specs)})",
        "Messages", "Free space", "Reserved",
    ]  # fmt: skip
    # each part's own mark is in the bar in proportion, and the exact tokens add up
    largest = max(found.parts, key=lambda part: part.tokens)
    for part in found.parts:
        assert part.tokens >= 0
        marked = lines[1].count(part.mark)
        share = part.tokens * BAR_CELLS / window
        if part is largest:  # it gives the cells rounding took, or takes what it left
            assert abs(marked - share) <= len(found.parts), part
        elif part.tokens:  # even a small part shows; the others are in proportion
            assert marked == 1 or abs(marked - share) <= 1, part
    assert sum(part.tokens for part in found.parts) == window
    assert sum(float(row.group(4)) for row in rows.values()) == pytest_approx(100.0, 0.4)
    tokens_by_label = {part.label: part.tokens for part in found.parts}
    assert tokens_by_label["Messages"] == estimate_tokens(HISTORY)
    assert tokens_by_label["Memory files"] > 400  # 40 lines of 40 characters, and its wrapping
    assert tokens_by_label["Tools"] > 1_000  # the built-in tools' schemas
    assert "\n    ./STAYER.md  400\n" in text
    shown = number(rows["Messages"].group(3))
    assert abs(shown - estimate_tokens(HISTORY)) <= 50
    assert lines[-2].startswith("Auto-compaction starts at ")
    assert lines[-1] == "The last request took 41,234 tokens, as the model counted them"


def pytest_approx(value: float, tolerance: float) -> object:
    import pytest

    return pytest.approx(value, abs=tolerance)


async def test_a_conversation_past_the_window_says_so(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path, history=HISTORY) as session:
            repl = RecordingRepl(session, totals=Totals(context_window=4_000))
            [text] = await run(repl, "/context")
    lines = text.splitlines()
    assert len(lines[1]) == BAR_CELLS
    assert "Free space" in text and not any(
        line.startswith("·") and not line.endswith(" 0    0.0%") for line in lines[2:]
    )
    assert lines[-1].startswith("Over the window by ") and lines[-1].endswith(
        ": /compact frees room"
    )
