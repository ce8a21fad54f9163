"""Fetching one web page for WebFetch: the URL's checks, redirects, the size cap, and markdown.

What it does, and why (Claude Code's WebFetch where it has an answer):

* only http and https URLs of at most `MAX_URL_CHARS`, with no user name or password in them;
  the host is put in its one canonical form (`web_address.canonical_host`), and plain http is
  upgraded to https, except for loopback hosts (a local server seldom has TLS);
* only public addresses are connected to, unless the user allowed the host by name
  (`web_address`): each name is resolved and checked, the connection goes to an address that
  passed, and the address actually reached is checked again before the body is read;
* redirects are not followed blindly: one that stays on the site (the same scheme, port and
  host, a ``www.`` added or dropped) is followed, at most `MAX_REDIRECTS` in a row, each hop
  checked like the first; one to another site comes back as a `Redirect` for the model to
  decide on, so a page cannot send the fetch somewhere the user never approved;
* the body is streamed and the fetch stops once it passes `MAX_BODY_BYTES` (10 MB), and the
  whole fetch has `FETCH_TIMEOUT_S`, so a huge or a trickling page cannot hold the run;
* HTML becomes markdown with markdownify (a mature, pure-Python converter in the spirit of the
  Turndown library Claude Code uses); scripts, styles and other non-content are dropped first.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re

import httpx
from msgspec import Struct

from stayer._version import __version__
from stayer.tools.builtin.web_address import (
    FetchError,
    Resolve,
    Route,
    canonical_host,
    check_peer,
    host_of,
    routes,
    system_resolve,
)

MAX_URL_CHARS = 2_000
MAX_BODY_BYTES = 10 * 1024 * 1024
"""The most of a body read; a larger page is refused rather than cut (a cut page misleads)."""
FETCH_TIMEOUT_S = 60.0
"""For the whole fetch, redirects included."""
MAX_REDIRECTS = 5
"""Same-site redirects followed in a row before the fetch gives up."""
USER_AGENT = f"stayer/{__version__} (WebFetch)"

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HEADERS = {"User-Agent": USER_AGENT, "Accept": "text/markdown, text/html, */*;q=0.8"}
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/javascript",
        "application/ecmascript",
        "application/xml",
        "application/xhtml+xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "image/svg+xml",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_DROPPED_TAGS = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "object")
_SNIFF_BYTES = 8_192
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


class Page(Struct, frozen=True):
    """A fetched page: where it ended up, its status, media type, and body."""

    url: str
    status: int
    reason: str
    media_type: str
    """The Content-Type without its parameters, in lower case ("" when the server sent none)."""
    body: bytes
    charset: str | None
    """The charset the Content-Type names, if it names one."""

    @property
    def is_text(self) -> bool:
        """Whether the body is text the model can read (else it is binary: a PDF, an image)."""
        kind = self.media_type
        if kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml")):
            return b"\0" not in self.body[:_SNIFF_BYTES]
        return not kind and b"\0" not in self.body[:_SNIFF_BYTES]

    @property
    def text(self) -> str:
        """The body decoded as its Content-Type says (UTF-8 if it says nothing)."""
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")


class Redirect(Struct, frozen=True):
    """A redirect to another site, reported instead of followed."""

    url: str
    location: str
    status: int
    reason: str


def checked_url(raw: str) -> httpx.URL:
    """The model's URL, parsed and upgraded to https where it should be; `FetchError` if it
    cannot be fetched."""
    text = raw.strip()
    if len(text) > MAX_URL_CHARS:
        raise FetchError(f"The URL is {len(text):,} characters long; the most is {MAX_URL_CHARS}.")
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise FetchError(f"{text!r} is not a valid URL ({exc}); give a full http(s) URL.") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise FetchError(
            f"{text!r} is not an http or https URL; give a full URL such as https://example.com/."
        )
    if url.userinfo:
        raise FetchError("URLs with a user name or password are not fetched; leave them out.")
    return upgraded(_canonical(url))


def _canonical(url: httpx.URL) -> httpx.URL:
    """`url` with its host in canonical form (`canonical_host`)."""
    host = canonical_host(host_of(url))
    return url if host == host_of(url) else url.copy_with(host=host)


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine (localhost, 127.0.0.0/8, ::1)."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def upgraded(url: httpx.URL) -> httpx.URL:
    """`url` with http upgraded to https, unless its host is loopback (Claude Code upgrades
    every http URL; a local server rarely speaks TLS, so that would only break it)."""
    if url.scheme == "http" and not is_loopback(url.host):
        # The default port goes with the scheme; an explicit one is kept.
        return url.copy_with(scheme="https")
    return url


def _bare_host(host: str) -> str:
    name = host.lower().rstrip(".")
    return name.removeprefix("www.")


def same_site(origin: httpx.URL, target: httpx.URL) -> bool:
    """Whether a redirect from `origin` to `target` stays on the site and may be followed."""
    return (
        origin.scheme == target.scheme
        and origin.port == target.port
        and not target.userinfo
        and _bare_host(origin.host) == _bare_host(target.host)
    )


class _Limits(Struct, frozen=True):
    """What bounds one fetch: the hosts it may reach at any address, how names are resolved,
    the body's size, and the time."""

    reachable: frozenset[str]
    resolve: Resolve
    max_bytes: int
    timeout_s: float


