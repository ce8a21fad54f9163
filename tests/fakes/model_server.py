"""A real HTTP model server on loopback that plays scripted Anthropic and OpenAI responses.

One uvicorn server per test process runs in a daemon thread with its own event loop, so it keeps
serving while a sync test blocks, an async test awaits, or a CLI subprocess talks to it. Each
`FakeModelServer` is a tenant of it under its own path prefix (`server.url`), which makes
starting one free and keeps tests apart.

Every request is recorded and its history checked against the API's pairing rules; a
violation is answered with the API's own 400 text and kept in `server.violations`.
`FakeModelServer(gateway="litellm")` poses, on the OpenAI endpoint, as the LiteLLM proxy in
front of Anthropic: it checks what translating to Anthropic needs (tool arguments that are JSON
objects, signed `thinking_blocks`), streams thinking as LiteLLM does, and passes the headers of
scripted errors on renamed, as LiteLLM passes on the provider's. A request
with nothing scripted gets a 500 and lands in `server.unexpected`. Leaving the `with` block
fails the test on violations, unexpected requests, or scripted responses nobody asked for.

`GET /v1/models` (the model list stayer reads to keep its aliases current) is answered from
`server.models` in Anthropic's shape (paged by `limit` and `after_id`) or OpenAI's, as the
request's headers say, and kept apart in `server.list_requests`, so a test counting model calls
does not count it; a request without the credentials the real API wants gets its 401.

    with FakeModelServer() as server:
        server.enqueue(reply(ToolCall("toolu_1", "Bash", {"command": "ls"})), reply("done"))
        provider = AnthropicProvider(api_key="k", base_url=server.url)
"""

from __future__ import annotations

import asyncio
import atexit
import json
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl

import uvicorn

from stayer.messages import JSON, history_problems, message_from_wire
from tests.fakes.sse import Gateway, HttpError, Reply, Response, Stream, WireProtocol

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

PAUSE_LIMIT_S = 10.0
"""A paused stream nobody resumes is cut after this long, so a broken test cannot hang."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server saw it; header names are lower case."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: JSON
    protocol: WireProtocol | None
    peer: tuple[str, int] | None = None
    """The client's address and port: one port for many requests means a reused connection."""
    raw: bytes = b""
    """The body as sent, byte for byte (what a prompt cache sees)."""
    query: Mapping[str, str] = field(default_factory=dict[str, str])
    """The query string's parameters."""

    @property
    def messages(self) -> list[JSON]:
        """The conversation the client sent."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return list(messages) if isinstance(messages, list) else []

    @property
    def model(self) -> str:
        """The model the client asked for."""
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""


@dataclass(frozen=True, slots=True)
class Unexpected:
    """A request the script did not account for, and why."""

    request: RecordedRequest
    reason: str


Responder = Callable[[RecordedRequest], Response]


@dataclass(frozen=True, slots=True)
class ListedModel:
    """One entry of the fake's model list."""

    id: str
    created_at: str
    """RFC 3339, as Anthropic's list gives it (OpenAI's gives the same moment in seconds)."""
    max_input_tokens: int | None = None
    max_tokens: int | None = None


DEFAULT_MODELS: tuple[ListedModel, ...] = (
    ListedModel("claude-opus-5-5", "2026-10-20T00:00:00Z"),
    ListedModel("claude-sonnet-5-5", "2026-10-06T00:00:00Z"),
    ListedModel("claude-haiku-5-5", "2026-09-15T00:00:00Z"),
    ListedModel("claude-fable-5-2", "2026-11-10T00:00:00Z"),
    ListedModel("gpt-5.5", "2026-08-01T00:00:00Z"),
    ListedModel("gpt-4.1", "2025-04-14T00:00:00Z"),
)
"""What the fake lists unless a test says otherwise: the models stayer's table names today,
so a run that reads the list resolves every alias as the table does."""

_LIST_PATH = "/v1/models"


class _Disconnected(Exception):
    """The client went away, or the test's server closed, while a fault was playing."""


# --- history invariants -----------------------------------------------------------------------


def _blocks(message: Mapping[str, JSON]) -> list[JSON]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _count_cache_control(body: Mapping[str, JSON]) -> int:
    def count(value: JSON) -> int:
        if isinstance(value, dict):
            own = 1 if "cache_control" in value else 0
            return own + sum(count(v) for k, v in value.items() if k != "cache_control")
        if isinstance(value, list):
            return sum(count(v) for v in value)
        return 0

    return count(body.get("system")) + count(body.get("tools")) + count(body.get("messages"))


