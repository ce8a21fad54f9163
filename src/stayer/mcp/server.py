"""One configured MCP server: its connection, its life, and the calls made to it.

Each server lives in one task of its own on the caller's event loop (the SDK's context managers
are entered and left in that task, as anyio requires); everything else only reads what the task
keeps and sends requests over the session it holds. The task connects under a deadline, lists
what the server offers, then waits: for the connection to be lost (a stdio server that exited,
an HTTP server gone), for the server to say its tools changed, or for `aclose()`. A server that
was up and is lost is started again after a back-off, a few times at most; one that never came
up is failed with one line saying why. Nothing here raises out of the task.

The `mcp` SDK is imported in a worker thread by the task before it is used (it costs most of a
second), so neither `import stayer` nor a run without MCP servers pays for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import math
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

import anyio
import anyio.abc

from stayer.config.mcp_servers import McpServerConfig
from stayer.errors import StayerError
from stayer.events import McpServerStatus, McpState
from stayer.exec.child_env import child_env
from stayer.exec.server_group import ServerGroup, found_program

if TYPE_CHECKING:
    import httpx2
    import mcp
    import mcp_types
    from mcp.client import Transport
    from mcp.client._transport import TransportStreams
    from mcp.client.session import IncomingMessage

    from .tunnel import McpTunnel

RESTART_DELAYS_S: tuple[float, ...] = (1.0, 2.0, 4.0)
"""How long to wait before each restart of a server that was up and was lost (the last one
again for any later restart)."""

MAX_CRASHES = 3
"""A server lost this many times in one session is left failed: one that keeps dying would
otherwise cost every call a wait and a restart. (A restart that cannot connect counts.)"""

_MAX_SSE_EVENT = 64 * 1024 * 1024
"""A tool result arrives as one event of a streamable HTTP response; the SDK's 1 MiB default
would refuse a large one that stdio carries without complaint."""

_PAGES = 100


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


PageT = TypeVar("PageT", bound=_Page)
"""At most this many pages of one listing: a server whose cursor never ends cannot hang us."""


_IMPORT_LOCK = threading.Lock()


def _import_sdk() -> None:
    """Import the SDK (in a worker thread: it takes most of a second), one thread at a time:
    every server asks at once, and parallel imports of one package can trip on each other."""
    with _IMPORT_LOCK:
        importlib.import_module("mcp")
        # The SDK logs what it copes with itself (a tool's isError, a dropped notification);
        # with no handler of ours, Python would print those warnings on the terminal.
        for name in ("mcp", "httpx2"):
            logger = logging.getLogger(name)
            if not logger.handlers:
                logger.addHandler(logging.NullHandler())


async def _pages(ask: Callable[..., Awaitable[PageT]]) -> AsyncIterator[PageT]:
    """Each page of a listing, following the server's cursor (at most `_PAGES` of them)."""
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await ask(cursor=cursor, cache_mode="bypass")
        yield page
        cursor = page.next_cursor
        if cursor is None:
            return


