"""The footer: model, context used, cost and tokens on the right; the permission mode (as
Claude Code shows it), "esc to interrupt" and the queue on the left; the least important parts
left out first when the terminal is narrow."""

from __future__ import annotations

from prompt_toolkit.formatted_text import StyleAndTextTuples, fragment_list_to_text
from prompt_toolkit.utils import get_cwidth

from stayer.ui.repl.status import footer
from stayer.ui.repl.surface import Totals

TOTALS = Totals(
    cost_usd=0.0123,
    input_tokens=1_000,
    output_tokens=2_345,
    cache_read_tokens=10_000,
    cache_write_tokens=500,
    context_tokens=24_000,
    context_window=200_000,
)


def text(line: StyleAndTextTuples) -> str:
    return fragment_list_to_text(line)


def test_a_wide_footer_shows_everything_the_right_side_against_the_edge() -> None:
    line = footer(model="claude-sonnet-4-5", totals=TOTALS, mode="acceptEdits", running=True,
                  queued=2, width=130)  # fmt: skip
    shown = text(line)
    assert get_cwidth(shown) == 130
    assert shown.startswith(
        " ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt · 2 queued"
    )
    assert shown.endswith("claude-sonnet-4-5 · 12% context · $0.0123 · ↑11.5k ↓2.3k")
    assert ("class:footer.mode.acceptedits", "⏵⏵ accept edits on") in line


def test_each_mode_as_claude_code_shows_it_and_nothing_for_the_default() -> None:
    def left(mode: str) -> str:
        return text(footer(model="", totals=Totals(), mode=mode, running=False, queued=0,
                           width=80)).strip()  # fmt: skip

    assert left("default") == ""
    assert left("manual") == ""
    assert left("plan") == "⏸ plan mode on (shift+tab to cycle)"
    assert left("acceptEdits") == "⏵⏵ accept edits on (shift+tab to cycle)"
    assert left("bypassPermissions") == "⏵⏵ bypass permissions on (shift+tab to cycle)"


def test_at_40_columns_the_least_important_parts_go_first() -> None:
    shown = text(footer(model="claude-sonnet-4-5", totals=TOTALS, mode="plan", running=True,
                        queued=1, width=40))  # fmt: skip
    assert get_cwidth(shown) <= 40
    assert "⏸ plan mode on" in shown
    assert "esc to interrupt" in shown
    assert shown == " ⏸ plan mode on · esc to interrupt"  # the queue went before them
    busy = text(footer(model="claude-sonnet-4-5", totals=TOTALS, mode="default", running=True,
                       queued=1, width=40))  # fmt: skip
    assert busy.startswith(" esc to interrupt · 1 queued")
    assert get_cwidth(busy) <= 40
    idle = text(footer(model="claude-sonnet-4-5", totals=TOTALS, mode="default",
                       running=False, queued=0, width=40))  # fmt: skip
    assert get_cwidth(idle) <= 40
    assert idle.strip() == "12% context · $0.0123"  # the tokens and the model went first


def test_every_width_fits() -> None:
    for width in range(0, 130):
        line = footer(model="claude-opus-4-1-20250805", totals=TOTALS, mode="bypassPermissions",
                      running=True, queued=12, width=width)  # fmt: skip
        assert get_cwidth(text(line)) <= max(width, 1), width


def test_a_full_context_is_styled_as_a_warning() -> None:
    nearly = Totals(context_tokens=170_000, context_window=200_000)
    line = footer(model="m", totals=nearly, mode="default", running=False, queued=0, width=80)
    assert ("class:footer.context.full", "85% context") in line