def _anthropic_shape_problem(body: Mapping[str, JSON]) -> str | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    previous = None
    for i, message in enumerate(messages):
        extra = sorted(set(message) - {"role", "content"})
        if extra:
            return f"messages.{i}.{extra[0]}: Extra inputs are not permitted"
        role = message.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if role == previous:
            return (
                'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        previous = role
    found = _count_cache_control(body)
    if found > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
    return None


def _anthropic_pairing_problem(messages: list[JSON]) -> str | None:
    """The API's words for what `history_problems` finds (one rule set for the harness's own
    repair, its tests and this server), after the checks only the wire shows."""
    for i, message in enumerate(messages):
        if message.get("role") == "assistant":
            for k, block in enumerate(_blocks(message)):
                if block.get("type") == "thinking" and "signature" not in block:
                    return f"messages.{i}.content.{k}.thinking.signature: Field required"
    try:
        decoded = [message_from_wire(message) for message in messages]
    except ValueError as error:
        return f"messages: {error}"
    for problem in history_problems(decoded):
        if problem.fault == "unanswered_tool_use":
            return _missing_results(problem.index, list(problem.ids))
        if problem.fault == "unexpected_tool_result":
            blocks = _blocks(messages[problem.index])
            k = next(k for k, b in enumerate(blocks) if b.get("tool_use_id") in problem.ids)
            return (
                f"messages.{problem.index}.content.{k}: unexpected `tool_use_id` found in "
                f"`tool_result` blocks: {problem.ids[0]}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
        if problem.fault == "empty_assistant":
            return (
                f"messages.{problem.index}: all messages must have non-empty content except for "
                "the optional final assistant message"
            )
    return None


def _missing_results(index: int, ids: list[str]) -> str:
    return (
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(ids)}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )


def anthropic_history_problem(body: JSON) -> str | None:
    """The API's 400 message for a Messages request that breaks its rules, or None."""
    if not isinstance(body, dict):
        return "There was an error parsing the body of your request"
    return _anthropic_shape_problem(body) or _anthropic_pairing_problem(body["messages"])


# What plain OpenAI accepts on each message; anything else is refused, `thinking_blocks` too.
_OPENAI_MESSAGE_KEYS: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset(
        {"role", "content", "name", "refusal", "tool_calls", "function_call", "audio"}
    ),
    "tool": frozenset({"role", "content", "tool_call_id"}),
}
# LiteLLM also takes the thinking an Anthropic model streamed through it.
_LITELLM_EXTRA_KEYS: dict[str, frozenset[str]] = {"assistant": frozenset({"thinking_blocks"})}
_LITELLM_400 = "litellm.BadRequestError: AnthropicException -"


def _openai_shape_problem(messages: list[JSON], gateway: Gateway | None) -> str | None:
    for i, message in enumerate(messages):
        role = message.get("role")
        allowed = _OPENAI_MESSAGE_KEYS.get(role)
        if allowed is None:
            return f"Invalid value: '{role}'. Supported values are: {sorted(_OPENAI_MESSAGE_KEYS)}."
        if gateway == "litellm":
            allowed = allowed | _LITELLM_EXTRA_KEYS.get(role, frozenset())
        extra = sorted(set(message) - allowed)
        if extra:
            return (
                f"Additional properties are not allowed ('{extra[0]}' was unexpected) - "
                f"'messages.{i}'"
            )
    return None


def _openai_pairing_problem(messages: list[JSON]) -> str | None:
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.get("role") == "tool":
            return (
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'."
            )
        i += 1
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            continue
        wanted = [call["id"] for call in calls]
        answered: list[str] = []
        while i < len(messages) and messages[i].get("role") == "tool":
            answered.append(messages[i].get("tool_call_id"))
            i += 1
        for tool_call_id in answered:
            if tool_call_id not in wanted:
                return (
                    f"Invalid parameter: 'tool_call_id' of '{tool_call_id}' not found in "
                    "'tool_calls' of previous message."
                )
        missing = [tool_id for tool_id in wanted if tool_id not in answered]
        if missing:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}"
            )
    return None


