"""WebFetch in a run over the real wire: the page's question is one more request to the model
server, named `webfetch`, to the small model the environment picks, and its tokens are the
run's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stayer.events import Event, Finished, ToolCallFinished
from stayer.messages import ModelSpend, TextBlock, Usage
from stayer.session.ask_model import SMALL_FAST_MODEL, small_model
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from tests.fakes.model_server import FakeModelServer
from tests.fakes.sse import DEFAULT_USAGE, Response, ToolCall, anthropic_error, reply
from tests.fakes.web_server import WebPage, WebServer

PAGE = b"<html><body><h1>Tide tables</h1><p>High water at <b>06:12</b>.</p></body></html>"
ANSWER_USAGE = Usage(input_tokens=300, output_tokens=9)
ANSWER = reply("High water is at 06:12.", usage=ANSWER_USAGE)


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer({"/tides": WebPage(PAGE)}) as server:
        yield server


async def _run(
    server: FakeModelServer,
    web: WebServer,
    tmp_path: Path,
    answer: Response = ANSWER,
    **env: str,
) -> list[Event]:
    call = ToolCall("toolu_w1", "WebFetch", {"url": web.url("/tides"), "prompt": "When?"})
    server.enqueue(reply(call), answer, reply("The tide is high at 06:12."))
    options = QueryOptions(
        cwd=tmp_path,
        model="claude-sonnet-4-5",
        env={**server.env(), "STAYER_CONFIG_DIR": str(tmp_path), **env},
        # the page is on loopback: only a rule naming that host exactly lets WebFetch reach it
        allowed_tools=["WebFetch(domain:127.0.0.1)"],
    )
    async with Session(options) as session:
        return [event async for event in session.submit("When is high water?")]


async def test_a_webfetch_asks_the_model_about_the_page_in_a_request_of_its_own(
    server: FakeModelServer, web: WebServer, tmp_path: Path
) -> None:
    events = await _run(server, web, tmp_path)

    main, asked, after = server.requests
    assert [r.headers["x-stayer-purpose"] for r in server.requests] == ["main", "webfetch", "main"]
    assert isinstance(asked.body, dict) and not asked.body.get("tools")  # a question, no tools
    [question] = asked.messages
    assert isinstance(question, dict) and question["role"] == "user"
    [block] = question["content"]
    assert isinstance(block, dict)
    text = str(block["text"])
    assert "<page>\n# Tide tables\n\nHigh water at **06:12**.\n</page>" in text
    assert "The question about it:\nWhen?" in text
    # Behind ANTHROPIC_BASE_URL the one model known to be served is the run's own.
    assert asked.model == main.model == "claude-sonnet-4-5"
    assert "answer the assistant's question" in str(asked.body["system"])

    [finished] = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished.status == "completed"
    assert finished.spent == (ModelSpend("claude-sonnet-4-5", ANSWER_USAGE),)
    assert "High water is at 06:12." in str(after.messages[-1])
    assert isinstance(events[-1], Finished) and events[-1].result_text == (
        "The tide is high at 06:12."
    )


async def test_the_small_fast_model_the_environment_names_answers(
    server: FakeModelServer, web: WebServer, tmp_path: Path
) -> None:
    await _run(server, web, tmp_path, ANTHROPIC_SMALL_FAST_MODEL="gateway-haiku")

    assert [request.model for request in server.requests] == [
        "claude-sonnet-4-5",
        "gateway-haiku",
        "claude-sonnet-4-5",
    ]


async def test_a_refused_question_leaves_the_model_the_page_itself(
    server: FakeModelServer, web: WebServer, tmp_path: Path
) -> None:
    refused = anthropic_error(400, "invalid_request_error", "prompt is too long")
    events = await _run(server, web, tmp_path, answer=refused)

    [finished] = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished.status == "completed" and finished.spent == ()
    [content] = finished.result.content
    assert isinstance(content, TextBlock)
    assert content.text.startswith("(The model asked about the page failed (")
    assert content.text.endswith("as markdown.)\n\n# Tide tables\n\nHigh water at **06:12**.")
    assert len(server.requests) == 3  # a refusal is not retried


async def test_the_webfetch_models_tokens_are_the_runs(
    server: FakeModelServer, web: WebServer, tmp_path: Path
) -> None:
    events = await _run(server, web, tmp_path)

    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.usage == DEFAULT_USAGE + ANSWER_USAGE + DEFAULT_USAGE


@pytest.mark.parametrize(
    ("env", "provider", "injected", "expected"),
    [
        ({}, "anthropic", False, SMALL_FAST_MODEL),
        ({"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}, "anthropic", False, SMALL_FAST_MODEL),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:4000"}, "anthropic", False, "main-model"),
        ({}, "openai", False, "main-model"),
        ({}, "anthropic", True, "main-model"),
        ({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "my-haiku"}, "openai", False, "my-haiku"),
        (
            {"ANTHROPIC_SMALL_FAST_MODEL": "fast", "ANTHROPIC_DEFAULT_HAIKU_MODEL": "haiku"},
            "anthropic",
            False,
            "fast",
        ),
    ],
)
def test_which_model_answers_a_tools_question(
    env: dict[str, str], provider: str, injected: bool, expected: str
) -> None:
    chosen = small_model(env, provider=provider, main_model="main-model", injected=injected)
    assert chosen == expected
