"""What the two HTTP providers share: the streaming POST, timeouts and the error mapping.

Both wire formats fail the same ways (an HTTP status with a JSON error body, a cut connection,
an `error` object inside the stream, a server that stalls), so one module turns every such
failure into the typed exceptions of `stayer.errors`, each with a one-line message that says
what to do next. Nothing from httpx or json escapes from here. Every wait on the server runs
under the stream's watchdog (`_watchdog`): its first-byte and idle timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import ssl
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Literal

import httpx
from httpx_sse import EventSource, ServerSentEvent
from msgspec import Struct

from stayer.errors import (
    AuthenticationFailed,
    BadResponse,
    ConnectionLost,
    InvalidRequest,
    ModelError,
    Overloaded,
    PromptTooLong,
    ProtocolMismatch,
    RateLimited,
    ServerError,
)
from stayer.messages import JSON
from stayer.providers._watchdog import FirstByteScale, StreamWatchdog
from stayer.providers.endpoints import preload_tls, tls_context

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_READ_TIMEOUT_S = 600.0
_DETAIL_LIMIT = 300

Kind = Literal["overloaded", "rate_limited", "quota", "auth", "server", "invalid", "bad"]

# Error types (Anthropic's `error.type`, OpenAI's `type` or `code`) and the HTTP status each
# stands for; used for errors that arrive inside a 200 stream, where the status says nothing.
_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    "context_length_exceeded": 400,
    "exceed_context_size_error": 400,
}

_ANTHROPIC_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)")
_OPENAI_TOO_LONG = re.compile(
    r"maximum context length is (\d+) tokens.*?(?:resulted in|requested|you requested) (\d+)",
    re.IGNORECASE | re.DOTALL,
)
_TOO_LONG_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_TAG = re.compile(r"<[^>]*>")


class Endpoint(Struct, frozen=True):
    """Who we talk to and how long we wait: provider name and the settings a person can fix.

    The stream timeouts are the watchdog's (see `_watchdog`); None turns one off, and a
    first-byte scale makes the limit grow with each request's prompt.
    """

    provider: str
    base_url: str
    key_hint: str
    url_hint: str
    read_timeout_s: float
    connect_timeout_s: float
    first_byte_timeout_s: float | FirstByteScale | None
    idle_timeout_s: float | None
    max_connections: int | None = None
    """Connections open at once (all kept alive between calls); None: httpx's default, 100
    open and 20 kept. A client many sessions share (a batch) is sized for them, so that no
    stream queues for a connection and none is reopened at every turn."""


class ApiError(Struct, frozen=True):
    """An error object decoded from a body or a stream event; any field may be empty."""

    message: str
    type: str = ""
    code: str = ""


def new_client(
    timeout: httpx.Timeout, base_url: str, max_connections: int | None = None
) -> httpx.AsyncClient:
    """An HTTP client; TLS verification only where the endpoint speaks TLS; with
    `max_connections`, that many connections open and kept alive."""
    verify: ssl.SSLContext | bool = tls_context() if base_url.startswith("https:") else False
    if max_connections is None:
        return httpx.AsyncClient(timeout=timeout, verify=verify)
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    return httpx.AsyncClient(timeout=timeout, verify=verify, limits=limits)


async def drain(events: AsyncGenerator[ServerSentEvent, None], limit_s: float = 1.0) -> None:
    """Read the rest of a finished stream, so its connection can be reused for the next call.

    A stream closed before its last chunk is read makes httpx drop the connection, and every
    turn would pay a new TCP and TLS handshake. A server that keeps talking past the end is cut
    off after `limit_s`.
    """
    with contextlib.suppress(TimeoutError, ModelError):
        async with asyncio.timeout(limit_s):
            async for _ in events:
                pass


async def _drain_and_close(events: AsyncGenerator[ServerSentEvent, None]) -> None:
    """The rest of a finished stream read, then closed; a failure only costs the connection."""
    try:
        await drain(events)
    finally:
        with contextlib.suppress(Exception):
            await events.aclose()


def make_timeout(*, connect_s: float, read_s: float) -> httpx.Timeout:
    """Read timeout bounds every gap between bytes, so a stalled stream fails instead of hanging."""
    return httpx.Timeout(read_s, connect=connect_s)


def decode_error_body(raw: bytes | str | Mapping[str, JSON]) -> ApiError | None:
    """Find the error object in any of the shapes servers use; None if there is none."""
    data: JSON = raw
    if isinstance(raw, bytes | str):
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return None
    if not isinstance(data, Mapping):
        return None
    error = data.get("error", data)
    if isinstance(error, str):
        return ApiError(message=error)
    if not isinstance(error, Mapping):
        return None
    message = error.get("message")
    if not isinstance(message, str):
        message = "" if message is None else json.dumps(message)
    return ApiError(
        message=message, type=str(error.get("type") or ""), code=str(error.get("code") or "")
    )


# Gateways pass the provider's headers on renamed: LiteLLM prefixes each with `llm_provider-`.
# The server we talk to speaks first (a gateway's own rate limit), then the provider behind it.
_RETRY_AFTER_PREFIXES = ("", "llm_provider-")


def _seconds(value: str) -> float | None:
    """A `retry-after` value (seconds, or an HTTP date) as seconds from now; None if neither."""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `retry-after` (seconds or a date).

    Either may arrive under its own name or as a gateway renamed it (`llm_provider-retry-after`).
    """
    for prefix in _RETRY_AFTER_PREFIXES:
        millis = headers.get(f"{prefix}retry-after-ms")
        if millis is not None:
            try:
                return max(0.0, float(millis) / 1000.0)
            except ValueError:
                pass
        value = headers.get(f"{prefix}retry-after")
        if value is not None and (seconds := _seconds(value)) is not None:
            return seconds
    return None