async def fetch(
    url: httpx.URL,
    *,
    reachable: frozenset[str] = frozenset(),
    resolve: Resolve = system_resolve,
    timeout_s: float = FETCH_TIMEOUT_S,
    max_bytes: int = MAX_BODY_BYTES,
    max_redirects: int = MAX_REDIRECTS,
) -> Page | Redirect:
    """GET `url` (from `checked_url`), following same-site redirects; raises `FetchError` for
    what failed, an address off limits included. `reachable` are the hosts WebFetch may reach
    whatever their address (those an allow rule names exactly)."""
    limits = _Limits(reachable, resolve, max_bytes, timeout_s)
    try:
        async with asyncio.timeout(timeout_s):
            return await _follow(url, limits, max_redirects)
    except (TimeoutError, httpx.TimeoutException):
        raise FetchError(
            f"Fetching {url} took longer than {timeout_s:g} s and was stopped; the site may be "
            "slow or down. Try again later or another source."
        ) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"Could not fetch {url}: {_described(exc)}") from None


async def _follow(url: httpx.URL, limits: _Limits, max_redirects: int) -> Page | Redirect:
    """The page at `url`, after at most `max_redirects` same-site redirects."""
    current = url
    for _ in range(max_redirects + 1):
        answer = await _request(current, limits)
        if isinstance(answer, Page):
            return answer
        status, reason, location = answer
        target = current.join(location)
        if not same_site(current, target):
            return Redirect(str(current), str(target), status, reason)
        current = _canonical(target)
    raise FetchError(
        f"{url} redirected more than {max_redirects} times within its own site; it may loop. "
        f"The last address was {current}."
    )


async def _request(url: httpx.URL, limits: _Limits) -> Page | tuple[int, str, str]:
    """The page at `url`, or a redirect's status, reason and location: through each route that
    passed the address checks in turn, until one connects."""
    *others, last = await routes(url, reachable=limits.reachable, resolve=limits.resolve)
    for route in others:
        with contextlib.suppress(httpx.ConnectError):
            return await _send(url, route, limits)
    return await _send(url, last, limits)


async def _send(url: httpx.URL, route: Route, limits: _Limits) -> Page | tuple[int, str, str]:
    # CA bundles from the environment apply, as they do to model calls; its proxies are
    # chosen by the route, so the address checks know whether one is in the way.
    transport = httpx.AsyncHTTPTransport(proxy=route.proxy, trust_env=True)
    async with (
        httpx.AsyncClient(
            transport=transport, headers=_HEADERS, timeout=limits.timeout_s, follow_redirects=False
        ) as client,
        client.stream(
            "GET", route.url, headers=route.headers, extensions=route.extensions
        ) as response,
    ):
        stream = response.extensions.get("network_stream")
        check_peer(route, None if stream is None else stream.get_extra_info("server_addr"))
        location = response.headers.get("location")
        if response.status_code in _REDIRECTS and location is not None:
            return response.status_code, response.reason_phrase, location
        return await _page(response, url, limits.max_bytes)


async def _page(response: httpx.Response, url: httpx.URL, max_bytes: int) -> Page:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, max_bytes, f"it says it is {int(declared):,} bytes")
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():  # gzip and the like undone, then counted
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(url, max_bytes, "the body went on past that")
            parts.append(chunk)
    except httpx.DecodingError as exc:
        raise FetchError(f"Could not decode the body of {url}: {exc}") from None
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return Page(
        str(url),
        response.status_code,
        response.reason_phrase,
        media_type,
        b"".join(parts),
        response.charset_encoding,
    )


def _too_large(url: httpx.URL, max_bytes: int, why: str) -> FetchError:
    return FetchError(
        f"The page at {url} is larger than {max_bytes // (1024 * 1024)} MB ({why}), so it was "
        "not read. Fetch a more specific page, or download it with Bash (curl) and search it."
    )


def _described(exc: httpx.HTTPError) -> str:
    text = str(exc).strip()
    cause = exc.__cause__ or exc.__context__
    if not text and cause is not None:
        text = str(cause).strip()
    return text or type(exc).__name__


def is_html(page: Page) -> bool:
    """Whether the page is HTML: by its Content-Type, or by its start when it has none."""
    if page.media_type:
        return page.media_type in _HTML_TYPES
    start = page.body[:256].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))


def to_markdown(page: Page) -> str:
    """The page as markdown: HTML converted, any other text as it is."""
    if not is_html(page):
        return page.text
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    # Bytes, so a charset named only in a <meta> tag is found too.
    soup = BeautifulSoup(page.body, "html.parser", from_encoding=page.charset)
    for tag in soup(_DROPPED_TAGS):
        tag.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", newline_style="backslash")
    # Runs of blank lines only cost tokens.
    return _BLANK_RUNS.sub("\n\n", converter.convert_soup(soup)).strip()
