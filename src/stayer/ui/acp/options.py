"""The options each ACP session opens with: the command line's, in the folder the editor names,
with the editor's MCP servers added. `session_options` is the one place they are built, so
what an editor offers a session (its MCP servers, its view of files) is set here.
"""

from __future__ import annotations

import os
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
    additional_directories: Sequence[str] | None = None,
    resume: str | None = None,
    fork: bool = False,
    files: EditorFiles | None = None,
) -> QueryOptions:
    """`base` for one session in `cwd`, with the editor's `mcp_servers`, further working
    folders (`additional_directories`, as `--add-dir`), its `files` (what its `fs` methods
    offer; None: the disk's) and, to go on with a saved session, `resume` (its id; with `fork`,
    under a new id); raises `RequestError` (invalid params) in one line for a folder that is
    not absolute or a server kind stayer cannot start."""
    folder = _folder(cwd, "cwd")
    more = [_folder(path, "additional directory") for path in additional_directories or ()]
    servers = mcp_config(mcp_servers or ())
    return replace(
        base,
        cwd=folder,
        add_dirs=(*base.add_dirs, *more),
        resume=resume,
        fork_session=fork,
        editor=files,
        mcp_config=(*base.mcp_config, {"mcpServers": servers}) if servers else base.mcp_config,
    )


Folders = tuple[Path, frozenset[Path]]
"""A session's working folder and its further ones."""


def folders(cwd: str, additional_directories: Sequence[str] | None) -> Folders:
    """The folders a request names, as compared with an open session's."""
    return Path(os.path.normpath(cwd)), frozenset(
        Path(os.path.normpath(path)) for path in additional_directories or ()
    )


def same_folders(open_in: Folders, cwd: str, additional_directories: Sequence[str] | None) -> None:
    """Refuse (invalid params, one line) to load or resume a session already open here in
    other folders than it works in: it cannot move while it is open."""
    asked = folders(cwd, additional_directories)
    if asked != open_in:
        where, more = open_in
        also = f" with {', '.join(sorted(map(str, more)))}" if more else ""
        raise RequestError.invalid_params(
            {
                "details": f"this session is open in {where}{also}; load it there, or close "
                "it first (session/close) to open it elsewhere"
            }
        )


def absolute(path: str, what: str) -> Path:
    """`path` as a folder's path; raises `RequestError` (invalid params) when it is relative."""
    folder = Path(path)
    if not folder.is_absolute():
        raise RequestError.invalid_params({"details": f"{what} must be absolute, not {path!r}"})
    return folder


def _folder(path: str, what: str) -> Path:
    folder = absolute(path, what)
    if not folder.is_dir():
        raise RequestError.invalid_params({"details": f"{what} {path!r} is not a folder"})
    return folder


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