async def _sdk_loaded() -> None:
    """`_import_sdk` in a daemon thread: a session that ends before its servers are up (a
    one-answer `-p` run) does not wait at exit for an import nobody needs any more."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def load() -> None:
        error: BaseException | None = None
        try:
            _import_sdk()
        except BaseException as raised:  # handed to the waiting task, raised there
            error = raised
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(_settle, done, error)

    threading.Thread(target=load, name="stayer-mcp-sdk", daemon=True).start()
    await done


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():
        return  # its waiter was cancelled meanwhile
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


class McpUnavailable(StayerError):
    """A call could not be served by an MCP server: it is not connected, it died or did not
    answer in time. `str()` is one line naming the server and what happened."""


class McpRequestError(McpUnavailable):
    """The server refused a request (a JSON-RPC error, or an answer that made no sense)."""


class _Lost(Exception):
    """The connection ended under a connected server."""


class McpServer:
    """One configured server, its connection and its life (see the module docstring)."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        env: Mapping[str, str],
        log_dir: Path,
        connect_timeout_s: float,
        on_change: Callable[[McpServerStatus], None],
        restart_delays_s: Sequence[float] = RESTART_DELAYS_S,
        tunnel: McpTunnel | None = None,
    ) -> None:
        self.config = config
        self._tunnel = tunnel
        """How an in-process server of claude-agent-sdk is reached (`"type": "sdk"`)."""
        # What every process stayer starts gets: the session's environment less the credentials
        # stayer talks to models with (a server's own `env` may still name one on purpose).
        self._env = child_env(env)
        self._log_path = log_dir / f"{config.name}.log"
        self._connect_timeout_s = connect_timeout_s
        self._on_change = on_change
        self._delays = tuple(restart_delays_s)
        self._status = McpServerStatus(config.name, "pending", scope=config.scope)
        self._tools: tuple[mcp_types.Tool, ...] = ()
        self._offers_resources = False
        self._instructions: str | None = None
        self._server_info: tuple[str, str] | None = None
        self._client: mcp.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopping = False
        self._settled = asyncio.Event()
        self._relist = asyncio.Event()
        self._lost = asyncio.Event()
        self._group: ServerGroup | None = None
        """The process group of the stdio server now starting or running."""
        self._last_http_status = 0

    # What callers read ------------------------------------------------------------------

    @property
    def status(self) -> McpServerStatus:
        """Where the server stands now."""
        return self._status

    @property
    def tool_defs(self) -> tuple[mcp_types.Tool, ...]:
        """The tools as the server last listed them: while connected, and while it restarts
        after a crash, so they stay in the model's list (and the prompt cache holds) and a call
        meanwhile is told to try again; empty before it first connects and once it failed."""
        return self._tools if self._status.status in ("connected", "pending") else ()

    @property
    def offers_resources(self) -> bool:
        """Whether the server said it has resources (its capabilities)."""
        return self._offers_resources and self._status.status == "connected"

    @property
    def instructions(self) -> str | None:
        """What the server asks the model to know about it, if anything."""
        return self._instructions

    @property
    def server_info(self) -> tuple[str, str] | None:
        """The name and version the server gave as it connected, if it has."""
        return self._server_info

    @property
    def log_path(self) -> Path:
        """Where a stdio server's stderr goes."""
        return self._log_path

    # Life ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server's task on the running loop; returns at once."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._life())

    async def wait_settled(self) -> None:
        """Until the server has connected or failed once."""
        await self._settled.wait()

    async def aclose(self) -> None:
        """Stop the server (its process ended, its streams closed); idempotent."""
        self._stopping = True
        task = self._task
        if task is None:
            return
        if self._group is not None and self._status.status != "connected":
            # It never answered: nothing of it is worth the SDK's grace for a clean exit,
            # which a server deaf to its closed stdin would make the session's end wait out.
            self._group.stop()
        if self._scope is not None:
            self._scope.cancel()
        else:
            task.cancel()  # it has not begun: nothing of the SDK is entered yet
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def disable(self) -> None:
        """Stop the server and leave it off (`disabled`: its tools are no longer offered)."""
        await self.aclose()
        self._tools = ()
        self._set("disabled")
        self._settled.set()

    async def _life(self) -> None:
        with anyio.CancelScope() as self._scope:
            try:
                await _sdk_loaded()
                await self._run()
            except Exception as exc:  # a bug here must not reach the session: say it, stop
                self._fail(f"stopped: {_one_line(exc)}")
        self._client = None
        self._settled.set()

    async def _run(self) -> None:
        crashes = 0
        ever_connected = False
        while not self._stopping:
            problem, connected = await self._connection()
            ever_connected = ever_connected or connected
            if self._stopped():
                return
            if not ever_connected or not self._may_restart(problem):
                self._fail(problem)
                return
            crashes += 1
            if crashes >= MAX_CRASHES:
                self._fail(f"crashed {crashes} times (last: {problem}); not restarted again")
                return
            self._set("pending", error=f"restarting after a crash ({problem})")
            await anyio.sleep(self._delays[min(crashes, len(self._delays)) - 1])

    def _stopped(self) -> bool:
        return self._stopping

    def _may_restart(self, problem: str) -> bool:
        if self.config.transport == "stdio":
            return True
        # HTTP: only what may pass (refused, cut, 5xx); a 401 or 404 will not get better.
        return not problem.startswith("HTTP 4")

    async def _connection(self) -> tuple[str, bool]:
        """Connect once and serve until lost: (why it ended, whether it was ever up)."""
        import mcp

        up = False
        with anyio.CancelScope(deadline=anyio.current_time() + self._connect_timeout_s) as scope:
            try:
                async with contextlib.AsyncExitStack() as stack:
                    transport = await self._transport(stack)
                    # An SDK server gets the handshake, as Claude Code sends it: every mcp
                    # version the SDK may run answers it, and nothing else is probed.
                    mode = "legacy" if self.config.transport == "sdk" else "auto"
                    client = mcp.Client(transport, message_handler=self._on_message, mode=mode)
                    await stack.enter_async_context(client)
                    await self._absorb(client)
                    group = await stack.enter_async_context(anyio.create_task_group())
                    if client.protocol_version in _modern_versions():
                        # Listening before saying connected: a change the first call makes
                        # is seen. A server that never acknowledges is a connect timeout.
                        await group.start(self._listen, client)
                    scope.deadline = math.inf
                    up = True
                    await self._serve(client)
            except Exception as exc:
                return self._describe(exc, up=up), up
            finally:
                self._client = None
        if scope.cancelled_caught and not up:
            return f"timed out after {self._connect_timeout_s:g} s connecting", False
        return "the connection ended", up

    async def _serve(self, client: mcp.Client) -> None:
        """Keep the listing fresh until the connection is lost (or we are stopped)."""
        self._client = client
        self._set("connected")
        lost = self._lost
        while True:
            relist = asyncio.ensure_future(self._relist.wait())
            gone = asyncio.ensure_future(lost.wait())
            try:
                await asyncio.wait((relist, gone), return_when=asyncio.FIRST_COMPLETED)
            finally:
                relist.cancel()
                gone.cancel()
            if lost.is_set():
                raise _Lost("the server closed the connection")
            self._relist.clear()
            await self._absorb(client)
            self._set("connected")

    async def _listen(self, client: mcp.Client, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Since 2026 a server says its tools changed only to a client that listens."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                task_status.started()
                async for _ in events:
                    self._relist.set()
        except Exception:
            pass  # a server that cannot say so is listed once; nothing else is lost
        with contextlib.suppress(RuntimeError):  # started already
            task_status.started()

    async def _absorb(self, client: mcp.Client) -> None:
        """Read what the server offers: its tools (every page), resources, instructions."""
        capabilities = client.server_capabilities
        tools: list[mcp_types.Tool] = []
        if capabilities.tools is not None:
            async for page in _pages(client.list_tools):
                tools.extend(page.tools)
        self._tools = tuple(tools)
        self._offers_resources = capabilities.resources is not None
        self._instructions = client.instructions or None
        info = client.server_info
        self._server_info = (info.name, info.version) if info is not None else None

    async def _on_message(self, message: IncomingMessage) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist.set()

    # Transports --------------------------------------------------------------------------

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Transport:
        """The transport for this connection; what it needs (a log file, an HTTP client) is
        closed with `stack`."""
        self._lost = asyncio.Event()
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = {**self._env, **config.env}
            found_program(config.command, env, config.cwd)
            log = stack.enter_context(_open_log(self._log_path, config))
            # Registered before the SDK's own exit, so it runs after it: what the server left
            # running goes with it.
            group = self._group = ServerGroup(self._log_path.parent)
            stack.callback(group.stop)
            program, argv = group.argv(config.command, config.args)
            params = StdioServerParameters(command=program, args=argv, env=env, cwd=config.cwd)
            led = group.around(stdio_client(params, errlog=log), self._lost.set)
            return _watched(led, self._lost)
        if config.transport == "sdk":
            from .tunnel import tunnel_transport

            if self._tunnel is None:  # the configuration refuses it first; fail closed anyway
                raise _Lost("no claude-agent-sdk program to reach it through")
            return _watched(tunnel_transport(config.name, self._tunnel), self._lost)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            # The SSE transport opens (and closes) the client its factory makes.
            factory = self._http_client
            return _watched(sse_client(config.url, httpx_client_factory=factory), self._lost)
        http = await stack.enter_async_context(self._http_client())
        from mcp.client.streamable_http import streamable_http_client

        inner = streamable_http_client(
            config.url, http_client=http, max_sse_event_size=_MAX_SSE_EVENT
        )
        return _watched(inner, self._lost)

    def _http_client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        """An HTTP client with the configured headers that remembers an error status."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        merged = {**(headers or {}), **self.config.headers}
        client = create_mcp_http_client(headers=merged, timeout=timeout, auth=auth)

        async def note(response: httpx2.Response) -> None:
            # The SDK turns an HTTP error into a generic JSON-RPC one; keep the status to say.
            if response.status_code >= 400:
                self._last_http_status = response.status_code

        client.event_hooks["response"].append(note)
        return client

    # Calls ---------------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout_s: float | None
    ) -> mcp_types.CallToolResult:
        """Call a tool; McpUnavailable when the server cannot answer (see the class)."""
        client = self._ready()
        async with self._request(timeout_s):
            return await client.call_tool(name, arguments, read_timeout_seconds=timeout_s)
        raise AssertionError("unreachable")  # _request re-raises whatever it caught

    async def list_resources(self) -> list[mcp_types.Resource]:
        """Every resource the server lists (every page)."""
        client = self._ready()
        found: list[mcp_types.Resource] = []
        async with self._request(None):
            async for page in _pages(client.list_resources):
                found.extend(page.resources)
        return found

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        """One resource's contents."""
        client = self._ready()
        async with self._request(None):
            return await client.read_resource(uri, cache_mode="bypass")
        raise AssertionError("unreachable")

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        """Every prompt the server lists (every page)."""
        client = self._ready()
        found: list[mcp_types.Prompt] = []
        async with self._request(None):
            async for page in _pages(client.list_prompts):
                found.extend(page.prompts)
        return found

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> mcp_types.GetPromptResult:
        """One prompt, filled in with `arguments`."""
        client = self._ready()
        async with self._request(None):
            return await client.get_prompt(name, arguments)
        raise AssertionError("unreachable")

    def _ready(self) -> mcp.Client:
        client = self._client
        if client is None or self._status.status != "connected":
            raise McpUnavailable(self._unavailable())
        return client

    def _unavailable(self) -> str:
        name, status = self.config.name, self._status
        if status.status == "failed":
            return f"MCP server {name!r} failed: {status.error}"
        if status.error:  # pending again after it was lost
            return f"MCP server {name!r} is restarting after a crash; try again in a moment"
        if status.status == "pending":
            return f"MCP server {name!r} is still starting; try again in a moment"
        return f"MCP server {name!r} is not connected ({status.status})"

    @contextlib.asynccontextmanager
    async def _request(self, timeout_s: float | None) -> AsyncIterator[None]:
        """Turn what a request can meet into McpUnavailable; cancellation passes through (the
        SDK then tells the server with notifications/cancelled)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        name = self.config.name
        try:
            yield
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                allowed = f"{timeout_s:g} s" if timeout_s is not None else "the time allowed"
                raise McpUnavailable(
                    f"MCP server {name!r} did not answer within {allowed}"
                ) from None
            if exc.code == CONNECTION_CLOSED and self._stopping:
                raise McpUnavailable(f"MCP server {name!r} was stopped during the call") from None
            if exc.code == CONNECTION_CLOSED:
                raise McpUnavailable(
                    f"MCP server {name!r} closed the connection during the call; "
                    "it is being restarted, try again in a moment"
                ) from None
            raise McpRequestError(f"MCP server {name!r}: {_one_line(exc)}") from None
        except Exception as exc:
            raise McpRequestError(f"MCP server {name!r}: {_one_line(exc)}") from None

    # Status --------------------------------------------------------------------------------

    def _set(self, state: McpState, *, error: str | None = None) -> None:
        tools = len(self._tools) if state == "connected" else 0
        status = McpServerStatus(self.config.name, state, error, tools, self.config.scope)
        if status == self._status and state != "connected":
            return
        self._status = status
        if state in ("connected", "failed"):
            self._settled.set()
        self._on_change(status)

    def _fail(self, problem: str) -> None:
        self._tools = ()
        self._set("failed", error=problem)

    def _describe(self, exc: BaseException, *, up: bool) -> str:
        """One line saying why a connection ended or could not be made."""
        leaf = _leaf(exc)
        if self.config.transport == "sdk":
            return _one_line(leaf)
        if self.config.transport != "stdio":
            return str(leaf) if isinstance(leaf, _Lost) else self._http_problem(leaf)
        config = self.config
        if isinstance(leaf, FileNotFoundError):
            if config.cwd and leaf.filename == config.cwd:
                return f"working directory not found: {config.cwd}"
            return f"command not found: {config.command}"
        if isinstance(leaf, PermissionError):
            return f"command not executable: {config.command}"
        if isinstance(leaf, _Lost) or _closed(leaf):
            return _exited(self._log_path, early=not up)
        return _one_line(leaf)

    def _http_problem(self, leaf: BaseException) -> str:
        import httpx2

        url = self.config.url
        status, self._last_http_status = self._last_http_status, 0
        if status:
            return f"HTTP {status} from {url}"
        if isinstance(leaf, httpx2.ConnectError):
            return f"cannot connect to {url} ({_one_line(leaf) or 'connection refused'})"
        if isinstance(leaf, httpx2.HTTPStatusError):
            return f"HTTP {leaf.response.status_code} from {url}"
        return f"{url}: {_one_line(leaf)}"


def _watched(transport: Transport, lost: asyncio.Event) -> Transport:
    """`transport`, with `lost` set when the server's side of it ends (a stdio server exited,
    an HTTP stream cut): the SDK itself only fails the requests that were waiting."""

    @contextlib.asynccontextmanager
    async def watched() -> AsyncIterator[TransportStreams]:
        from mcp.shared.message import SessionMessage

        async with transport as (read, write):
            relay_in, relay_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def relay() -> None:
                try:
                    async with relay_in:
                        async for item in read:
                            await relay_in.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                finally:
                    lost.set()

            async with anyio.create_task_group() as group:
                group.start_soon(relay)
                try:
                    yield relay_out, write
                finally:
                    group.cancel_scope.cancel()
                    relay_out.close()

    return watched()


@contextlib.contextmanager
def _open_log(path: Path, config: McpServerConfig) -> Iterator[TextIO]:
    """The server's log, opened to append (a restart adds to it), with a line saying who
    starts and with what program.

    Only the program's name and how many arguments it got: the arguments are the config's
    with `${VAR}` expanded, and a token passed as one must not end up in a file in plain
    text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        count = len(config.args)
        given = f"{count} argument{'' if count == 1 else 's'}"
        program = Path(config.command).name
        log.write(f"--- stayer starts MCP server {config.name!r}: {program} ({given})\n")
        log.flush()
        yield log


