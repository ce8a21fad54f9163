"""stayer: an agent harness in the style of Claude Code.

    import stayer

    async for event in stayer.query("fix the failing test", options=stayer.QueryOptions()):
        ...

`Session` holds one conversation across prompts (`async with stayer.Session(options) as s:` and
`s.submit(prompt)`); `query()` is a session with one prompt. It yields the same events the
command line prints: `SessionStarted`, the model's
streamed deltas and complete messages, tool calls as they run, and finally `Finished`, exactly
once, whose `terminal` says why the run ended. A tool of your own is a `Tool` subclass (a
pydantic input model and an async `call(tool_input, ctx)` that returns a `ToolOutput`), passed
in `QueryOptions(extra_tools=[...])`. A call the permission policy asks about goes to
`QueryOptions(can_use_tool=...)`, which gets a `PermissionRequested` and returns a `Decision`;
without it, such a call is denied. Hooks of your own are async callables in `CallbackMatcher`s,
passed in `QueryOptions(hooks={"PreToolUse": [...]})`, answered as settings hooks are.
Importing stayer does no work: the names below are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from stayer._version import __version__

if TYPE_CHECKING:
    from stayer.driver import Driver
    from stayer.errors import ConfigError, ModelError, StayerError
    from stayer.events import (
        Continue,
        Event,
        Finished,
        MessageCompleted,
        ModelUsage,
        PermissionRequested,
        PermissionResolved,
        SessionStarted,
        SubagentEvent,
        Terminal,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
    )
    from stayer.hooks.callbacks import CallbackMatcher
    from stayer.loop.abort import AbortSignal
    from stayer.messages import AssistantMessage, Message, UserMessage
    from stayer.permissions import Decision
    from stayer.providers.scripted import ScriptedProvider
    from stayer.session.options import QueryOptions
    from stayer.session.query import query
    from stayer.session.session import Session, SessionBusy
    from stayer.tools.base import SubagentRequest, Tool, ToolContext, ToolInputError, ToolOutput

__all__ = [
    "AbortSignal",
    "AssistantMessage",
    "CallbackMatcher",
    "ConfigError",
    "Continue",
    "Decision",
    "Driver",
    "Event",
    "Finished",
    "Message",
    "MessageCompleted",
    "ModelError",
    "ModelUsage",
    "PermissionRequested",
    "PermissionResolved",
    "QueryOptions",
    "ScriptedProvider",
    "Session",
    "SessionBusy",
    "SessionStarted",
    "StayerError",
    "SubagentEvent",
    "SubagentRequest",
    "Terminal",
    "TextDelta",
    "Tool",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolContext",
    "ToolInputError",
    "ToolOutput",
    "UserMessage",
    "__version__",
    "query",
]

_HOMES = {
    "Driver": "stayer.driver",
    "ToolInputError": "stayer.tools.base",
    "SubagentRequest": "stayer.tools.base",
    "SubagentEvent": "stayer.events",
    "AbortSignal": "stayer.loop.abort",
    "AssistantMessage": "stayer.messages",
    "CallbackMatcher": "stayer.hooks.callbacks",
    "ConfigError": "stayer.errors",
    "Continue": "stayer.events",
    "Decision": "stayer.permissions",
    "Event": "stayer.events",
    "Finished": "stayer.events",
    "Message": "stayer.messages",
    "MessageCompleted": "stayer.events",
    "ModelError": "stayer.errors",
    "ModelUsage": "stayer.events",
    "PermissionRequested": "stayer.events",
    "PermissionResolved": "stayer.events",
    "QueryOptions": "stayer.session.options",
    "ScriptedProvider": "stayer.providers.scripted",
    "Session": "stayer.session.session",
    "SessionBusy": "stayer.session.session",
    "SessionStarted": "stayer.events",
    "StayerError": "stayer.errors",
    "Terminal": "stayer.events",
    "TextDelta": "stayer.events",
    "Tool": "stayer.tools.base",
    "ToolCallFinished": "stayer.events",
    "ToolCallStarted": "stayer.events",
    "ToolContext": "stayer.tools.base",
    "ToolOutput": "stayer.tools.base",
    "UserMessage": "stayer.messages",
    "query": "stayer.session.query",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'stayer' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