def clean_detail(text: str) -> str:
    """One line of at most a few hundred characters, markup removed."""
    flat = " ".join(_TAG.sub(" ", text).split())
    if len(flat) > _DETAIL_LIMIT:
        flat = flat[: _DETAIL_LIMIT - 1] + "…"
    return flat


def _body_detail(raw: bytes, error: ApiError | None) -> str:
    if error is not None and error.message:
        return clean_detail(error.message)
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return "no details given"
    if error is None:
        return f"the server's answer was not an API error: {clean_detail(text)!r}"
    return clean_detail(text)


def _prompt_too_long(detail: str, error: ApiError | None, status: int) -> PromptTooLong | None:
    tokens: int | None
    limit: int | None
    match = _ANTHROPIC_TOO_LONG.search(detail)
    if match:
        tokens, limit = int(match.group(1)), int(match.group(2))
    elif match := _OPENAI_TOO_LONG.search(detail):
        limit, tokens = int(match.group(1)), int(match.group(2))
    elif error is not None and (error.code in _TOO_LONG_CODES or error.type in _TOO_LONG_CODES):
        tokens = limit = None
    else:
        return None
    what = f"{tokens} tokens, limit {limit}" if tokens is not None else detail
    return PromptTooLong(
        f"the conversation is too long for the model ({what}); compact it or start a new session",
        status=status,
        tokens=tokens,
        limit=limit,
    )


def _kind(status: int, error: ApiError | None) -> Kind:
    names = {error.type, error.code} if error is not None else set()
    if status == 529 or "overloaded_error" in names:
        return "overloaded"
    if "insufficient_quota" in names:
        return "quota"
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "auth"
    if status in (408, 409) or status >= 500:
        return "server"
    if 400 <= status < 500:
        return "invalid"
    return "bad"


def _invalid_advice(status: int, endpoint: Endpoint) -> str:
    if status == 404:
        return f"check the model name and {endpoint.url_hint}"
    if status == 413:
        return "the request is over the size limit; remove large attachments or images"
    if status == 402:
        return "check the account's billing"
    return "the request was not accepted as sent; check the model name and options"


