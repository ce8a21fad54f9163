"""stayer's built-in tools as an MCP server on standard input and output (`stayer mcp serve`).

A front end of one `Session`, open for the server's life: its settings, permission rules and
mode, hooks, sandbox and tool context (the files read, which Edit checks before it writes, and
the background shells) are those every call shares. Only the tools are offered, never the
agent loop: the client is itself an agent, and its model decides what to call.

Each `tools/call` is judged and run by the loop's own code for one call (`tool_exec.prepare`
then `run_one`): the tool's input validation, PreToolUse hooks, the permission policy and the
protected paths, the call within its timeout, PostToolUse hooks, and the result size cap. There
is nobody to ask, so a call the policy would ask about is denied, and the reason says which rule
would allow it, as in a headless run. A denial or a failure is a result with `isError` set.

Calls may come in at once; as in a model's round, concurrency-safe ones run together and any
other runs alone (`_Gate`), so two commands never race on the shell's working directory.

The `mcp` SDK (and pydantic with it) is imported here only, when the server starts.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from stayer._version import __version__
from stayer.errors import ModelError
from stayer.events import ToolCallFinished
from stayer.loop.tool_exec import ToolEvent, prepare, run_one
from stayer.messages import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from stayer.providers.base import ModelRequest
from stayer.session.options import QueryOptions
from stayer.session.session import Session
from stayer.tools.base import Tool
from stayer.tools.names import RUN_ONLY_TOOLS
from stayer.tools.registry import BUILTIN_NAMES

if TYPE_CHECKING:
    import mcp.types as mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from stayer.events import StreamEvent

SERVER_NAME = "stayer"


class NoModel:
    """The model client of a server started with no model configured: the tools that ask a
    model of their own (WebFetch's summary) fail with this one line; every other tool works."""

    @property
    def name(self) -> str:
        return "none"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        nothing: tuple[StreamEvent, ...] = ()
        for event in nothing:  # an async generator, as every client's stream is
            yield event
        raise ModelError(
            "no model is configured for stayer mcp serve; set ANTHROPIC_API_KEY or "
            "OPENAI_API_KEY (or a base URL) where the server starts"
        )

    async def aclose(self) -> None:
        return None


class _Gate:
    """Concurrency-safe calls run together; any other call runs alone (the executor's rule
    for a model's round, kept for a client's calls that overlap)."""

    def __init__(self) -> None:
        self._running = 0
        self._alone = False
        self._changed = asyncio.Event()

    @asynccontextmanager
    async def hold(self, *, safe: bool) -> AsyncIterator[None]:
        while self._alone or (not safe and self._running):
            changed = self._changed
            await changed.wait()
        self._running += 1
        self._alone = not safe
        try:
            yield
        finally:  # without awaiting: a cancelled call must still let the others on
            self._running -= 1
            self._alone = False
            self._changed.set()
            self._changed = asyncio.Event()


class ToolServer:
    """The session's built-in tools, listed and called as MCP asks."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._gate = _Gate()
        named = session.options.tools is not None
        self._offered = set(BUILTIN_NAMES) - (set() if named else RUN_ONLY_TOOLS)

    def _tools(self) -> dict[str, Tool[Any]]:
        """The built-ins the session offers (a session's other tool sources stay its own),
        less those only a model's run gives a meaning, unless `--tools` names them."""
        tools = self._session.setup.params.tools.tools()
        return {name: tool for name, tool in tools.items() if name in self._offered}

    def listed(self) -> list[mcp_types.Tool]:
        """Each tool's name, description, input schema, and whether it only reads."""
        import mcp.types as types

        return [
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=dict(tool.input_schema),
                annotations=types.ToolAnnotations(read_only_hint=tool.read_only),
            )
            for tool in self._tools().values()
        ]

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResultBlock:
        """One call judged and run as a model's would be: its result, as the model would read
        it (an error result for a call refused, invalid or failed)."""
        params = self._session.setup.params
        block = ToolUseBlock(f"toolu_mcp_{uuid.uuid4().hex[:24]}", name, dict(arguments or {}))
        item = prepare(self._tools(), block)
        finished: list[ToolCallFinished] = []

        def emit(event: ToolEvent) -> None:
            if isinstance(event, ToolCallFinished):
                finished.append(event)

        async with self._gate.hold(safe=item.concurrency_safe):
            await run_one(params, item, emit)
        return finished[-1].result


def mcp_result(result: ToolResultBlock) -> mcp_types.CallToolResult:
    """A tool's result as MCP content: text as text, images as images."""
    import mcp.types as types

    content: list[types.ContentBlock] = []
    for part in result.content:
        if isinstance(part, TextBlock):
            content.append(types.TextContent(type="text", text=part.text))
        elif isinstance(part, ImageBlock):
            content.append(
                types.ImageContent(type="image", data=part.data, mime_type=part.media_type)
            )
    return types.CallToolResult(content=content, is_error=result.is_error)


async def serve_stdio(options: QueryOptions) -> int:
    """Serve the tools of a session opened with `options` until standard input closes; then
    close the session (its background shells stopped, its sandbox removed). The exit status.
    Raises `ConfigError` for options a session cannot open with."""
    from mcp.server.stdio import stdio_server

    session = await Session.open(options)
    async with session:
        for warning in session.warnings:
            print(f"stayer: {warning}", file=sys.stderr)
        server = _server(ToolServer(session))
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    return 0


def _server(tools: ToolServer) -> Server[Any]:
    """The SDK's low-level server, answering `tools/list` and `tools/call` from `tools`."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listed())

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return mcp_result(await tools.call(params.name, params.arguments))

    return Server(
        SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool
    )
