"""The SDK's control requests stayer answers once a session is open, by `subtype`.

Each entry makes the handler for its subtype from the session's `Driver` and the control
channel (a handler may ask the SDK back through it); `initialize` is answered before the
session opens and is not here. A subtype with no entry gets an error reply (the channel's
rule), never silence.
"""

from __future__ import annotations

from collections.abc import Callable

from stayer.driver import Driver

from . import handlers, mcp
from .control import ControlChannel, Handler
from .thinking import thinking_handler

HandlerFactory = Callable[[Driver, ControlChannel], Handler]

HANDLERS: dict[str, HandlerFactory] = {
    "interrupt": handlers.interrupt,
    "set_permission_mode": handlers.set_permission_mode,
    "set_model": handlers.set_model,
    "get_context_usage": handlers.get_context_usage,
    "mcp_status": mcp.mcp_status,
    "mcp_reconnect": mcp.mcp_reconnect,
    "mcp_toggle": mcp.mcp_toggle,
    "set_max_thinking_tokens": thinking_handler,
}


def serve_requests(driver: Driver, channel: ControlChannel) -> None:
    """Register every handler of `HANDLERS` on `channel` for `driver`'s session."""
    for subtype, make in HANDLERS.items():
        channel.handle(subtype, make(driver, channel))