def _build_error(
    kind: Kind,
    tag: str,
    detail: str,
    endpoint: Endpoint,
    *,
    status: int | None,
    retry: float | None,
) -> ModelError:
    """One typed error with a one-line message: what happened, then what to do."""
    match kind:
        case "overloaded":
            return Overloaded(
                f"{endpoint.provider} is overloaded ({tag}): {detail}; try again shortly",
                status=status,
                retry_after=retry,
            )
        case "rate_limited":
            wait = f"retry after {retry:g} s" if retry is not None else "wait and retry"
            return RateLimited(
                f"rate limited ({tag}): {detail}; {wait}", status=status, retry_after=retry
            )
        case "quota":
            return InvalidRequest(
                f"quota used up ({tag}): {detail}; check the account's plan and billing",
                status=status,
            )
        case "auth":
            what = "the API key was refused" if status == 401 else "permission denied"
            return AuthenticationFailed(
                f"authentication failed ({tag}): {what}: {detail}; check {endpoint.key_hint}",
                status=status,
            )
        case "server":
            return ServerError(
                f"{endpoint.provider} server error ({tag}): {detail}; try again shortly",
                status=status,
                retry_after=retry,
            )
        case "invalid":
            advice = _invalid_advice(status or 400, endpoint)
            return InvalidRequest(f"request rejected ({tag}): {detail}; {advice}", status=status)
        case "bad":
            return BadResponse(
                f"unexpected answer from {endpoint.base_url} ({tag}): {detail}; "
                f"check {endpoint.url_hint}",
                status=status,
                retryable=False,  # a wrong address stays wrong; do not spend minutes retrying it
            )


def _model_not_found(error: ApiError | None, sent: bytes, endpoint: Endpoint) -> str | None:
    """The line for a model the server does not know (a retired one, say), naming the current
    model of its family; None when the 404 is about something else."""
    if error is None or not {error.type, error.code} & {"not_found_error", "model_not_found"}:
        return None
    try:
        model = json.loads(sent).get("model") if sent else None
    except (ValueError, UnicodeDecodeError, AttributeError):
        return None
    if not isinstance(model, str):
        return None
    if error.code != "model_not_found" and model not in error.message:
        return None  # Anthropic's not_found_error names the model; without it, a path is off
    from stayer.providers.models import not_found_advice

    return not_found_advice(model, endpoint.provider, os.environ)


def http_error(
    status: int, headers: Mapping[str, str], raw: bytes, endpoint: Endpoint, *, sent: bytes = b""
) -> ModelError:
    """The typed error for a non-success HTTP answer; garbage bodies still give a clean error.
    `sent` is the request's body, which names the model a 404 may be about."""
    error = decode_error_body(raw)
    if status == 404 and (missing := _model_not_found(error, sent, endpoint)):
        return InvalidRequest(missing, status=status)
    detail = _body_detail(raw, error)
    if 400 <= status < 500:
        too_long = _prompt_too_long(detail, error, status)
        if too_long is not None:
            return too_long
    kind = _kind(status, error)
    if kind == "bad" and 300 <= status < 400:
        location = headers.get("location", "elsewhere")
        detail = f"redirected to {location}"
    # Any status may carry the server's wait (a 529 or 503 as well as a 429); the loop honours it.
    retry = retry_after_s(headers)
    failure = _build_error(kind, str(status), detail, endpoint, status=status, retry=retry)
    # The server may know better than the status code whether trying again can help.
    should_retry = headers.get("x-should-retry", "").strip().lower()
    if should_retry in ("true", "false"):
        failure.retryable = should_retry == "true"
    return failure


def stream_error(error: ApiError, endpoint: Endpoint) -> ModelError:
    """The typed error for an error object inside a stream that began with HTTP 200.

    The status it carries is the one the error type stands for (529 for overloaded), so the
    loop reports and retries it as it would the same failure sent as an HTTP status.
    """
    detail = clean_detail(error.message) or "no details given"
    status = _TYPE_STATUS.get(error.code) or _TYPE_STATUS.get(error.type) or 500
    too_long = _prompt_too_long(detail, error, status)
    if too_long is not None:
        return too_long
    name = error.type or error.code or "error"
    return _build_error(
        _kind(status, error),
        f"{name} during the stream",
        detail,
        endpoint,
        status=status,
        retry=None,
    )


REFUSED_RETRIES = 2
"""Retries of a connection refused by a server that has not answered yet in this process."""


