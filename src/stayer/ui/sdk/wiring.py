"""What the SDK's `initialize` request adds to a session before it opens.

Each wiring reads the `initialize` request (its `hooks`, `agents`, ...) and the options the
command line gave, and returns the options the session opens with and the fields it adds to
the `initialize` reply; it may keep `channel` to ask the SDK later (a hook callback, an MCP
message). They are applied in `WIRINGS`' order, each to the options the last returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stayer.session.options import QueryOptions

from .agents import with_agents
from .control import ControlChannel
from .hooks import sdk_hooks
from .mcp import wire_sdk_mcp

Wiring = Callable[
    [QueryOptions, Mapping[str, Any], ControlChannel], tuple[QueryOptions, Mapping[str, Any]]
]

WIRINGS: tuple[Wiring, ...] = (sdk_hooks, wire_sdk_mcp, with_agents)


def wired(
    options: QueryOptions, initialize: Mapping[str, Any], channel: ControlChannel
) -> tuple[QueryOptions, dict[str, Any]]:
    """`options` with every wiring applied, and the reply fields they add."""
    reply: dict[str, Any] = {}
    for wiring in WIRINGS:
        options, fields = wiring(options, initialize, channel)
        reply.update(fields)
    return options, reply