def _litellm_arguments_problem(call: Mapping[str, JSON]) -> str | None:
    """LiteLLM parses each call's arguments into Anthropic's `tool_use.input`, an object."""
    arguments = call.get("function", {}).get("arguments")
    if not isinstance(arguments, str) or not arguments:
        return None  # it sends an empty input for these
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return f"{_LITELLM_400} {exc}"
    if not isinstance(value, dict):
        return f"{_LITELLM_400} tool_use.input: Input should be a valid dictionary"
    return None


def _litellm_thinking_problem(index: int, blocks: JSON) -> str | None:
    """Anthropic refuses thinking that comes back unsigned, and redacted thinking without data."""
    if not isinstance(blocks, list):
        return f"messages.{index}.thinking_blocks: Input should be a valid list"
    for k, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        needed = {"thinking": "signature", "redacted_thinking": "data"}.get(str(kind))
        if needed is None:
            return f"messages.{index}.content.{k}: Input tag '{kind}' does not match any tag"
        if not isinstance(block.get(needed), str) or not block[needed]:
            return f"messages.{index}.content.{k}.{kind}.{needed}: Field required"
    return None


def _litellm_problem(messages: list[JSON]) -> str | None:
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            problem = _litellm_arguments_problem(call)
            if problem is not None:
                return problem
        if "thinking_blocks" in message:
            problem = _litellm_thinking_problem(i, message["thinking_blocks"])
            if problem is not None:
                return problem
    return None


