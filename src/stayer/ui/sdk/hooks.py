"""The SDK's hooks: what `initialize` registers (`hooks: {Event: [{matcher, hookCallbackIds,
timeout?, onFailure?}]}`) becomes the session's callback matchers (`stayer.hooks.callbacks`),
each callable asking the SDK with a `hook_callback` request (`callback_id`, the hook's `input`,
`tool_use_id`) and reading its answer as a settings hook's JSON output is read.

Events stayer never fires are named on standard error in one line, so nobody relies on a
guard that will not run (PermissionRequest is fired: `stayer.session.permission_request`). A
registration of the wrong shape is refused with one line saying what was wrong (the SDK raises
it to the program), never half applied. `onFailure` other than `continue` blocks on failure,
as Claude Code reads it; the reply says so (`hook_on_failure_supported`), which the SDK
requires before it sends one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from stayer.config.model import matcher_problem
from stayer.errors import ConfigError
from stayer.session.options import QueryOptions
from stayer.session.shown import shown

from .control import ControlChannel

if TYPE_CHECKING:
    from stayer.hooks.callbacks import CallbackMatcher

REPLY = {"hook_on_failure_supported": True}
_FIX = "register hooks through the SDK's HookMatcher"
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,40}")
_MOST_NAMED = 10


class AskSdk:
    """One SDK callback: calling it asks the SDK to run the callback it registered under
    `callback_id`, and returns the SDK's answer."""

    __slots__ = ("callback_id", "channel")

    def __init__(self, channel: ControlChannel, callback_id: str) -> None:
        self.channel = channel
        self.callback_id = callback_id

    @property
    def hook_name(self) -> str:
        return f"SDK callback {self.callback_id}"

    async def __call__(self, data: dict[str, Any], tool_use_id: str | None) -> Mapping[str, Any]:
        fields = {"callback_id": self.callback_id, "input": data, "tool_use_id": tool_use_id}
        return await self.channel.request("hook_callback", fields)


def sdk_hooks(
    options: QueryOptions, initialize: Mapping[str, Any], channel: ControlChannel
) -> tuple[QueryOptions, Mapping[str, Any]]:
    """`options` with the hooks `initialize` registers (after any it has), each asking the SDK
    through `channel`; raises `ConfigError` for a registration of the wrong shape."""
    given = initialize.get("hooks")
    if given is None or given == {}:
        return options, REPLY
    if not isinstance(given, Mapping):
        raise ConfigError(f"initialize: hooks must map event names to matchers; {_FIX}")
    from stayer.hooks import EVENTS

    fired = {event: matchers for event, matchers in given.items() if event in EVENTS}
    ignored = [event for event in given if event not in EVENTS]
    read = {event: _matchers(event, matchers, channel) for event, matchers in fired.items()}
    if ignored:  # after reading: a refused registration says nothing more
        print(
            f"stayer: the SDK registered hooks for {_names(ignored)}, which stayer never "
            "fires; they will not run",
            file=sys.stderr,
            flush=True,
        )
    merged = dict(options.hooks)
    for event, matchers in read.items():
        merged[event] = (*merged.get(event, ()), *matchers)
    return replace(options, hooks=merged), REPLY


def _names(events: list[object]) -> str:
    """Event names as the SDK sent them, on one line (a name is any text): the first few."""
    names = [str(event) if _PLAIN.fullmatch(str(event)) else shown(event) for event in events]
    more = len(names) - _MOST_NAMED
    return ", ".join(names[:_MOST_NAMED]) + (f" and {more} more" if more > 0 else "")


def _matchers(event: str, given: object, channel: ControlChannel) -> tuple[CallbackMatcher, ...]:
    if not isinstance(given, list):
        raise ConfigError(f"initialize: hooks.{event} must be a list of matchers; {_FIX}")
    return tuple(_matcher(f"hooks.{event}[{n}]", one, channel) for n, one in enumerate(given))


def _matcher(where: str, given: object, channel: ControlChannel) -> CallbackMatcher:
    from stayer.hooks import CallbackMatcher

    if not isinstance(given, Mapping):
        raise ConfigError(f"initialize: {where} must be an object; {_FIX}")
    matcher = given.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise ConfigError(f"initialize: {where}.matcher must be text or null; {_FIX}")
    if matcher is not None and (problem := matcher_problem(matcher)) is not None:
        raise ConfigError(f"initialize: {where}: {problem}")
    ids = given.get("hookCallbackIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise ConfigError(f"initialize: {where}.hookCallbackIds must be a list of ids; {_FIX}")
    timeout = given.get("timeout")
    number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if timeout is not None and not (number and timeout > 0):
        raise ConfigError(f"initialize: {where}.timeout must be a positive number of seconds")
    on_failure = given.get("onFailure")
    return CallbackMatcher(
        hooks=tuple(AskSdk(channel, callback_id) for callback_id in ids),
        matcher=matcher or "",
        timeout=float(timeout) if timeout is not None else None,
        on_failure="continue" if on_failure in (None, "continue") else "block",
    )
