"""/clear, /compact, /model, /resume and /exit: what they hand the driver or the REPL, and
what the person reads."""

from __future__ import annotations

import time
from pathlib import Path

from stayer.driver import Clear, Close, Compact, Driver, SetModel
from stayer.events import Compacted, Event
from stayer.messages import AssistantMessage, TextBlock, UserMessage
from stayer.providers.model_list import Listed, Listing, cache_path, list_endpoint, write_cache
from stayer.session.session import Session
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import reply
from tests.ui.repl.commands_kit import RecordingRepl, opened, options, run

HISTORY = (
    UserMessage.of_text("Where is the login handler?"),
    AssistantMessage((TextBlock("In src/auth/login.py."),), id="msg_1"),
)
ALIASES = [
    "opus      claude-opus-5-5  (current)",
    "sonnet    claude-sonnet-5-5",
    "haiku     claude-haiku-5-5",
    "fable     claude-fable-5-2",
    "opusplan  claude-opus-5-5 in plan mode, else claude-sonnet-5-5",
]


async def test_clear_starts_over_and_says_the_last_conversation_is_kept(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/clear") == [
                "Started a new conversation; the last one is saved (/resume goes back to it)"
            ]
            assert repl.sent == [Clear()]
        async with opened(server, tmp_path, persist_session=False) as unsaved:
            assert await run(RecordingRepl(unsaved), "/clear") == ["Started a new conversation"]


async def test_compact_hands_over_the_instructions_and_not_an_empty_conversation(
    tmp_path: Path,
) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as empty:
            repl = RecordingRepl(empty)
            assert await run(repl, "/compact") == ["Nothing to compact: the conversation is empty"]
            assert repl.sent == []
        async with opened(server, tmp_path, history=HISTORY) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/compact keep the API notes") == [
                "Compacting the conversation (keep the API notes)…"
            ]
            assert await run(repl, "/compact") == ["Compacting the conversation…"]
    assert repl.sent == [Compact("keep the API notes"), Compact(None)]


async def test_the_driver_compacts_with_the_instructions_and_hands_on_the_event(
    tmp_path: Path,
) -> None:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    with FakeModelServer() as server:
        server.enqueue(reply("Summary: the login handler lives in src/auth/login.py."))
        driver = Driver(await Session.open(options(server, tmp_path, history=HISTORY)), sink)
        driver.send(Compact("keep the file names"))
        driver.send(Close())
        await driver.run()
        [request] = server.requests
    assert "keep the file names" in str(request.body)
    [compacted] = [event for event in events if isinstance(event, Compacted)]
    assert (compacted.trigger, compacted.method) == ("manual", "summary")
    assert "Summary: the login handler lives" in str(driver.session.history)
    assert driver.errors == []


async def test_model_with_a_name_asks_the_driver_to_switch(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session)
            assert await run(repl, "/model sonnet") == [
                "Switching to sonnet from the next prompt on"
            ]
    assert repl.sent == [SetModel("sonnet")]
    assert repl.picked == []


async def test_model_offers_the_aliases_and_the_providers_list(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        env = {**server.env(), "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        # a fresh list, so the session fetches none of its own meanwhile
        listed = (
            Listed("claude-opus-5-5", 1.0),
            Listed("claude-opus-5-6-preview", 3.0),
            Listed("claude-sonnet-5-5-experimental", 2.0),
        )
        write_cache(cache_path(list_endpoint("anthropic", env), env), Listing(time.time(), listed))
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, picks=[1, 6, None])
            assert await run(repl, "/model") == ["Switching to sonnet from the next prompt on"]
            assert await run(repl, "/model") == [
                "Switching to claude-sonnet-5-5-experimental from the next prompt on"
            ]
            assert await run(repl, "/model") == ["Kept claude-opus-5-5"]
    title, choices = repl.picked[0]
    assert title == "Model (now claude-opus-5-5)"
    assert choices == [*ALIASES, "claude-opus-5-6-preview", "claude-sonnet-5-5-experimental"]
    assert repl.sent == [SetModel("sonnet"), SetModel("claude-sonnet-5-5-experimental")]


async def test_model_on_an_openai_server_offers_its_model(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        env = server.env("openai")
        config = {**env, "STAYER_CONFIG_DIR": str(tmp_path / "config")}
        listed = (Listed("gpt-4.1", 1.0), Listed("gpt-5.5", 2.0), Listed("gpt-5.5-mini", 3.0))
        # a fresh list, so the session fetches none of its own meanwhile
        write_cache(
            cache_path(list_endpoint("openai", config), config), Listing(time.time(), listed)
        )
        async with opened(server, tmp_path, env=env, model="openai:gpt-4.1") as session:
            repl = RecordingRepl(session, picks=[0])
            assert await run(repl, "/model") == ["Switching to gpt-5.5 from the next prompt on"]
    assert repl.picked == [
        ("Model (now gpt-4.1)", ["gpt-5.5", "gpt-5.5-mini", "gpt-4.1  (current)"])
    ]


async def test_resume_offers_the_other_saved_sessions_of_this_folder(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as alone:
            repl = RecordingRepl(alone)
            assert await run(repl, "/resume") == ["No other saved session to resume in this folder"]
        server.enqueue(reply("It is in src/auth/login.py."))
        async with opened(server, tmp_path) as first:
            async for _ in first.submit("where is   the\nlogin handler?"):
                pass
        async with opened(server, tmp_path) as session:
            repl = RecordingRepl(session, picks=[None, 0])
            assert await run(repl, "/resume") == ["Nothing resumed"]
            assert await run(repl, "/resume") == []
    [(title, choices), _] = repl.picked
    assert title == "Resume which conversation?"
    [choice] = choices  # the session itself is not offered
    assert choice.endswith("     1 turn  where is the login handler?")
    assert repl.resumed == [first.session_id]


async def test_exit_and_quit_end_the_repl(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        async with opened(server, tmp_path) as session:
            for line in ("/exit", "/quit"):
                repl = RecordingRepl(session, running=True)
                assert await run(repl, line) == []
                assert repl.exited