def openai_history_problem(body: JSON, gateway: Gateway | None = None) -> str | None:
    """The 400 message for a chat request that plain OpenAI (or `gateway`) refuses, or None.

    Plain OpenAI refuses unknown message fields and tool messages that do not pair up; a
    gateway adds what translating to its provider needs.
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "'messages' is a required property"
    messages: list[JSON] = body["messages"]
    problem = _openai_shape_problem(messages, gateway) or _openai_pairing_problem(messages)
    if problem is None and gateway == "litellm":
        problem = _litellm_problem(messages)
    return problem


def _api_error_body(protocol: WireProtocol | None, message: str, error_type: str) -> bytes:
    if protocol == "openai":
        error = {"message": message, "type": error_type, "param": None, "code": None}
        return json.dumps({"error": error}).encode()
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return json.dumps({**body, "request_id": "req_fake"}).encode()


def _protocol_of(method: str, path: str) -> WireProtocol | None:
    if method != "POST":
        return None
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    return None


def _epoch(moment: str) -> int:
    return int(datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp())


def _anthropic_list(models: tuple[ListedModel, ...], query: Mapping[str, str]) -> JSON:
    """One page of Anthropic's list: `limit` models (20 unless asked; checked to be 1 to 1000)
    after the `after_id` cursor, and whether more follow."""
    limit = int(query.get("limit", "20"))
    ids = [m.id for m in models]
    start = ids.index(query["after_id"]) + 1 if query.get("after_id") in ids else 0
    page = models[start : start + limit]
    data = [
        {
            "type": "model",
            "id": m.id,
            "display_name": m.id,
            "created_at": m.created_at,
            **({"max_input_tokens": m.max_input_tokens} if m.max_input_tokens else {}),
            **({"max_tokens": m.max_tokens} if m.max_tokens else {}),
        }
        for m in page
    ]
    return {
        "data": data,
        "has_more": start + limit < len(models),
        "first_id": page[0].id if page else None,
        "last_id": page[-1].id if page else None,
    }


# --- the scripted tenant ----------------------------------------------------------------------


class FakeModelServer:
    """A scripted model endpoint; use as a context manager so leftovers fail the test.

    Streams are paced `pacing_s` apart per frame so clients see them arrive in pieces;
    `instant=True` sends every frame at once (benchmarks, long loops). Faults scripted on a
    `Stream` (stalls, pauses, cuts) play in either mode.
    """

    def __init__(
        self,
        *,
        instant: bool = False,
        pacing_s: float = 0.001,
        allow_unused: bool = False,
        gateway: Gateway | None = None,
    ) -> None:
        self.instant = instant
        self.gateway = gateway
        self.pacing_s = 0.0 if instant else pacing_s
        self.allow_unused = allow_unused
        self._id = secrets.token_hex(4)
        self._lock = threading.Lock()
        self._queue: deque[Response] = deque()
        self._responder: Responder | None = None
        self._requests: list[RecordedRequest] = []
        self._violations: list[str] = []
        self._unexpected: list[Unexpected] = []
        self._abandoned: list[RecordedRequest] = []
        self._resume = threading.Event()
        self._list_requests: list[RecordedRequest] = []
        self.models: tuple[ListedModel, ...] = DEFAULT_MODELS
        """The model list `GET /v1/models` answers with, newest first as Anthropic orders it."""
        self.list_status = 200
        """Set to an error status to make the model list fail (a 500, say)."""
        self._closed = False
        self._host: _Host | None = None

    # lifecycle

    def start(self) -> FakeModelServer:
        """Register with the shared server (started on first use)."""
        self._host = _Host.get()
        self._host.register(self._id, self)
        return self

    def close(self) -> None:
        """Stop serving; faults still playing end by dropping their connection."""
        self._closed = True
        if self._host is not None:
            self._host.unregister(self._id)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        if exc_type is None:  # a failing test's own error says more than our leftovers
            self.verify()

    @property
    def url(self) -> str:
        """Base URL for Anthropic clients (they add /v1/messages)."""
        if self._host is None:
            raise RuntimeError("start the FakeModelServer (use it in a with block) first")
        return f"http://127.0.0.1:{self._host.port}/fake/{self._id}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients, /v1 included as OPENAI_BASE_URL has it."""
        return f"{self.url}/v1"

    def env(self, protocol: WireProtocol = "anthropic") -> dict[str, str]:
        """Environment variables pointing a stayer subprocess at this server."""
        if protocol == "anthropic":
            return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "test-key"}
        return {"OPENAI_BASE_URL": self.openai_url, "OPENAI_API_KEY": "test-key"}

    # scripting

    def enqueue(self, *responses: Response) -> None:
        """Answer the next requests with these, in order."""
        with self._lock:
            self._queue.extend(responses)

    def respond_with(self, responder: Responder | None) -> None:
        """Build answers from requests once the queue is empty (None turns it off).

        The responder runs on the server's thread, between requests: keep it quick.
        """
        with self._lock:
            self._responder = responder

    def resume(self) -> None:
        """Let a stream held by `Stream.paused` go on."""
        self._resume.set()

    # what happened

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def list_requests(self) -> list[RecordedRequest]:
        """Every `GET /v1/models` so far (never in `requests`)."""
        with self._lock:
            return list(self._list_requests)

    @property
    def violations(self) -> list[str]:
        """The 400 messages sent for histories that broke the API's rules."""
        with self._lock:
            return list(self._violations)

    @property
    def unexpected(self) -> list[Unexpected]:
        """Requests the script did not account for."""
        with self._lock:
            return list(self._unexpected)

    @property
    def pending(self) -> int:
        """Scripted responses not yet requested."""
        with self._lock:
            return len(self._queue)

    @property
    def abandoned(self) -> list[RecordedRequest]:
        """Requests whose client hung up before the answer was complete, in that order."""
        with self._lock:
            return list(self._abandoned)

    def wait_for_abandoned(self, count: int, timeout_s: float = 5.0) -> list[RecordedRequest]:
        """Block until `count` clients hung up mid-answer (the server notices within ~20 ms)."""
        deadline = time.monotonic() + timeout_s
        while len(self.abandoned) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} hang-ups, got {len(self.abandoned)}")
            time.sleep(0.005)
        return self.abandoned

    def take_violations(self) -> list[str]:
        """Return and forget the violations, for tests that provoke one on purpose."""
        with self._lock:
            taken, self._violations = self._violations, []
        return taken

    def take_unexpected(self) -> list[Unexpected]:
        """Return and forget the unexpected requests, for tests that provoke one on purpose."""
        with self._lock:
            taken, self._unexpected = self._unexpected, []
        return taken

    def wait_for_requests(self, count: int, timeout_s: float = 5.0) -> list[RecordedRequest]:
        """Block until `count` requests arrived (for subprocess tests); raises on timeout."""
        deadline = time.monotonic() + timeout_s
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} requests, got {len(self.requests)}")
            time.sleep(0.005)
        return self.requests

    def verify(self) -> None:
        """Fail with every problem seen: violations, unexpected requests, unused responses."""
        with self._lock:
            problems = [f"history violation: {v}" for v in self._violations]
            problems += [f"unexpected {u.request.path}: {u.reason}" for u in self._unexpected]
            if self._queue and not self.allow_unused:
                problems.append(f"{len(self._queue)} scripted response(s) were never requested")
        if problems:
            raise AssertionError("fake model server: " + " | ".join(problems))

    # serving (runs on the server thread)

    def _next(self, request: RecordedRequest) -> Response | str:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is None:
            return "no scripted response left for this request"
        try:
            return responder(request)
        except Exception as exc:  # a broken responder must fail the test, not the server
            return f"the responder raised {exc!r}"

    def _reject(self, request: RecordedRequest, reason: str) -> HttpError:
        with self._lock:
            self._unexpected.append(Unexpected(request, reason))
        body = _api_error_body(request.protocol, f"fake model server: {reason}", "api_error")
        return HttpError(500, body, protocol=request.protocol)

    def _history_problem(self, request: RecordedRequest) -> str | None:
        if request.protocol == "anthropic":
            return anthropic_history_problem(request.body)
        return openai_history_problem(request.body, self.gateway)

    def _plan(self, request: RecordedRequest) -> Stream | HttpError:
        protocol = request.protocol
        if protocol is None:
            return self._reject(request, f"no fake endpoint for {request.method} {request.path}")
        problem = self._history_problem(request)
        if problem is not None:
            with self._lock:
                self._violations.append(problem)
            body = _api_error_body(protocol, problem, "invalid_request_error")
            return HttpError(400, body, protocol=protocol)
        response = self._next(request)
        if isinstance(response, str):
            return self._reject(request, response)
        gateway = self.gateway if protocol == "openai" else None
        if isinstance(response, Reply):
            return response.render(protocol, request_model=request.model, gateway=gateway)
        if response.protocol not in (None, protocol):
            return self._reject(request, f"a {response.protocol} response was scripted")
        if gateway == "litellm":
            # What a test scripts is what the provider behind the gateway said; LiteLLM hands
            # the provider's headers on, each renamed with a prefix.
            renamed = {f"llm_provider-{k}": v for k, v in response.headers.items()}
            return replace(response, headers=renamed)
        return response

    def _model_list(self, request: RecordedRequest) -> tuple[int, bytes]:
        """The status and body for `GET /v1/models`, in the shape the headers ask for."""
        headers = request.headers
        if "anthropic-version" in headers:
            if "x-api-key" not in headers and "authorization" not in headers:
                return 401, _api_error_body(
                    "anthropic", "x-api-key header is required", "authentication_error"
                )
            if self.list_status != 200:
                return self.list_status, _api_error_body("anthropic", "list failed", "api_error")
            limit = request.query.get("limit", "20")
            if not limit.isdigit() or not 1 <= int(limit) <= 1000:
                message = "limit: Input should be less than or equal to 1000"
                return 400, _api_error_body("anthropic", message, "invalid_request_error")
            return 200, json.dumps(_anthropic_list(self.models, request.query)).encode()
        if not headers.get("authorization", "").startswith("Bearer "):
            message = "You didn't provide an API key."
            return 401, _api_error_body("openai", message, "invalid_request_error")
        if self.list_status != 200:
            return self.list_status, _api_error_body("openai", "list failed", "server_error")
        data = [
            {"id": m.id, "object": "model", "created": _epoch(m.created_at), "owned_by": "fake"}
            for m in self.models
        ]
        return 200, json.dumps({"object": "list", "data": data}).encode()

    async def handle(self, request: RecordedRequest, receive: Receive, send: Send) -> None:
        """Answer one request; a fault ends it by returning without finishing the body."""
        if request.method == "GET" and request.path == _LIST_PATH:
            with self._lock:
                self._list_requests.append(request)
            status, body = self._model_list(request)
            await self._send_error(HttpError(status, body), send, asyncio.Event())
            return
        with self._lock:
            self._requests.append(request)
        response = self._plan(request)
        gone = asyncio.Event()
        watcher = asyncio.create_task(_watch_disconnect(receive, gone))
        try:
            if isinstance(response, HttpError):
                await self._send_error(response, send, gone)
            else:
                await self._send_stream(response, send, gone)
        except _Disconnected:
            if gone.is_set():
                with self._lock:
                    self._abandoned.append(request)
            return  # uvicorn drops a connection whose body never finished
        finally:
            watcher.cancel()

    async def _sleep(self, seconds: float, gone: asyncio.Event) -> None:
        deadline = time.monotonic() + seconds
        while True:
            if self._closed or gone.is_set():
                raise _Disconnected
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.02))

    async def _wait_resumed(self, gone: asyncio.Event) -> None:
        deadline = time.monotonic() + PAUSE_LIMIT_S
        while not self._resume.is_set():
            if time.monotonic() > deadline:
                raise _Disconnected
            await self._sleep(0.005, gone)
        self._resume.clear()

    async def _send_error(self, response: HttpError, send: Send, gone: asyncio.Event) -> None:
        await self._sleep(response.stall_before_headers, gone)
        headers = [(b"content-type", response.content_type.encode())]
        headers += [(k.encode(), v.encode()) for k, v in response.headers.items()]
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": response.body, "more_body": False})

    async def _send_stream(self, stream: Stream, send: Send, gone: asyncio.Event) -> None:
        await self._sleep(stream.stall_before_headers, gone)
        headers = [(b"content-type", stream.content_type.encode()), (b"cache-control", b"no-cache")]
        headers += [(k.encode(), v.encode()) for k, v in stream.headers.items()]
        await send({"type": "http.response.start", "status": stream.status, "headers": headers})
        delay = 0.0 if self.instant else (stream.event_delay or self.pacing_s)
        for index, chunk in enumerate(stream.frames):
            if stream.cut_after is not None and index >= stream.cut_after:
                raise _Disconnected
            if index == stream.pause_at:
                await self._wait_resumed(gone)
            if index in stream.stalls:
                await self._sleep(stream.stalls[index], gone)
            elif delay and index:
                # Paced streams can be long (keep-alives for seconds): stop once the client left.
                await self._sleep(delay, gone)
            else:
                # Instant frames give way once each: uvicorn learns of a hang-up only between
                # steps, and until then every frame is written to a dead socket, and logged.
                await asyncio.sleep(0)
                if gone.is_set() or self._closed:
                    raise _Disconnected
            await send({"type": "http.response.body", "body": chunk.encode(), "more_body": True})
        if stream.cut_after is not None:
            raise _Disconnected
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _watch_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


