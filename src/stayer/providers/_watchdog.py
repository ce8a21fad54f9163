"""The watchdog of one model stream: its first-byte and idle timeouts.

httpx's read timeout (API_TIMEOUT_MS) bounds each silence on the socket, and any byte restarts it:
a server that accepts the request and never answers holds the call for the whole read timeout,
and one that sends only keep-alives (Anthropic `ping` events, SSE comments, chunks that carry
nothing) holds it forever. The watchdog counts only progress, which the provider reports with
`progress()` once an event moved the answer on, and measures only the time spent waiting on the
server (not the time the caller spent with an event), so a slow reader cannot trip it.

The first-byte limit scales with what is asked unless a fixed one is set
(CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS): a server must read the whole prompt before it can answer,
so the limit is a base plus time per thousand prompt tokens, longer for a local server than for
a hosted API (`FirstByteScale`, `first_byte_scale`). A dead server is then noticed in about half
a minute while a 1M-token prompt still gets minutes.

Its failure is a retryable `ConnectionLost` naming the timeout, how long it waited, the URL and
the variable that tunes it; the loop's retry sends the request again and withdraws any partial
answer. The connection it was read on is closed with the response, never reused.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Literal, TypeAlias, TypeVar
from urllib.parse import urlsplit

from msgspec import Struct

from stayer.errors import ConnectionLost

T = TypeVar("T")

FIRST_BYTE_VARIABLE = "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS"
IDLE_VARIABLE = "CLAUDE_STREAM_IDLE_TIMEOUT_MS"


class FirstByteScale(Struct, frozen=True):
    """A first-byte limit that grows with the prompt: `base_s`, plus `per_1k_tokens_s` for each
    thousand prompt tokens, at most `cap_s`."""

    base_s: float
    per_1k_tokens_s: float
    cap_s: float

    def limit(self, prompt_tokens: int) -> float:
        """Seconds allowed before the first event of the answer to a prompt this long."""
        grown = self.base_s + self.per_1k_tokens_s * prompt_tokens / 1000
        return round(min(self.cap_s, grown), 1)


AUTO: Literal["auto"] = "auto"
"""The first-byte setting that picks the scale for the server (`first_byte_scale`)."""

FirstByte: TypeAlias = float | FirstByteScale | Literal["auto"] | None
"""A first-byte setting: a fixed limit in seconds, a scale, `AUTO`, or None (off)."""

HOSTED_FIRST_BYTE = FirstByteScale(base_s=30.0, per_1k_tokens_s=0.15, cap_s=180.0)
"""Anthropic's API and the other known hosted APIs, where the first event is the message's
start, sent once the prompt is read (thinking then streams as progress).

