"""The names MCP server tools go by in front of the model: `mcp__<server>__<tool>`.

Providers accept tool names of at most 64 characters from `[A-Za-z0-9_-]`, while servers name
themselves and their tools as they like. Every other character becomes `_`; a name still too
long is cut and ends in a short hash of the original server and tool names, so two long names
that share a start stay apart and the same tool keeps its name from one session to the next.
Two names that clean alike (`a.b`, `a_b`) are kept apart the same way (`unique_names`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from stayer.tools.names import MCP_PREFIX

MAX_NAME_CHARS = 64
"""The longest tool name the providers accept."""

_HASH_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SEPARATOR = "__"


def clean(part: str) -> str:
    """`part` with every character a tool name may not hold made `_`."""
    return _UNSAFE.sub("_", part)


def tool_name(server: str, tool: str, *, hashed: bool = False) -> str:
    """The model-facing name of `tool` on `server`, within the providers' limits; `hashed`
    makes it end in the hash even when it is short (for a name another tool already has)."""
    name = f"{MCP_PREFIX}{clean(server)}{_SEPARATOR}{clean(tool)}"
    if len(name) <= MAX_NAME_CHARS and not hashed:
        return name
    # The NUL keeps ("a_", "b") and ("a", "_b") apart: neither name may hold one.
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]
    return f"{name[: MAX_NAME_CHARS - _HASH_CHARS - 1]}_{digest}"


def unique_names(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The names of (server, tool) `pairs`, in order, no two alike: a name that cleans to
    one given before (`a.b` after `a_b`) ends in its hash instead."""
    names: list[str] = []
    taken: set[str] = set()
    for server, tool in pairs:
        name = tool_name(server, tool)
        if name in taken:
            name = tool_name(server, tool, hashed=True)
        taken.add(name)
        names.append(name)
    return names


def split_name(name: str) -> tuple[str, str] | None:
    """The (server, tool) parts of an MCP tool name, as written there; None for another name.

    The server part ends at the first `__`, so a tool name may hold `__` but a server name
    cannot (as in Claude Code, whose rules `mcp__server` and `mcp__server__tool` read it so).
    """
    if not name.startswith(MCP_PREFIX):
        return None
    server, separator, tool = name[len(MCP_PREFIX) :].partition(_SEPARATOR)
    if not server or not separator or not tool:
        return None
    return server, tool
