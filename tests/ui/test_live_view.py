"""The live terminal view says when the loop recovers instead of stopping."""

from __future__ import annotations

import io
from pathlib import Path

from stayer.events import Continue
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.live import LiveView


async def test_a_recovery_is_shown_as_it_happens(tmp_path: Path) -> None:
    model = ScriptedProvider([text("The answer", stop_reason="max_tokens"), text(" is 42.")])
    out = io.StringIO()
    view = LiveView(out)
    options = QueryOptions(cwd=tmp_path, provider=model, max_tokens=1000)
    async for event in query("what is it?", options=options):
        view.show(event)

    shown = out.getvalue().splitlines()
    assert shown[1:4] == [
        "The answer",
        "  ↻ cut off by the output limit: asking the model to go on",
        " is 42.",
    ]
    assert shown[-1].startswith("✓ done · 1 turn · ")


def test_every_recovery_has_words_for_the_person_watching() -> None:
    from stayer.ui.wording import RECOVERIES

    assert set(RECOVERIES) == set(Continue)
    assert all(RECOVERIES[reason] for reason in Continue if reason is not Continue.NEXT_TURN)


async def test_a_switch_to_a_fallback_model_is_shown(tmp_path: Path) -> None:
    from stayer.errors import Overloaded
    from stayer.loop.state import RetryPolicy
    from stayer.providers.scripted import Fault

    busy = Fault(Overloaded("overloaded (529)", status=529))
    model = ScriptedProvider([busy, busy, busy, text("Hello from the fallback.")])
    out = io.StringIO()
    view = LiveView(out)
    options = QueryOptions(
        cwd=tmp_path,
        provider=model,
        model="main-model",
        fallback_models=["backup-model"],
        retry=RetryPolicy(base_delay_s=0.0),
    )
    async for event in query("hi", options=options):
        view.show(event)

    assert out.getvalue().splitlines()[1:5] == [
        "  retrying in 0.0s (attempt 1/10): overloaded (529)",
        "  retrying in 0.0s (attempt 2/10): overloaded (529)",
        "  ⇄ switching to backup-model for the rest of this run: main-model was overloaded 3 "
        "times in a row",
        "Hello from the fallback.",
    ]


async def test_text_kept_at_a_cut_stays_on_screen_and_the_rest_follows_it(tmp_path: Path) -> None:
    from stayer.errors import ServerError
    from stayer.messages import TextBlock
    from stayer.providers.scripted import Cut

    said = "The loader reads the old format, converts each record and hands it to the writer,"
    broken = ServerError("server error (500)", status=500, retry_after=0.0)
    model = ScriptedProvider([Cut(broken, open=TextBlock(said)), text(" which saves it.")])
    out = io.StringIO()
    view = LiveView(out)
    async for event in query("go", options=QueryOptions(cwd=tmp_path, provider=model)):
        view.show(event)

    shown = out.getvalue().splitlines()
    assert shown[1:5] == [
        said,
        "  ↻ the stream broke off: keeping the text above, the model goes on",
        "  retrying in 0.0s (attempt 1/10): server error (500)",
        " which saves it.",
    ]
    assert "discarded" not in out.getvalue()


async def test_a_changed_todo_list_is_shown_compactly_and_an_unchanged_one_is_not(
    tmp_path: Path,
) -> None:
    from stayer.providers.scripted import tool_call

    def todos(first: str, second: str) -> dict[str, object]:
        return {
            "todos": [
                {"content": "Fix the bug", "status": first, "activeForm": "Fixing the bug"},
                {"content": "Add a test", "status": second, "activeForm": "Adding a test"},
            ]
        }

    model = ScriptedProvider(
        [
            tool_call("TodoWrite", todos("in_progress", "pending"), id="toolu_1"),
            tool_call("TodoWrite", todos("in_progress", "pending"), id="toolu_2"),
            tool_call("TodoWrite", todos("completed", "completed"), id="toolu_3"),
            text("Both done."),
        ]
    )
    out = io.StringIO()
    view = LiveView(out)
    async for event in query("go", options=QueryOptions(cwd=tmp_path, provider=model)):
        view.show(event)

    assert out.getvalue().splitlines()[1:10] == [
        "● TodoWrite(2 tasks)",
        "  ⎿  ▶ Fix the bug",
        "     ☐ Add a test",
        "● TodoWrite(2 tasks)",
        "  ⎿  The todo list is saved, unchanged (2 tasks: 0 completed, 1 in progress, 1 "
        "pending). Go on with the open tasks and mark each completed once it is done.",
        "● TodoWrite(2 tasks)",
        "  ⎿  ☒ Fix the bug",
        "     ☒ Add a test",
        "Both done.",
    ]
