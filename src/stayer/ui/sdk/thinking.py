"""`set_max_thinking_tokens`: the SDK changes how much the session's model may think.

The request's `max_thinking_tokens` is a number of tokens (0: no thinking) or null (the
model's default); it holds from the session's next assistant turn on, in a running run too (a
turn in the middle of its tool rounds keeps its own setting: the API takes one per turn).
Anything else is an error reply naming what was wrong, and the setting stays as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stayer.driver import Driver

from .control import ControlChannel, ControlError, Handler


def thinking_handler(driver: Driver, channel: ControlChannel) -> Handler:
    """The handler of `set_max_thinking_tokens` for `driver`'s session."""

    async def handle(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        budget = request.get("max_thinking_tokens")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
            raise ControlError(
                f"set_max_thinking_tokens: max_thinking_tokens {budget!r} is not a whole "
                "number of tokens; give one (0: no thinking) or null (the model's default)"
            )
        driver.session.set_thinking(budget)  # a negative one: ConfigError, the error reply
        return None

    return handle
