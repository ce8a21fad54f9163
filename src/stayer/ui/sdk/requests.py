"""The SDK's control requests stayer answers once a session is open, by `subtype`.

Each entry makes the handler for its subtype from the session's `Driver` and the control
channel (a handler may ask the SDK back through it); `initialize` is answered before the
session opens and is not here. A subtype with no entry gets an error reply (the channel's
rule), never silence.
"""

from __future__ import annotations

from collections.abc import Callable

from stayer.driver import Driver

from .control import ControlChannel, Handler
from .thinking import thinking_handler

HandlerFactory = Callable[[Driver, ControlChannel], Handler]

HANDLERS: dict[str, HandlerFactory] = {
    "set_max_thinking_tokens": thinking_handler,
}


def serve_requests(driver: Driver, channel: ControlChannel) -> None:
    """Register every handler of `HANDLERS` on `channel` for `driver`'s session."""
    for subtype, make in HANDLERS.items():
        channel.handle(subtype, make(driver, channel))