The base is where Claude Code starts calling a silent stream a stall (it logs 30 s without an
event). A hosted model reads an uncached prompt at several thousand tokens a second or more (an
estimate with margin; a cached one far faster), so 0.15 s per thousand tokens (under 7,000 a
second) covers the slow case: a 20k-token request gets 33 s, 200k gets 60 s, and a 1M-token
prompt 180 s, which is also the cap (no hosted window is larger; base64 images inflate the
estimate, and the cap keeps them from stretching the limit past what any prompt needs). A
stalled small request is thus retried about half a minute after it was sent.
"""

HOSTED_SILENT_FIRST_BYTE = FirstByteScale(base_s=90.0, per_1k_tokens_s=0.15, cap_s=240.0)
"""Hosted Chat Completions APIs (OpenAI's, Azure's, the others in `_HOSTED_CHAT`), whose
reasoning models may send nothing at all until they have finished thinking: a 30 s limit cuts
gpt-5 at medium effort in the middle of a healthy answer (mezmo/aura#62), and every retry pays
for the thinking again. A minute and a half lets medium effort through and still retries a
stalled small request within 100 s; high effort needs the variable raised.
"""

LOCAL_FIRST_BYTE = FirstByteScale(base_s=45.0, per_1k_tokens_s=1.0, cap_s=600.0)
"""Servers on this machine, a private address, or any host not known as a hosted API (a local
model, a gateway in front of one). A local server reads a prompt far more slowly: a GPU at one
to a few thousand tokens a second, a laptop at a few hundred, and it may first load the model
from disk. A second per thousand tokens on top of 45 s gives a 15k-token request a minute and a
100k-token one two and a half; the cap is the 600 s read timeout, past which the socket gives up
anyway. A model reading on a CPU needs the variable raised (which raises the read timeout too).
"""

# Hosts of hosted APIs (the name or a parent domain). Anything else counts as local: a wrong
# guess there only means more patience.
_HOSTED_ANTHROPIC = ("anthropic.com",)
_HOSTED_CHAT = (
    "openai.com",
    "openai.azure.com",
    "openrouter.ai",
    "deepseek.com",
    "groq.com",
    "together.xyz",
    "fireworks.ai",
    "mistral.ai",
    "googleapis.com",
    "x.ai",
)

BYTES_PER_TOKEN = 4
"""The prompt's size in tokens is estimated from the request body: about four bytes of JSON a
token for English and code (the body is at hand; counting tokens is not)."""


def first_byte_scale(base_url: str, provider: str) -> FirstByteScale:
    """The scale `AUTO` stands for at `base_url`, spoken in `provider`'s format."""
    host = host_of(base_url)
    if _under(host, _HOSTED_ANTHROPIC):
        return HOSTED_FIRST_BYTE
    if _under(host, _HOSTED_CHAT):
        return HOSTED_FIRST_BYTE if provider == "anthropic" else HOSTED_SILENT_FIRST_BYTE
    return LOCAL_FIRST_BYTE


def resolved(setting: FirstByte, base_url: str, provider: str) -> float | FirstByteScale | None:
    """A first-byte setting with `AUTO` replaced by the scale for the server."""
    if setting == AUTO:
        return first_byte_scale(base_url, provider)
    return setting


def prompt_tokens(body_bytes: int) -> int:
    """About how many tokens a request body of `body_bytes` bytes holds."""
    return body_bytes // BYTES_PER_TOKEN


def host_of(url: str) -> str:
    """The host `url` names, in lower case; empty when it names none or cannot be read (the
    request then fails with its own one-line error)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # `http://[::1`: a bracket left open
        return ""


def _under(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == domain or host.endswith("." + domain) for domain in domains)


DEFAULT_IDLE_TIMEOUT_S = 300.0
"""The longest wait between two events that move the answer on, once it has begun.

Text arrives many times a second, but a tool call's input need not: Anthropic holds back each
input value until the model has written all of it, so a Write of a large file is minutes of
pings and nothing else (a 20k-token file at 80 tokens a second is four). Cutting such an answer
loses it whole, and again on every retry. Five minutes, Claude Code's choice too, lets all but
the very largest through; a longer silence is far more likely a stall than a model at work.
"""


class StreamWatchdog:
    """Times one stream: the first-byte limit until `progress()` is first called, then the idle
    limit between calls. A limit of None or 0 is off.
    """

    __slots__ = (
        "_began",
        "_first_byte_s",
        "_headers",
        "_idle_s",
        "_keepalives",
        "_tokens",
        "_url",
        "_waited",
    )

    def __init__(
        self,
        *,
        url: str,
        first_byte_s: float | FirstByteScale | None,
        idle_s: float | None,
        body_bytes: int = 0,
    ) -> None:
        """A scale's first-byte limit is for the prompt in a request body of `body_bytes`."""
        self._url = url
        self._tokens: int | None = None
        if isinstance(first_byte_s, FirstByteScale):
            self._tokens = prompt_tokens(body_bytes)
            first_byte_s = first_byte_s.limit(self._tokens)
        self._first_byte_s = _limit(first_byte_s, "first_byte_s")
        self._idle_s = _limit(idle_s, "idle_s")
        self._began = False
        self._headers = False
        self._keepalives = 0  # events since the last progress that carried none
        self._waited = 0.0  # seconds spent waiting on the server since the last progress

    @property
    def first_byte_s(self) -> float | None:
        """The first-byte limit of this stream, in seconds (None: off)."""
        return self._first_byte_s

    def progress(self) -> None:
        """The last event moved the answer on: restart the clock, now under the idle limit."""
        self._began = True
        self._keepalives = 0
        self._waited = 0.0

    def answered(self) -> None:
        """The response headers are in; a stall's message says how far the server got."""
        self._headers = True

    def received(self) -> None:
        """An event arrived; until `progress()` says otherwise it counts as a keep-alive."""
        self._keepalives += 1

    async def wait(self, step: Awaitable[T]) -> T:
        """Await `step` (a send, a read) within what is left of the current limit."""
        limit = self._idle_s if self._began else self._first_byte_s
        if limit is None:
            return await step
        started = time.monotonic()
        timer = asyncio.timeout(max(0.0, limit - self._waited))
        try:
            async with timer:
                return await step
        except TimeoutError:
            if timer.expired():
                raise self._stalled(limit) from None
            raise
        finally:
            self._waited += time.monotonic() - started

    def _seen(self) -> str:
        """What did arrive, for the message."""
        if not self._headers:
            return "not even response headers"
        count = self._keepalives
        events = f"only {count} keep-alive event{'s' if count != 1 else ''}" if count else ""
        if self._began:
            return events or "no event at all"
        return f"response headers, then {events or 'no event'}"

    def _stalled(self, limit: float) -> ConnectionLost:
        if self._began:
            return ConnectionLost(
                f"the idle timeout fired: the stream from {self._url} made no progress for "
                f"{limit:g} s ({self._seen()}), so the server may be stalled; try again, or raise "
                f"{IDLE_VARIABLE} if the model pauses longer (0 turns the timeout off)"
            )
        tokens = self._tokens
        allowed = "" if tokens is None else f", the limit for about {tokens:,} prompt tokens"
        return ConnectionLost(
            f"the first-byte timeout fired: {self._url} did not start its answer within "
            f"{limit:g} s of the request{allowed} ({self._seen()}), so the server may be "
            f"stalled; try again, or raise {FIRST_BYTE_VARIABLE} if the model needs longer to "
            "start (0 turns the timeout off)"
        )


def _limit(value: float | None, name: str) -> float | None:
    if value is None or value == 0:
        return None
    if not value > 0:
        raise ValueError(f"{name} must be positive, 0 or None (off), not {value!r}")
    return float(value)
