"""WebFetch against a real HTTP server on 127.0.0.1: pages, redirects, limits, the cache, and
the small model's part (a recording `ask_model`, the contract the session fills in)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from stayer.errors import Overloaded
from stayer.messages import ModelSpend, Usage
from stayer.permissions import Rule
from stayer.tools.base import MAX_RESULT_CHARS, ModelAnswer, ToolContext, ToolFailure
from stayer.tools.builtin.web_page import MAX_BODY_BYTES, Page, checked_url, same_site, upgraded
from stayer.tools.builtin.webfetch import (
    CACHE_TTL_S,
    MAX_MARKDOWN_CHARS,
    WebFetchInput,
    WebFetchTool,
)
from tests.fakes.web_server import ENDLESS, ENDLESS_LIMIT, HELD, Route, WebPage, WebServer
from tests.unit.tools.helpers import run_tool, text_of

ARTICLE = (
    b"<!doctype html><html><head><title>Lighthouses</title><style>p{color:red}</style>"
    b"<script>var secret = 'not content';</script></head><body>"
    b"<h1>Lighthouses</h1><p>The <b>Fastnet</b> light stands 54 m tall.</p>"
    b"<ul><li>granite</li><li>cast iron</li></ul><pre><code>beam = 'white'</code></pre>"
    b"<p><a href='/keepers'>Keepers</a></p></body></html>"
)
ARTICLE_MARKDOWN = (
    "Lighthouses\n\n# Lighthouses\n\nThe **Fastnet** light stands 54 m tall.\n\n"
    "- granite\n- cast iron\n\n```\nbeam = 'white'\n```\n\n[Keepers](/keepers)"
)
SPEND = ModelSpend("claude-haiku-4-5", Usage(input_tokens=900, output_tokens=20))
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256))


@pytest.fixture
def web() -> Iterator[WebServer]:
    routes: dict[str, Route] = {
        "/article": WebPage(ARTICLE),
        "/plain": WebPage(b"line one\nline two\n", "text/plain"),
        "/data": WebPage(json.dumps({"name": "stayer", "tools": 12}).encode(), "application/json"),
        "/latin": WebPage("café crème".encode("latin-1"), "text/plain; charset=iso-8859-1"),
        "/zipped": WebPage(
            gzip.compress(b"squeezed text"), "text/plain", headers={"Content-Encoding": "gzip"}
        ),
        "/moved": WebPage(status=301, headers={"Location": "/article"}),
        "/hop": WebPage(status=302, headers={"Location": "/moved"}),
        "/loop": WebPage(status=302, headers={"Location": "/loop"}),
        "/empty": WebPage(b"", "text/plain"),
        "/image.png": WebPage(PNG, "image/png"),
        "/endless": ENDLESS,
        "/declared-huge": WebPage(b"x" * 2048, "text/plain"),
        "/slow": HELD,
    }
    with WebServer(routes) as server:
        server.routes["/away"] = WebPage(
            status=302, headers={"Location": server.url("/article", host="localhost")}
        )
        yield server


@dataclass
class Asker:
    """A model that answers every question with `answer`, keeping the questions."""

    answer: str = "The light is 54 m tall."
    questions: list[tuple[str, str, str, int]] = field(default_factory=list)
    spend: ModelSpend = SPEND

    async def __call__(
        self, prompt: str, *, system: str, purpose: str, max_tokens: int = 1024
    ) -> ModelAnswer:
        self.questions.append((prompt, system, purpose, max_tokens))
        return ModelAnswer(self.answer, self.spend)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def asked(question: str) -> str:
    """The prompt part of a question put to the small model."""
    return question.split("The question about it:\n", 1)[1].split("\n\nIn answering:", 1)[0]


LOCAL = frozenset({"127.0.0.1"})
"""What an allow rule naming the test server's host exactly, `WebFetch(domain:127.0.0.1)`, gives
the tool: without it, a loopback address is refused (see test_web_addresses.py)."""


def context(tmp_path: Path, asker: Asker | None = None) -> ToolContext:
    return ToolContext(cwd=tmp_path, ask_model=asker, tool_use_id="toolu_web_1", web_hosts=LOCAL)


# --- pages ------------------------------------------------------------------------------------


async def test_an_html_page_is_read_by_the_small_model_as_markdown(
    web: WebServer, tmp_path: Path
) -> None:
    asker = Asker()
    output = await run_tool(
        WebFetchTool(), context(tmp_path, asker), url=web.url("/article"), prompt="How tall?"
    )

    assert text_of(output) == "The light is 54 m tall."
    assert output.spent == (asker.spend,)
    assert not output.is_error
    [(question, system, purpose, max_tokens)] = asker.questions
    assert purpose == "webfetch"
    assert f"<page>\n{ARTICLE_MARKDOWN}\n</page>" in question
    assert "How tall?" in question
    assert "secret" not in question and "color:red" not in question  # script and style dropped
    assert "125 characters" in question  # 127.0.0.1 is no documentation site: short quotes
    assert "web page" in system and max_tokens == 4_096
    assert output.data["code"] == 200 and output.data["cached"] is False
    assert output.data["url"] == web.url("/article")


@pytest.mark.parametrize(
    ("path", "markdown"),
    [
        ("/plain", "line one\nline two\n"),
        ("/data", '{"name": "stayer", "tools": 12}'),
        ("/latin", "café crème"),
        ("/zipped", "squeezed text"),
    ],
)
async def test_text_that_is_not_html_is_read_as_it_is(
    web: WebServer, tmp_path: Path, path: str, markdown: str
) -> None:
    asker = Asker()
    await run_tool(WebFetchTool(), context(tmp_path, asker), url=web.url(path), prompt="What?")

    [(question, *_)] = asker.questions
    assert f"<page>\n{markdown}\n</page>" in question


async def test_without_a_model_the_page_itself_comes_back_and_says_so(
    web: WebServer, tmp_path: Path
) -> None:
    output = await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/article"), prompt="?")

    assert text_of(output) == (
        "(No model is available here to answer the prompt, so this is the page itself: "
        f"{web.url('/article')}, 200 OK, as markdown.)\n\n{ARTICLE_MARKDOWN}"
    )
    assert output.spent == ()


async def test_without_a_model_a_long_page_is_cut_to_the_result_size_with_a_note(
    web: WebServer, tmp_path: Path
) -> None:
    web.routes["/long"] = WebPage(b"word " * 40_000, "text/plain")  # 200,000 characters
    output = await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/long"), prompt="?")

    text = text_of(output)
    assert len(text) == MAX_RESULT_CHARS
    assert text.endswith("\n\n[Cut here: the page goes on for 200,000 characters in all.]")
    assert output.data["truncated"] is True


async def test_a_failing_model_leaves_the_page_itself_with_the_reason(
    web: WebServer, tmp_path: Path
) -> None:
    async def overloaded(
        prompt: str, *, system: str, purpose: str, max_tokens: int = 1024
    ) -> ModelAnswer:
        raise Overloaded("the model is overloaded (529)")

    ctx = ToolContext(cwd=tmp_path, ask_model=overloaded, web_hosts=LOCAL)
    output = await run_tool(WebFetchTool(), ctx, url=web.url("/plain"), prompt="?")

    assert text_of(output) == (
        "(The model asked about the page failed (the model is overloaded (529)), so this is "
        f"the page itself: {web.url('/plain')}, 200 OK, as markdown.)\n\nline one\nline two\n"
    )
    assert not output.is_error and output.spent == ()


async def test_the_model_reads_at_most_its_share_of_a_long_page(
    web: WebServer, tmp_path: Path
) -> None:
    web.routes["/long"] = WebPage(b"a" * (MAX_MARKDOWN_CHARS + 5_000), "text/plain")
    asker = Asker()
    await run_tool(WebFetchTool(), context(tmp_path, asker), url=web.url("/long"), prompt="?")

    [(question, *_)] = asker.questions
    page = question.split("<page>\n", 1)[1].split("\n</page>", 1)[0]
    assert page == "a" * MAX_MARKDOWN_CHARS + (
        "\n\n[The page was cut here; 5,000 more characters were left out.]"
    )


async def test_an_empty_page_is_reported_without_asking(web: WebServer, tmp_path: Path) -> None:
    asker = Asker()
    output = await run_tool(
        WebFetchTool(), context(tmp_path, asker), url=web.url("/empty"), prompt="?"
    )

    assert text_of(output) == f"The page at {web.url('/empty')} is empty (200 OK)."
    assert asker.questions == []


# --- redirects --------------------------------------------------------------------------------


async def test_redirects_within_the_host_are_followed(web: WebServer, tmp_path: Path) -> None:
    asker = Asker()
    output = await run_tool(
        WebFetchTool(), context(tmp_path, asker), url=web.url("/hop"), prompt="?"
    )

    assert output.data["url"] == web.url("/article")
    assert [web.hits["/hop"], web.hits["/moved"], web.hits["/article"]] == [1, 1, 1]
    assert ARTICLE_MARKDOWN in asker.questions[0][0]


async def test_a_redirect_to_another_host_is_returned_not_followed(
    web: WebServer, tmp_path: Path
) -> None:
    asker = Asker()
    output = await run_tool(
        WebFetchTool(), context(tmp_path, asker), url=web.url("/away"), prompt="How tall?"
    )

    target = web.url("/article", host="localhost")
    assert text_of(output) == (
        "The URL redirects to another host, so the redirect was not followed.\n\n"
        f"URL: {web.url('/away')}\nRedirects to: {target}\nStatus: 302 Found\n\n"
        "To read the page it points to, call WebFetch again with:\n"
        f"- url: {target}\n- prompt: How tall?"
    )
    assert not output.is_error
    assert output.data["redirect_url"] == target
    assert web.hits["/article"] == 0 and asker.questions == []


async def test_a_redirect_loop_ends_with_a_clear_error(web: WebServer, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure, match=r"redirected more than 5 times within its own site"):
        await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/loop"), prompt="?")
    assert web.hits["/loop"] == 6


def test_same_site_redirects_may_add_or_drop_www_but_not_change_scheme_port_or_host() -> None:
    origin = httpx.URL("https://example.com/a")
    assert same_site(origin, httpx.URL("https://www.example.com/b"))
    assert same_site(httpx.URL("https://www.example.com/"), httpx.URL("https://example.com/b"))
    assert not same_site(origin, httpx.URL("http://example.com/b"))
    assert not same_site(origin, httpx.URL("https://example.com:8443/b"))
    assert not same_site(origin, httpx.URL("https://evil.example/b"))
    assert not same_site(origin, httpx.URL("https://user:pw@example.com/b"))


# --- failures and limits ----------------------------------------------------------------------


async def test_a_missing_page_is_an_error_naming_the_status(web: WebServer, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/nowhere"), prompt="?")
    assert str(failure.value) == (
        f"{web.url('/nowhere')} answered 404 Not Found. Check the address, or look for the "
        "page elsewhere."
    )


async def test_an_endless_body_is_cut_off_at_the_cap(web: WebServer, tmp_path: Path) -> None:
    with pytest.raises(ToolFailure) as failure:
        await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/endless"), prompt="?")
    assert str(failure.value) == (
        f"The page at {web.url('/endless')} is larger than 10 MB (the body went on past that), "
        "so it was not read. Fetch a more specific page, or download it with Bash (curl) and "
        "search it."
    )
    assert web.endless_done.wait(10)
    # The client hung up once past the cap (the sockets' buffers may hold tens of MB more), before
    # the server's own limit.
    assert web.endless_hung_up
    assert MAX_BODY_BYTES < web.endless_sent < ENDLESS_LIMIT


async def test_a_declared_length_over_the_cap_is_refused_before_reading(
    web: WebServer, tmp_path: Path
) -> None:
    tool = WebFetchTool(max_bytes=1024)
    with pytest.raises(ToolFailure, match=r"it says it is 2,048 bytes"):
        await run_tool(tool, context(tmp_path), url=web.url("/declared-huge"), prompt="?")


async def test_a_slow_server_hits_the_timeout(web: WebServer, tmp_path: Path) -> None:
    tool = WebFetchTool(timeout_s=0.2)
    with pytest.raises(ToolFailure) as failure:
        await run_tool(tool, context(tmp_path), url=web.url("/slow"), prompt="?")
    assert str(failure.value) == (
        f"Fetching {web.url('/slow')} took longer than 0.2 s and was stopped; the site may be "
        "slow or down. Try again later or another source."
    )


async def test_binary_content_is_saved_for_read_not_given_to_the_model(
    web: WebServer, tmp_path: Path
) -> None:
    asker = Asker()
    ctx = ToolContext(
        cwd=tmp_path,
        ask_model=asker,
        session_dir=tmp_path / "session",
        tool_use_id="toolu_img",
        web_hosts=LOCAL,
    )
    output = await run_tool(WebFetchTool(), ctx, url=web.url("/image.png"), prompt="?")

    saved = tmp_path / "session" / "web" / "toolu_img.png"
    assert text_of(output) == (
        f"{web.url('/image.png')} is binary content (image/png, {len(PNG)} bytes), not text. "
        f"It was saved to {saved}. Read can open it there if it is a PDF or an image (png, "
        "jpg, gif, webp); other files need a suitable program through Bash."
    )
    assert saved.read_bytes() == PNG
    assert saved.stat().st_mode & 0o777 == 0o600
    assert asker.questions == []


async def test_binary_content_with_no_session_folder_is_a_clear_error(
    web: WebServer, tmp_path: Path
) -> None:
    with pytest.raises(ToolFailure, match=r"is binary content \(image/png, 272 bytes\)"):
        await run_tool(WebFetchTool(), context(tmp_path), url=web.url("/image.png"), prompt="?")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.com/file", "is not an http or https URL"),
        ("example.com/page", "is not an http or https URL"),
        ("https://user:secret@example.com/", "user name or password"),
        ("https://example.com/" + "a" * 2_000, "the most is 2000"),
    ],
)
async def test_unusable_urls_are_refused_before_any_fetch(
    tmp_path: Path, url: str, problem: str
) -> None:
    with pytest.raises(ToolFailure, match=problem):
        await run_tool(WebFetchTool(), context(tmp_path), url=url, prompt="?")


# --- the https upgrade, the subject, the tool's nature ----------------------------------------


@pytest.mark.parametrize(
    ("given", "fetched"),
    [
        ("http://example.com/docs?q=1", "https://example.com/docs?q=1"),
        ("http://example.com:8080/", "https://example.com:8080/"),
        ("https://example.com/", "https://example.com/"),
        ("http://localhost:8000/", "http://localhost:8000/"),
        ("http://127.0.0.1:9/x", "http://127.0.0.1:9/x"),
        ("http://127.1.2.3/", "http://127.1.2.3/"),
        ("http://[::1]:8000/", "http://[::1]:8000/"),
        ("http://app.localhost/", "http://app.localhost/"),
    ],
)
def test_http_is_upgraded_to_https_except_on_loopback(given: str, fetched: str) -> None:
    assert str(upgraded(httpx.URL(given))) == fetched
    assert str(checked_url(given)) == fetched


def test_the_permission_subject_is_the_host_a_domain_rule_names() -> None:
    tool = WebFetchTool()
    fetch = WebFetchInput(url="http://Docs.Python.org/3/library/", prompt="?")
    assert (tool.subject_kind, tool.permission_subject(fetch)) == ("domain", "docs.python.org")
    assert tool.permission_subject(WebFetchInput(url="not a url", prompt="?")) is None
    rule = Rule.parse("WebFetch(domain:docs.python.org)")
    assert rule.matches("WebFetch", "docs.python.org", Path("/"), kind="domain")
    assert not rule.matches("WebFetch", "evil.example", Path("/"), kind="domain")


def test_webfetch_is_read_only_and_concurrency_safe() -> None:
    tool = WebFetchTool()
    call = WebFetchInput(url="https://example.com/", prompt="?")
    assert tool.is_read_only(call) and tool.is_concurrency_safe(call)


# --- the cache --------------------------------------------------------------------------------


async def test_a_page_is_fetched_once_in_15_minutes_and_asked_each_question(
    web: WebServer, tmp_path: Path
) -> None:
    clock, asker = Clock(), Asker()
    tool, ctx = WebFetchTool(clock=clock), context(tmp_path, asker)

    await run_tool(tool, ctx, url=web.url("/article"), prompt="How tall?")
    clock.now += CACHE_TTL_S - 1
    second = await run_tool(tool, ctx, url=web.url("/article"), prompt="What is it made of?")

    assert web.hits["/article"] == 1
    assert second.data["cached"] is True
    assert [asked(question[0]) for question in asker.questions] == [
        "How tall?",
        "What is it made of?",
    ]
    assert all(ARTICLE_MARKDOWN in question[0] for question in asker.questions)
    assert second.spent == (asker.spend,)  # the question is asked, and billed, again

    clock.now += 1
    third = await run_tool(tool, ctx, url=web.url("/article"), prompt="Again?")
    assert web.hits["/article"] == 2 and third.data["cached"] is False


async def test_the_cache_belongs_to_one_tool_instance(web: WebServer, tmp_path: Path) -> None:
    ctx = context(tmp_path, Asker())
    await run_tool(WebFetchTool(), ctx, url=web.url("/plain"), prompt="?")
    await run_tool(WebFetchTool(), ctx, url=web.url("/plain"), prompt="?")
    assert web.hits["/plain"] == 2


async def test_failures_are_not_cached(web: WebServer, tmp_path: Path) -> None:
    tool, ctx = WebFetchTool(), context(tmp_path, Asker())
    for _ in range(2):
        with pytest.raises(ToolFailure):
            await run_tool(tool, ctx, url=web.url("/nowhere"), prompt="?")
    assert web.hits["/nowhere"] == 2


# --- documentation sites ----------------------------------------------------------------------


async def test_a_documentation_sites_markdown_page_comes_back_as_it_is(
    web: WebServer, tmp_path: Path
) -> None:
    web.routes["/guide.md"] = WebPage(b"# Guide\n\nUse *it* well.\n", "text/markdown")
    asker = Asker()
    tool = WebFetchTool(preapproved=frozenset({"127.0.0.1"}))
    output = await run_tool(tool, context(tmp_path, asker), url=web.url("/guide.md"), prompt="?")

    assert text_of(output) == "# Guide\n\nUse *it* well.\n"
    assert asker.questions == [] and output.spent == ()


async def test_a_documentation_sites_html_page_may_be_quoted_at_length(
    web: WebServer, tmp_path: Path
) -> None:
    asker = Asker()
    tool = WebFetchTool(preapproved=frozenset({"127.0.0.1"}))
    await run_tool(tool, context(tmp_path, asker), url=web.url("/article"), prompt="?")

    [(question, *_)] = asker.questions
    assert "125 characters" not in question
    assert question.endswith("code examples and passages of documentation the question needs.")


def test_the_known_documentation_sites_are_preapproved_by_default() -> None:
    from stayer.tools.preapproved import PREAPPROVED_HOSTS

    assert {"docs.python.org", "developer.mozilla.org"} <= PREAPPROVED_HOSTS
    assert "127.0.0.1" not in PREAPPROVED_HOSTS


def test_pages_of_markdown_type_are_not_converted() -> None:
    from stayer.tools.builtin.web_page import to_markdown

    page = Page("https://x.test/", 200, "OK", "text/markdown", b"<b>kept</b> as is", None)
    assert to_markdown(page) == "<b>kept</b> as is"
