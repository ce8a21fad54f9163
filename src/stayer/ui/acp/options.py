"""The options each ACP session opens with: the command line's, in the folder the editor names,
with the editor's MCP servers added. `session_options` is the one place they are built, so
what an editor offers a session (its MCP servers, its view of files) is set here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer
from msgspec.structs import replace

from stayer.session.options import QueryOptions
from stayer.tools.base import EditorFiles

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def session_options(
    base: QueryOptions,
    *,
    cwd: str,
    mcp_servers: Sequence[McpServer] | None,
    resume: str | None = None,
    files: EditorFiles | None = None,
) -> QueryOptions:
    """`base` for one session in `cwd` (absolute), with the editor's `mcp_servers`, its `files`
    (what its `fs` methods offer; None: the disk's) and, to go on with a saved session,
    `resume` (its id); raises `RequestError` (invalid params) in one
    line for a relative folder or a server kind stayer cannot start."""
    folder = Path(cwd)
    if not folder.is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path, not {cwd!r}"})
    if not folder.is_dir():
        raise RequestError.invalid_params({"details": f"cwd {cwd!r} is not a folder"})
    servers = mcp_config(mcp_servers or ())
    return replace(
        base,
        cwd=folder,
        resume=resume,
        editor=files,
        mcp_config=(*base.mcp_config, {"mcpServers": servers}) if servers else base.mcp_config,
    )


def mcp_config(servers: Sequence[McpServer]) -> dict[str, dict[str, Any]]:
    """The editor's servers in Claude Code's `mcpServers` form (stdio, http and sse, as stayer's
    MCP client starts them); an `acp` server (one the editor carries over ACP itself) is
    refused."""
    config: dict[str, dict[str, Any]] = {}
    for server in servers:
        if isinstance(server, AcpMcpServer):
            raise RequestError.invalid_params(
                {
                    "details": f"MCP server {server.name!r} is of type acp, which stayer cannot "
                    "reach; give it as a stdio, http or sse server"
                }
            )
        if isinstance(server, McpServerStdio):
            config[server.name] = {
                "type": "stdio",
                "command": server.command,
                "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env},
            }
        else:
            config[server.name] = {
                "type": server.type,
                "url": server.url,
                "headers": {header.name: header.value for header in server.headers},
            }
    return config
