"""Skills invoked before a summary are shown again after it (Claude Code's rule): the latest
rendering of each, newest first, each cut to 5,000 tokens and all held to 25,000, a cut one
saying so; one the kept round still shows is not repeated."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from stayer.context.compact import SUMMARY_INTRO
from stayer.events import Terminal
from stayer.loop.compaction import threshold
from stayer.loop.reattach import SKILL_CUT_NOTE, SKILL_INTRO
from stayer.messages import TextBlock, UserMessage
from stayer.providers.scripted import ScriptedProvider, text
from tests.fakes.loop_harness import finished, make_params, run
from tests.fakes.tools import Echo
from tests.loop.test_compaction import big_call, compactions

TOKEN = 4  # characters a token is reckoned at


def intro_texts(model: ScriptedProvider, request: int) -> list[str]:
    first = model.requests[request].messages[0]
    assert isinstance(first, UserMessage)
    return [block.text for block in first.content if isinstance(block, TextBlock)]


async def test_invoked_skills_come_back_newest_first_within_their_budgets(tmp_path: Path) -> None:
    model = ScriptedProvider([big_call(1, input_tokens=190_000), text("NOTES"), text("done")])
    long = "L" * (6_000 * TOKEN)  # over its 5,000-token share: cut, and says so
    full = "F" * (4_900 * TOKEN)
    rendered = [("long", long), *[(f"s{n}", full) for n in range(6)]]
    params = replace(
        make_params(model, [Echo()], tmp_path),
        context_window=200_000,
        max_tokens=1_000,
        skills_loaded=lambda: rendered,
    )
    events = await run(params)

    assert compactions(events) == [("auto", "summary")]
    assert finished(events).terminal is Terminal.COMPLETED
    shown = intro_texts(model, 2)
    assert shown[0] == SUMMARY_INTRO + "NOTES"
    heads = [part.split("\n", 1)[0] + "\n" for part in shown[1:]]
    # the last to fit is cut to what the total leaves; the oldest is left out
    names = ("long", "s0", "s1", "s2", "s3", "s4")
    assert heads == [SKILL_INTRO.format(name=name) for name in names]
    assert shown[1].endswith(SKILL_CUT_NOTE) and shown[-1].endswith(SKILL_CUT_NOTE)
    assert len(shown[1]) <= 5_000 * TOKEN
    assert shown[2] == SKILL_INTRO.format(name="s0") + full
    assert sum(len(part) for part in shown[1:]) <= 25_000 * TOKEN


async def test_no_skill_loaded_adds_nothing_to_a_summary(tmp_path: Path) -> None:
    model = ScriptedProvider([big_call(1, input_tokens=190_000), text("NOTES"), text("done")])
    params = replace(
        make_params(model, [Echo()], tmp_path),
        context_window=200_000,
        max_tokens=1_000,
        skills_loaded=lambda: [],
    )
    await run(params)
    assert intro_texts(model, 2) == [SUMMARY_INTRO + "NOTES"]


async def test_on_a_small_window_skills_share_the_files_quarter_of_the_threshold(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([big_call(1, input_tokens=30_000), text("NOTES"), text("done")])
    rendered = [(f"s{n}", "x" * 30_000) for n in range(8)]
    params = replace(
        make_params(model, [Echo()], tmp_path),
        context_window=32_000,
        max_tokens=1_000,
        skills_loaded=lambda: rendered,
    )
    events = await run(params)

    assert compactions(events) == [("auto", "summary")]
    shown = intro_texts(model, 2)
    assert shown[1].startswith(SKILL_INTRO.format(name="s0"))
    assert sum(len(part) for part in shown[1:]) <= threshold(params) // 4 * TOKEN
