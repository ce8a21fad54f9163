"""The footer's and /cost's figures come from the events of every run."""

from __future__ import annotations

from pathlib import Path

from stayer.events import Finished
from stayer.providers.scripted import ScriptedProvider, text
from stayer.session.options import QueryOptions
from stayer.session.query import query
from stayer.ui.repl.tracking import Tracker


async def test_totals_add_up_over_runs_and_the_context_is_the_last_call(tmp_path: Path) -> None:
    tracker = Tracker("default")
    model = ScriptedProvider([text("one"), text("two")])
    options = QueryOptions(cwd=tmp_path, provider=model, persist_session=False)
    finished: list[Finished] = []
    for prompt in ("first", "second"):
        async for event in query(prompt, options=options):
            tracker.take(event)
            if isinstance(event, Finished):
                finished.append(event)
        assert not tracker.running

    totals = tracker.totals
    assert totals.runs == 2
    assert totals.cost_usd == sum(f.cost_usd for f in finished)
    assert totals.output_tokens == sum(f.usage.output_tokens for f in finished) > 0
    assert totals.input_tokens == sum(f.usage.input_tokens for f in finished) > 0
    last = finished[-1].usage
    assert totals.context_tokens == (
        last.input_tokens + last.cache_read_input_tokens + last.cache_creation_input_tokens
    )
    assert tracker.model and tracker.mode == "default"
