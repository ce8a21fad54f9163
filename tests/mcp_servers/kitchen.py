"""One MCP server for the client's tests, written with the `mcp` SDK; what it does is chosen on
its command line, so each test starts exactly the server it needs.

    python kitchen.py [--transport stdio|http|sse] [--wait-file PATH] [--markers DIR]
                      [--tools N] [--stderr TEXT] [--exit STATUS] [--instructions TEXT]
                      [--hand-written bad-listing|odd-content]

Over HTTP and SSE it listens on 127.0.0.1, on a port of its own choosing, and prints that port
on stdout once the socket is listening (the fixture reads it: no polling, no sleeping).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    TextResourceContents,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082"
)


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http", "sse"))
    parser.add_argument("--wait-file", default="")
    parser.add_argument("--markers", default="")
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--stderr", default="")
    parser.add_argument("--exit", type=int, default=None)
    parser.add_argument("--instructions", default=None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--page", type=int, default=0, help="list tools this many at a time")
    parser.add_argument("--legacy", action="store_true", help="stdio: only the initialize era")
    parser.add_argument("--token", default="", help="HTTP: refuse requests without this bearer")
    parser.add_argument(
        "--hand-written",
        choices=("bad-listing", "odd-content"),
        help="stdio without the SDK, answering what no SDK server would send (`_hand_written`)",
    )
    return parser.parse_args()


def _basic_tools(server: MCPServer) -> None:
    @server.tool(description="Say the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two numbers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="The environment variable NAME, as the server sees it.")
    def getenv(name: str) -> str:
        return os.environ.get(name, "<unset>")

    @server.tool(description="A one-pixel image.")
    def image() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="An embedded text resource.")
    def embedded() -> CallToolResult:
        contents = TextResourceContents(uri="memo://one", mime_type="text/plain", text="memo")
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=contents)])

    @server.tool(description="Structured weather.")
    def weather(city: str) -> dict[str, Any]:
        return {"city": city, "celsius": 21}

    @server.tool(description="Always fails.")
    def fails() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="it broke")], is_error=True)

    @server.tool(description="Five megabytes of text.")
    def big() -> str:
        return "x" * (5 * 1024 * 1024)

    @server.tool(description="The server's process id.")
    def pid() -> int:
        return os.getpid()

    @server.tool(description="Kills the server process.")
    def crash() -> str:
        os._exit(3)


def _waiting_tool(server: MCPServer, markers: Path | None) -> None:
    @server.tool(description="Waits until cancelled; leaves marker files.")
    async def wait(ctx: Context) -> str:
        if markers is not None:
            (markers / "started").write_text("started")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            if markers is not None:
                (markers / "cancelled").write_text("cancelled")
            raise
        return "never"


def _growing_tool(server: MCPServer) -> None:
    @server.tool(description="Adds a tool named NAME and says the tool list changed.")
    async def grow(name: str, ctx: Context) -> str:
        server.add_tool(lambda: "grown", name=name, description="Grown at run time.")
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await ctx.session.send_tool_list_changed()
        else:
            await ctx.notify_tools_changed()
        return "grown"


def _resources_and_prompts(server: MCPServer) -> None:
    @server.resource("memo://greeting", description="A greeting.", mime_type="text/plain")
    def greeting() -> str:
        return "hello there"

    @server.prompt(description="Review some code.")
    def review(code: str) -> str:
        return f"Please review: {code}"


class Kitchen(MCPServer):
    """Lists its tools `page` at a time when `page` is set (the SDK's server lists all at once)."""

    page = 0

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = await self.list_tools()
        if not self.page:
            return ListToolsResult(tools=tools)
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page
        return ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )


def _many(query: str = "", limit: int = 10, include_archived: bool = False) -> str:
    """One of the many tools (`--tools N`): each has a schema and a description about as large
    as a real server's (GitHub's ~90 tools cost about 26k tokens), so deferral has something
    to save."""
    return "ok"


def _many_description(index: int) -> str:
    return (
        f"Tool {index}. Searches the records of collection {index} for entries matching the "
        "query and returns at most `limit` of them, newest first, each with its id, title, "
        "author, labels and the dates it was opened, changed and closed. Archived entries are "
        "left out unless include_archived is true. Use it when you know which collection holds "
        "what you need; an empty query lists the newest entries."
    )


def build(options: argparse.Namespace) -> MCPServer:
    server = Kitchen("kitchen", instructions=options.instructions)
    server.page = options.page
    _basic_tools(server)
    markers = Path(options.markers) if options.markers else None
    _waiting_tool(server, markers)
    _growing_tool(server)
    _resources_and_prompts(server)
    for index in range(options.tools):
        server.add_tool(_many, name=f"tool_{index:03d}", description=_many_description(index))
    return server


def _guarded(app: Any, token: str) -> Any:
    """`app`, answering 401 to a request without `Authorization: Bearer <token>`."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"no"})
            return
        await app(scope, receive, send)

    return guarded


def _serve_http(server: MCPServer, options: argparse.Namespace) -> None:
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", options.port))
    sock.listen()
    sse = options.transport == "sse"
    app = server.sse_app() if sse else server.streamable_http_app()
    if options.token:
        app = _guarded(app, options.token)
    config = uvicorn.Config(app, log_level="warning")
    print(sock.getsockname()[1], flush=True)  # noqa: T201 - the fixture reads the port
    uvicorn.Server(config).run(sockets=[sock])


async def _serve_legacy_stdio(server: MCPServer) -> None:
    """stdio as a server from before 2026 speaks it: the initialize handshake only."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        options = low.create_initialization_options()
        await serve_loop(low, read, write, lifespan_state=state, init_options=options)


def _hand_written(mode: str) -> None:
    """JSON-RPC over stdio by hand, at protocol 2025-06-18, for what the SDK's server refuses
    to send: a listing with a schema whose `properties` is a number (`bad-listing`), or a
    tool `odd` answering content of a kind MCP does not have (`odd-content`)."""
    import json

    def send(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    properties: Any = 5 if mode == "bad-listing" else {}
    tools = [{"name": "odd", "inputSchema": {"type": "object", "properties": properties}}]
    answers: dict[str, Any] = {
        "initialize": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hand-written", "version": "1"},
        },
        "tools/list": {"tools": tools},
        "tools/call": {"content": [{"type": "weird", "x": 1}]},
    }
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request and "method" in request:
            send({"id": request["id"], "result": answers.get(request["method"], {})})


def main() -> None:
    options = _options()
    if options.stderr:
        print(options.stderr, file=sys.stderr, flush=True)  # noqa: T201 - into the server log
    if options.exit is not None:
        sys.exit(options.exit)
    if options.wait_file:
        # A slow start: the test creates the file when it wants the server up.
        while not Path(options.wait_file).exists():
            time.sleep(0.02)
    if options.hand_written:
        _hand_written(options.hand_written)
        return
    server = build(options)
    if options.transport == "stdio" and options.legacy:
        anyio.run(_serve_legacy_stdio, server)
    elif options.transport == "stdio":
        server.run()
    else:
        _serve_http(server, options)


if __name__ == "__main__":
    main()
