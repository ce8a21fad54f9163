"""The WebFetch tool: fetch a URL, turn it into markdown, and have a small model answer about it.

Claude Code's tool, with its name and input (`url`, `prompt`), so models trained on it call it
unchanged. The page itself never reaches the conversation when a model can answer: the small
model reads it (`ToolContext.ask_model`, purpose ``webfetch``) and only its answer comes back,
billed to the run (`ToolOutput.spent`). Where Claude Code has an answer we follow it:

* a page is kept for `CACHE_TTL_S` (15 minutes) per tool instance, so per session, keyed by its
  URL: asking again reuses the page but still asks the new question;
* the model reads at most `MAX_MARKDOWN_CHARS` of the page, and is told when it was cut;
* a redirect to another host is reported for the model to fetch, never followed (see
  `web_page`); a page of binary content (a PDF, an image) is saved in the session's folder,
  where Read can open it;
* a short list of documentation sites (`stayer.tools.preapproved`) may be fetched without
  asking (``STAYER_NO_PREAPPROVED_HOSTS=1`` turns that off) and quoted freely, and a markdown
  page from one comes back as it is; from any other host the answer keeps quotations short;
* with no model to ask (or when asking fails), the page's markdown itself comes back, cut to the
  result's size, with a note saying so.

The tool changes nothing and may run beside others, but it reaches the network, so each host
needs the user's approval. Its permission subject is the URL's host in canonical form
(`web_address.canonical_host`), so a rule such as ``WebFetch(domain:docs.python.org)`` names
the site however the URL spells it. Loopback, private and other non-public addresses are
refused unless an allow rule names the host exactly (`ToolContext.web_hosts`; see
`web_address`).
"""

from __future__ import annotations

import mimetypes
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import httpx
from msgspec import Struct
from pydantic import Field

from stayer.errors import ModelError
from stayer.messages import JSON
from stayer.tools import names
from stayer.tools.base import MAX_RESULT_CHARS, Tool, ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin import ToolInput
from stayer.tools.builtin.web_address import FetchError, Resolve, host_of, system_resolve
from stayer.tools.builtin.web_page import (
    FETCH_TIMEOUT_S,
    MAX_BODY_BYTES,
    Page,
    Redirect,
    checked_url,
    fetch,
    to_markdown,
)
from stayer.tools.preapproved import PREAPPROVED_HOSTS

CACHE_TTL_S = 15 * 60.0
CACHE_MAX_CHARS = 50_000_000
"""The most markdown the cache holds; the oldest pages go first (Claude Code keeps 50 MB)."""
MAX_MARKDOWN_CHARS = 100_000
"""The most of a page the small model reads (about 25k tokens)."""
ANSWER_MAX_TOKENS = 4_096
WEB_DIR = "web"
"""Where, in the session's folder, binary pages are saved."""

_SYSTEM = (
    "You read one web page for a coding assistant that fetched it, and answer the assistant's "
    "question about it. Work only from the page given; when it does not hold the answer, say "
    "so plainly rather than guess. Be brief and exact: keep names, versions, numbers, code and "
    "links as the page gives them."
)
_OPEN_GUIDE = "Include the details, code examples and passages of documentation the question needs."
_CAREFUL_GUIDE = (
    "- Quote at most 125 characters of the page at a time, always in quotation marks; say "
    "everything else in your own words.\n"
    "- Open-source code may be shown where its license allows it.\n"
    "- Never reproduce song lyrics.\n"
    "- Do not comment on whether the page, the question or your answer is legal."
)


class WebFetchInput(ToolInput):
    """Input of the WebFetch tool (Claude Code's field names)."""

    url: str = Field(description="The URL to fetch: a full http or https address.")
    prompt: str = Field(
        description="What to find out from the page: the question the page's content should "
        "answer, or what to extract from it."
    )


class _Fetched(Struct, frozen=True):
    """A page as the cache keeps it: where it was found, its status, and its markdown."""

    url: str
    status: int
    reason: str
    media_type: str
    size: int
    """The body's length in bytes."""
    markdown: str


class _PageCache:
    """Fetched pages by URL, each kept `ttl_s` by `clock`, at most `max_chars` in all."""

    def __init__(self, clock: Callable[[], float], ttl_s: float, max_chars: int) -> None:
        self._clock, self._ttl_s, self._max_chars = clock, ttl_s, max_chars
        self._pages: OrderedDict[str, tuple[float, _Fetched]] = OrderedDict()

    def get(self, url: str) -> _Fetched | None:
        """The page fetched from `url` within the last `ttl_s`, if there is one."""
        self._expire()
        entry = self._pages.get(url)
        return None if entry is None else entry[1]

    def put(self, url: str, page: _Fetched) -> None:
        """Keep `page` for `url`, dropping the oldest pages while the cache is over its size."""
        self._pages.pop(url, None)
        self._pages[url] = (self._clock(), page)
        total = sum(len(kept.markdown) for _, kept in self._pages.values())
        while total > self._max_chars and len(self._pages) > 1:
            _, (_, dropped) = self._pages.popitem(last=False)
            total -= len(dropped.markdown)

    def _expire(self) -> None:
        now = self._clock()
        for url, (stored, _) in list(self._pages.items()):
            if now - stored >= self._ttl_s:
                del self._pages[url]


