"""Lifecycle hooks: user commands that settings run at points of a session (Claude Code's
`hooks`), each given the event as JSON on stdin.

`match` picks the handlers an event's matchers select; `runner` runs them side by side, each
under its timeout, through `exec`, and reports every run as a `HookRan`; `reply` reads what
each said (its exit status, and JSON on stdout) into a typed `HookReply`, and a whole event's
replies into a `Verdict`. What a verdict means for a tool call, a prompt or the end of a turn
is the session's business: the loop never imports this package, it gets callables.
`callbacks` runs a program's own hooks (async callables in `CallbackMatcher`s) beside them.
"""

from stayer.hooks.callbacks import CallbackMatcher, HookCallback
from stayer.hooks.match import matches
from stayer.hooks.reply import HookReply, PermissionWord, Verdict, read_reply
from stayer.hooks.runner import (
    DEFAULT_TIMEOUT_S,
    EVENTS,
    HookBase,
    HookEvent,
    HookRunner,
    unsupported,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "EVENTS",
    "CallbackMatcher",
    "HookBase",
    "HookCallback",
    "HookEvent",
    "HookReply",
    "HookRunner",
    "PermissionWord",
    "Verdict",
    "matches",
    "read_reply",
    "unsupported",
]