def _cause(exc: BaseException, wanted: Callable[[BaseException], bool]) -> bool:
    """Whether `exc` or anything in its chain of causes is `wanted`."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if wanted(cause):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _never_there(exc: BaseException) -> str | None:
    """What says nothing can answer at the address, if the failure says so: the connection was
    refused (nothing listens there), or the host name does not exist. A temporary failure of
    name lookup (no network yet) is not one of them."""
    if _cause(exc, lambda cause: isinstance(cause, ConnectionRefusedError)):
        return "the connection was refused"
    unknown = (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME))
    if _cause(exc, lambda cause: isinstance(cause, socket.gaierror) and cause.errno in unknown):
        return "its host name does not exist"
    return None


def _unreachable(endpoint: Endpoint, why: str) -> ConnectionLost:
    """A server that never answered and cannot be there (`why`): most likely a wrong address or
    a server not started, so it is retried only twice, quickly, then reported as such."""
    error = ConnectionLost(
        f"could not connect to {endpoint.base_url}: {why} and no server has answered there "
        f"since stayer started; check {endpoint.url_hint}, or start the server"
    )
    error.retry_limit = REFUSED_RETRIES
    return error


def transport_error(exc: Exception, endpoint: Endpoint, *, answered: bool = True) -> ModelError:
    """The typed error for an httpx failure: connecting, timing out, or a cut connection.

    `answered` says whether the server has answered before; a refusal or an unknown host name
    before it ever has is a configuration error (see `_unreachable`), after it a fault that
    passes.
    """
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return InvalidRequest(
            f"the base URL {endpoint.base_url!r} is not a valid http(s) URL; "
            f"fix {endpoint.url_hint}"
        )
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectionLost(
            f"could not connect to {endpoint.base_url} within {endpoint.connect_timeout_s:g} s; "
            f"check the network and {endpoint.url_hint}"
        )
    if isinstance(exc, httpx.ReadTimeout):
        return ConnectionLost(
            f"the server at {endpoint.base_url} sent nothing for {endpoint.read_timeout_s:g} s "
            "(the API_TIMEOUT_MS read timeout), so it may be stalled; lower API_TIMEOUT_MS to "
            "give up on a stalled server sooner, or raise it if the model needs longer to answer"
        )
    if isinstance(exc, httpx.TimeoutException):
        return ConnectionLost(f"the request to {endpoint.base_url} timed out ({reason}); try again")
    if isinstance(exc, httpx.ConnectError):
        if not answered and (why := _never_there(exc)) is not None:
            return _unreachable(endpoint, why)
        return ConnectionLost(
            f"could not connect to {endpoint.base_url} ({reason}); "
            f"check the network and {endpoint.url_hint}"
        )
    if isinstance(exc, httpx.DecodingError):
        return BadResponse(f"the answer from {endpoint.base_url} could not be decoded ({reason})")
    return ConnectionLost(f"the connection to {endpoint.provider} broke ({reason}); try again")


def _check_event_stream(response: httpx.Response, endpoint: Endpoint) -> None:
    content_type = response.headers.get("content-type", "")
    if "text/event-stream" not in content_type:
        raise BadResponse(
            f"expected an event stream from {endpoint.base_url} but got "
            f"{content_type or 'no content type'!r} (HTTP {response.status_code}); "
            f"check {endpoint.url_hint}",
            status=response.status_code,
            retryable=False,
        )


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: bytes,
    endpoint: Endpoint,
    timeouts: httpx.Timeout,
    watchdog: StreamWatchdog,
    settle: Callable[[], Awaitable[None]] | None = None,
    reach: Reach | None = None,
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` (encoded JSON) and yield server-sent events as they arrive; raises only
    `ModelError`.

    Sending, and each read, waits no longer than `watchdog` allows; the caller tells it which
    events were progress. Use under `contextlib.aclosing` so the connection closes as soon as
    the caller stops. A response left unread (a stall, an early stop) closes its connection.
    `settle` is awaited first: the connection's previous stream may still be read to its end.
    `reach` records that the server answered (see `Reach`).
    """
    if settle is not None:
        await settle()
    try:
        request = client.build_request("POST", url, headers=headers, content=body, timeout=timeouts)
        response = await watchdog.wait(client.send(request, stream=True))
        if reach is not None:
            reach.answered = True
        try:
            watchdog.answered()
            if response.status_code >= 300:
                raw = await watchdog.wait(response.aread())
                raise http_error(response.status_code, response.headers, raw, endpoint, sent=body)
            _check_event_stream(response, endpoint)
            async with contextlib.aclosing(EventSource(response).aiter_sse()) as events:
                while True:
                    try:
                        event = await watchdog.wait(anext(events))
                    except StopAsyncIteration:
                        return
                    watchdog.received()
                    yield event
        finally:
            await response.aclose()
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        answered = reach is None or reach.answered
        raise transport_error(exc, endpoint, answered=answered) from exc