class WebFetchTool(Tool[WebFetchInput]):
    """Fetches a web page and answers a question about it with a small model."""

    name = names.WEB_FETCH
    input_model = WebFetchInput
    read_only = True
    subject_kind = "domain"
    max_result_chars = MAX_RESULT_CHARS
    # Every result is a model's short answer or a page cut to fit, with a note saying so.
    bounds_own_results = True
    description = (
        "Fetches a web page and answers a question about it.\n\n"
        "Give the page's `url` and a `prompt` saying what you want to know or extract. The "
        "page is fetched, converted from HTML to markdown, and read by a small, fast model, "
        "which answers the prompt; you get its answer, not the whole page.\n\n"
        "- The URL must be complete (http or https). http is upgraded to https, except for "
        "localhost.\n"
        "- Read-only: it never changes anything. Prefer a more specific tool when one fits "
        "(an MCP server's fetch tool, or the `gh` CLI through Bash for GitHub).\n"
        "- Each site needs the user's approval (a few documentation sites are approved "
        "already). Local and private network addresses are refused unless the user allowed "
        "that host by name.\n"
        "- When a page redirects to another host, the redirect is not followed: the result "
        "gives the new URL, and you call WebFetch again with it.\n"
        "- Very large pages are cut before the model reads them, so ask about what you need.\n"
        "- Pages are kept for 15 minutes: asking another question about the same URL soon "
        "after is fast and does not fetch it again.\n"
        "- Binary content (a PDF, an image) is saved to a file that Read can open."
    )

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        timeout_s: float = FETCH_TIMEOUT_S,
        max_bytes: int = MAX_BODY_BYTES,
        cache_ttl_s: float = CACHE_TTL_S,
        preapproved: frozenset[str] = PREAPPROVED_HOSTS,
        resolve: Resolve = system_resolve,
    ) -> None:
        self._timeout_s = timeout_s
        self._resolve = resolve
        self._preapproved = preapproved
        self._max_bytes = max_bytes
        self._cache = _PageCache(clock, cache_ttl_s, CACHE_MAX_CHARS)

    def is_concurrency_safe(self, tool_input: WebFetchInput) -> bool:
        return True

    def permission_subject(self, tool_input: WebFetchInput) -> str | None:
        try:
            return host_of(checked_url(tool_input.url))
        except FetchError:
            return None

    async def call(self, tool_input: WebFetchInput, ctx: ToolContext) -> ToolOutput:
        started = time.monotonic()
        try:
            url = checked_url(tool_input.url)
        except FetchError as exc:
            raise ToolFailure(str(exc)) from None
        key = str(url)
        page = self._cache.get(key)
        cached = page is not None
        if page is None:
            found = await self._fetch(url, ctx.web_hosts)
            if isinstance(found, Redirect):
                return _redirect_output(found, tool_input.prompt)
            if not found.is_text:
                return _binary_output(found, ctx)
            page = _Fetched(
                found.url,
                found.status,
                found.reason,
                found.media_type,
                len(found.body),
                to_markdown(found),
            )
            self._cache.put(key, page)
        data: dict[str, JSON] = {
            "url": page.url,
            "code": page.status,
            "code_text": page.reason,
            "bytes": page.size,
            "cached": cached,
        }
        preapproved = host_of(url) in self._preapproved
        output = await _answer(
            page, tool_input.prompt, ctx, self.max_result_chars, preapproved=preapproved
        )
        data["duration_ms"] = round((time.monotonic() - started) * 1000)
        return ToolOutput(output.content, data={**data, **output.data}, spent=output.spent)

    async def _fetch(self, url: httpx.URL, reachable: frozenset[str]) -> Page | Redirect:
        try:
            found = await fetch(
                url,
                reachable=reachable,
                resolve=self._resolve,
                timeout_s=self._timeout_s,
                max_bytes=self._max_bytes,
            )
        except FetchError as exc:
            raise ToolFailure(str(exc)) from None
        if isinstance(found, Page) and found.status >= 400:
            raise ToolFailure(
                f"{found.url} answered {found.status} {found.reason}".rstrip()
                + ". Check the address, or look for the page elsewhere."
            )
        return found