def _exited(log_path: Path, *, early: bool) -> str:
    """Why a stdio server is gone, with the last thing it said on stderr."""
    try:
        with log_path.open("rb") as log:  # only its end: a chatty server's log may be large
            log.seek(max(0, log_path.stat().st_size - 4096))
            lines = log.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    said = lines[-1].strip() if lines and not lines[-1].startswith("--- stayer") else ""
    last = f": {said[:200]}" if said else ""
    what = "exited before it answered" if early else "the server process exited"
    return f"{what}{last} (see {log_path})"


def _closed(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    return isinstance(exc, (anyio.EndOfStream, anyio.BrokenResourceError, BrokenPipeError))


def _modern_versions() -> tuple[str, ...]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return tuple(MODERN_PROTOCOL_VERSIONS)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _one_line(exc: BaseException) -> str:
    invalid = _invalid_answer(exc)
    text = invalid if invalid is not None else " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def _invalid_answer(exc: BaseException) -> str | None:
    """An answer the SDK found not to be MCP, said in one short line (pydantic's own text runs
    to many lines, one per member of a union, each with a web address); None for other
    errors."""
    pydantic_core = sys.modules.get("pydantic_core")  # never loaded: no such error was made
    if pydantic_core is None or not isinstance(exc, pydantic_core.ValidationError):
        return None
    first = exc.errors(include_url=False)[0]
    title = exc.title if exc.title.isidentifier() else "answer"
    where: list[str] = []
    problem = " ".join(str(first["msg"]).split())
    for index, part in enumerate(first["loc"]):
        if isinstance(part, str) and part[:1].isupper():  # a member of a union
            if index == 0:  # the answer could be one of several: the first's problem is said
                title = part
                continue
            given = first.get("input")
            kind = given.get("type") if isinstance(given, dict) else None
            problem = f"no kind MCP knows{f' ({kind!r})' if kind is not None else ''}"
            break
        where.append(str(part))
    return f"its answer ({title}) is not valid MCP: {'.'.join(where) or 'all of it'}: {problem}"
