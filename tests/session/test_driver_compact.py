"""`stayer.driver.Compact`: the conversation summarised on request, at once when idle and
after the run when one is going; stopped by an interrupt; one line when nothing came of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stayer.driver import Close, Compact, Driver, Interrupt, Submit
from stayer.events import Compacted, Event, Finished
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.session.options import QueryOptions
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import anthropic_text, reply
from tests.session.test_driver import Collect, Hold, options, said


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events if isinstance(e, Finished | Compacted)]


async def test_compact_when_idle_summarises_now_and_the_next_prompt_goes_on_from_it(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider(
        [text("first answer"), text("Summary: the user said one."), text("second answer")]
    )
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("one"))
    await sink.signal(Finished).wait()
    driver.send(Compact("keep the numbers"))
    await sink.signal(Compacted).wait()
    driver.send(Submit("two"))
    driver.send(Close())
    await running

    assert kinds(sink.events) == ["Finished", "Compacted", "Finished"]
    (compacted,) = [e for e in sink.events if isinstance(e, Compacted)]
    assert (compacted.trigger, compacted.method) == ("manual", "summary")
    assert "keep the numbers" in str(model.requests[1].messages[-1].content)
    after = model.requests[2].messages
    assert "Summary: the user said one." in str(after[0].content)
    assert "first answer" not in str([m.content for m in after])
    assert driver.errors == []
    model.assert_done()


async def test_compact_sent_during_a_run_waits_for_it_and_prompts_after_it_wait_too(
    tmp_path: Path,
) -> None:
    hold = Hold()
    model = ScriptedProvider(
        [tool_call("Hold", {}), text("first done"), text("Summary: held."), text("after done")]
    )
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Compact())
    driver.send(Submit("after the compaction"))
    driver.send(Close())
    for _ in range(1000):  # every operation taken while the tool still holds the run
        if driver._inbox.empty():
            break
        await asyncio.sleep(0)
    hold.release.set()
    await running

    assert kinds(sink.events) == ["Finished", "Compacted", "Finished"]
    first, last = sink.finished()
    assert (first.result_text, last.result_text) == ("first done", "after done")
    assert "after the compaction" not in str(model.requests[1].messages)  # not in that run
    (only,) = model.requests[3].messages  # the summary, with the prompt after it
    assert said(only).index("Summary: held.") < said(only).index("after the compaction")
    model.assert_done()


async def test_nothing_to_compact_or_no_summary_is_one_line_and_the_driver_goes_on(
    tmp_path: Path,
) -> None:
    model = ScriptedProvider([text("an answer"), text("   "), text("still here")])
    sink = Collect()
    told: list[str] = []
    driver = await Driver.open(options(tmp_path, model), sink, on_error=told.append)
    running = asyncio.create_task(driver.run())
    driver.send(Compact())
    driver.send(Submit("one"))
    await sink.signal(Finished).wait()
    driver.send(Compact())  # the model answers with no summary
    driver.send(Submit("two"))
    driver.send(Close())
    await running

    assert (
        told
        == driver.errors
        == [
            "there is nothing to compact yet: the conversation is empty",
            "the conversation was not compacted: no summary came back, so it goes on as it was",
        ]
    )
    assert kinds(sink.events) == ["Finished", "Finished"]
    assert "an answer" in str([m.content for m in model.requests[2].messages])
    model.assert_done()


async def test_an_interrupt_stops_a_compaction_and_leaves_the_conversation_as_it_was(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        summary = anthropic_text("Summary that never arrives whole.")
        server.enqueue(reply("first answer"), summary.paused(at=3), reply("second answer"))
        env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        given = QueryOptions(cwd=tmp_path, env=env, persist_session=False)
        sink = Collect()
        driver = await Driver.open(given, sink)
        running = asyncio.create_task(driver.run())
        driver.send(Submit("one"))
        await sink.signal(Finished).wait()
        driver.send(Compact())
        await asyncio.to_thread(server.wait_for_requests, 2)  # the summary is streaming
        driver.send(Interrupt())
        driver.send(Submit("two"))
        driver.send(Close())
        await asyncio.wait_for(running, timeout=30)
        server.resume()

    assert driver.errors == ["the compaction was stopped; the conversation goes on as it was"]
    assert kinds(sink.events) == ["Finished", "Finished"]
    last = server.requests[2].messages
    assert "first answer" in str(last) and "Summary" not in str(last)


async def test_an_interrupt_drops_a_compaction_waiting_for_the_run(tmp_path: Path) -> None:
    hold = Hold()
    model = ScriptedProvider([tool_call("Hold", {})])
    sink = Collect()
    driver = await Driver.open(options(tmp_path, model, extra_tools=[hold]), sink)
    running = asyncio.create_task(driver.run())
    driver.send(Submit("first"))
    await hold.started.wait()
    driver.send(Compact())
    driver.send(Interrupt())
    driver.send(Close())
    await running

    assert driver.errors == [
        "the compaction waiting for the run was dropped, as the run was stopped"
    ]
    assert kinds(sink.events) == ["Finished"]
    model.assert_done()  # no summary was asked for