async def _answer(
    page: _Fetched, prompt: str, ctx: ToolContext, max_chars: int, *, preapproved: bool
) -> ToolOutput:
    """The small model's answer to `prompt` about `page`, or the page itself with a note; a
    markdown page of a documentation site (`preapproved`) is its own answer, as in Claude Code."""
    if not page.markdown.strip():
        return ToolOutput(f"The page at {page.url} is empty ({page.status} {page.reason}).")
    if preapproved and page.media_type == "text/markdown" and len(page.markdown) <= max_chars:
        return ToolOutput(page.markdown, data={"answered_by": "page"})
    if ctx.ask_model is None:
        note = "No model is available here to answer the prompt, so this is the page itself"
        return _page_output(page, note, max_chars)
    question = _question(page, prompt, preapproved=preapproved)
    try:
        answer = await ctx.ask_model(
            question, system=_SYSTEM, purpose="webfetch", max_tokens=ANSWER_MAX_TOKENS
        )
    except ModelError as exc:
        note = f"The model asked about the page failed ({exc}), so this is the page itself"
        return _page_output(page, note, max_chars)
    text = answer.text.strip() or "(The model gave no answer about this page.)"
    return ToolOutput(text, data={"answered_by": answer.spent.model}, spent=(answer.spent,))


def _question(page: _Fetched, prompt: str, *, preapproved: bool) -> str:
    markdown = page.markdown
    if len(markdown) > MAX_MARKDOWN_CHARS:
        left = len(markdown) - MAX_MARKDOWN_CHARS
        markdown = (
            markdown[:MAX_MARKDOWN_CHARS]
            + f"\n\n[The page was cut here; {left:,} more characters were left out.]"
        )
    guide = _OPEN_GUIDE if preapproved else _CAREFUL_GUIDE
    return (
        f"The page at {page.url}, as markdown:\n\n<page>\n{markdown}\n</page>\n\n"
        f"The question about it:\n{prompt}\n\nIn answering:\n{guide}"
    )


def _page_output(page: _Fetched, note: str, max_chars: int) -> ToolOutput:
    """The page's markdown after `note`, cut to fit `max_chars` with a note when it must be."""
    head = f"({note}: {page.url}, {page.status} {page.reason}, as markdown.)\n\n"
    room = max_chars - len(head)
    if len(page.markdown) <= room:
        return ToolOutput(head + page.markdown, data={"answered_by": "page"})
    tail = f"\n\n[Cut here: the page goes on for {len(page.markdown):,} characters in all.]"
    kept = page.markdown[: room - len(tail)]
    return ToolOutput(head + kept + tail, data={"answered_by": "page", "truncated": True})


def _redirect_output(redirect: Redirect, prompt: str) -> ToolOutput:
    text = (
        "The URL redirects to another host, so the redirect was not followed.\n\n"
        f"URL: {redirect.url}\n"
        f"Redirects to: {redirect.location}\n"
        f"Status: {redirect.status} {redirect.reason}".rstrip()
        + "\n\nTo read the page it points to, call WebFetch again with:\n"
        f"- url: {redirect.location}\n"
        f"- prompt: {prompt}"
    )
    data: dict[str, JSON] = {
        "url": redirect.url,
        "code": redirect.status,
        "code_text": redirect.reason,
        "redirect_url": redirect.location,
    }
    return ToolOutput(text, data=data)


def _binary_output(page: Page, ctx: ToolContext) -> ToolOutput:
    kind = page.media_type or "no content type"
    what = f"{page.url} is binary content ({kind}, {len(page.body):,} bytes), not text"
    data: dict[str, JSON] = {"url": page.url, "code": page.status, "bytes": len(page.body)}
    if ctx.session_dir is None:
        raise ToolFailure(
            f"{what}, so it cannot be shown, and this session keeps no folder to save it in. "
            "Download it with Bash (curl -o) if you need it."
        )
    path = ctx.session_dir / WEB_DIR / f"{ctx.tool_use_id or uuid.uuid4().hex}{_suffix(page)}"
    try:
        _save_private(path, page.body)
    except OSError as exc:
        raise ToolFailure(f"{what}, and saving it to {path} failed: {exc}") from None
    text = (
        f"{what}. It was saved to {path}. Read can open it there if it is a PDF or an image "
        "(png, jpg, gif, webp); other files need a suitable program through Bash."
    )
    return ToolOutput(text, data={**data, "saved_path": str(path)})


def _suffix(page: Page) -> str:
    """A file suffix for the page: its URL's, else one for its media type, else ``.bin``."""
    suffix = PurePosixPath(httpx.URL(page.url).path).suffix
    if suffix and len(suffix) <= 8 and suffix[1:].isalnum():
        return suffix.lower()
    return mimetypes.guess_extension(page.media_type) or ".bin"


def _save_private(path: Path, body: bytes) -> None:
    """Write `body` to `path`, owner-only (a fetched file may be private)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(body)