# --- the shared server ------------------------------------------------------------------------


async def _read_body(receive: Receive) -> bytes | None:
    """The request's body, or None when the client left before sending all of it (a client
    that gave up on a slow server, say): that is no history of theirs to judge."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


def _decode(raw: bytes) -> JSON:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


class _Host:
    """The one uvicorn server of this process, routing /fake/<id>/… to its tenants."""

    _instance: _Host | None = None
    _instance_lock = threading.Lock()

    @classmethod
    def get(cls) -> _Host:
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = _Host()
            return cls._instance

    def __init__(self) -> None:
        self.tenants: dict[str, FakeModelServer] = {}
        self.lock = threading.Lock()
        # IPPROTO_TCP, not 0: asyncio turns Nagle off only on sockets that name TCP, and with
        # Nagle on, the last chunk of every response waits ~40 ms for a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port: int = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level="critical",
            access_log=False,
            lifespan="off",
            interface="asgi3",
            proxy_headers=False,
            http="h11",
            loop="asyncio",
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [sock]},
            name="fake-model-server",
            daemon=True,
        )
        self.thread.start()
        deadline = time.monotonic() + 10.0
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake model server did not start")
            time.sleep(0.002)
        atexit.register(self.stop)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=3.0)

    def register(self, tenant_id: str, tenant: FakeModelServer) -> None:
        with self.lock:
            self.tenants[tenant_id] = tenant

    def unregister(self, tenant_id: str) -> None:
        with self.lock:
            self.tenants.pop(tenant_id, None)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = await _read_body(receive)
        if raw is None:
            return
        parts = scope["path"].split("/", 3)
        tenant_id = parts[2] if len(parts) > 2 and parts[1] == "fake" else ""
        rest = parts[3] if len(parts) > 3 else ""
        with self.lock:
            tenant = self.tenants.get(tenant_id)
        if tenant is None:
            start = {"type": "http.response.start", "status": 404, "headers": []}
            await send(start)
            await send({"type": "http.response.body", "body": b"no such fake model server"})
            return
        path = "/" + rest.rstrip("/")
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        request = RecordedRequest(
            method=scope["method"],
            path=path,
            headers=headers,
            body=_decode(raw),
            protocol=_protocol_of(scope["method"], path),
            peer=tuple(scope["client"]) if scope.get("client") else None,
            raw=raw,
            query=dict(parse_qsl(scope.get("query_string", b"").decode())),
        )
        await tenant.handle(request, receive, send)