class Reach(Struct):
    """Whether a server has answered a request of this connection yet (with any HTTP status).

    Until it has, a refused connection is a wrong address or a server not started, not a fault
    that passes (see `transport_error`); once it has, a refusal is a restart or a blip.
    """

    answered: bool = False


class Connection:
    """One provider's HTTP client: made on first use, reused for every call, closed if ours."""

    def __init__(self, endpoint: Endpoint, client: httpx.AsyncClient | None) -> None:
        self.endpoint = endpoint
        self.timeout = make_timeout(
            connect_s=endpoint.connect_timeout_s, read_s=endpoint.read_timeout_s
        )
        self._client = client
        self._owns_client = client is None
        self._draining: set[asyncio.Task[None]] = set()
        self._reach = Reach()
        if client is None:
            preload_tls(endpoint.base_url)

    def events(
        self, path: str, *, headers: Mapping[str, str], body: bytes
    ) -> tuple[StreamWatchdog, AsyncGenerator[ServerSentEvent, None]]:
        """POST `body`, encoded JSON (the caller's headers say so), to `path` under the base URL
        and stream the events (see `post_sse`).

        The caller calls the watchdog's `progress()` for each event that moved the answer on.
        """
        if self._client is None:
            endpoint = self.endpoint
            self._client = new_client(self.timeout, endpoint.base_url, endpoint.max_connections)
        url = self.endpoint.base_url + path
        watchdog = StreamWatchdog(
            url=url,
            first_byte_s=self.endpoint.first_byte_timeout_s,
            idle_s=self.endpoint.idle_timeout_s,
            body_bytes=len(body),
        )
        events = post_sse(
            self._client,
            url,
            headers=headers,
            body=body,
            endpoint=self.endpoint,
            timeouts=self.timeout,
            watchdog=watchdog,
            settle=self._settle,
            reach=self._reach,
        )
        return watchdog, events

    async def _settle(self) -> None:
        """Wait for the streams still being read to their end (the reading stops after a
        second), so the next request goes out on their connection rather than a new one. They
        are nearly always done long before: the tools run meanwhile."""
        if self._draining:
            await asyncio.wait(set(self._draining))

    def drain_later(self, events: AsyncGenerator[ServerSentEvent, None]) -> None:
        """Read the rest of a finished stream in the background, then close it.

        The answer is complete at its last event (`message_stop`, `[DONE]`), and the loop acts
        on it then: a server slow to end the body (one that waits for Nagle's algorithm, say,
        about 40 ms) must not hold up the tools, yet the body must be read to the end for the
        connection to be reused (see `drain`)."""
        task = asyncio.create_task(_drain_and_close(events))
        self._draining.add(task)
        task.add_done_callback(self._draining.discard)

    async def aclose(self) -> None:
        """Close the HTTP client if this connection created it, and any stream still read."""
        for task in list(self._draining):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None


_FORMATS = {"anthropic": "Anthropic Messages", "openai": "OpenAI Chat Completions"}


def not_the_protocol(endpoint: Endpoint, what: str) -> ProtocolMismatch:
    """The error for a 200 answer whose stream is not the format this endpoint speaks."""
    name = _FORMATS.get(endpoint.provider, endpoint.provider)
    return ProtocolMismatch(
        f"the server at {endpoint.base_url} answered something that is not the {name} "
        f"streaming format ({what}); check {endpoint.url_hint}"
    )


def decode_event_data(data: str, endpoint: Endpoint) -> dict[str, JSON]:
    """The JSON object in one event's data; anything else breaks the protocol."""
    try:
        value = json.loads(data)
    except ValueError:
        raise not_the_protocol(
            endpoint, f"an event that is not JSON: {clean_detail(data)!r}"
        ) from None
    if not isinstance(value, dict):
        raise not_the_protocol(
            endpoint, f"an event that is not a JSON object: {clean_detail(data)!r}"
        )
    return value
