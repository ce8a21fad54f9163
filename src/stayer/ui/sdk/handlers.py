"""The SDK's control requests about the running session (protocols.md §1.5): `interrupt`,
`set_permission_mode`, `set_model` and `get_context_usage`. Each is made from the session's
`Driver` (`requests.HANDLERS`); what cannot be done (an unknown mode or model) is the error
reply's one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stayer.context.compact import CHARS_PER_TOKEN, estimate_tokens
from stayer.driver import Driver
from stayer.errors import ConfigError
from stayer.loop.compaction import threshold
from stayer.messages import AssistantMessage, usage_to_wire

from .control import ControlChannel, Handler

INTERRUPTED = "interrupted by the SDK (interrupt)"
COLOURS = ("promptBorder", "inactive", "purple")
"""Claude Code's theme colours for the system prompt, the tools and the messages."""


def interrupt(driver: Driver, channel: ControlChannel) -> Handler:
    """Stop the running run at once; it still ends with its (interrupted) `result`. With no
    run going there is nothing to stop, and the reply is success all the same."""

    async def handle(request: Mapping[str, Any]) -> None:
        if driver.busy:
            driver.interrupt(INTERRUPTED)

    return handle


def set_permission_mode(driver: Driver, channel: ControlChannel) -> Handler:
    """Switch the permission mode, for the running run's next calls too."""

    async def handle(request: Mapping[str, Any]) -> None:
        mode = request.get("mode")
        if not isinstance(mode, str) or not mode:
            raise ConfigError("set_permission_mode needs a mode (default, acceptEdits, ...)")
        driver.session.set_permission_mode(mode)

    return handle


def set_model(driver: Driver, channel: ControlChannel) -> Handler:
    """Answer with another model from the next model call on; null: the model the session
    opened with."""
    opened = driver.session.setup.started.model

    async def handle(request: Mapping[str, Any]) -> None:
        model = request.get("model")
        if model is not None and not (isinstance(model, str) and model.strip()):
            raise ConfigError("set_model needs a model name, or null for the default")
        await driver.session.set_model(opened if model is None else model)

    return handle


def get_context_usage(driver: Driver, channel: ControlChannel) -> Handler:
    """What fills the context window now (`ContextUsageResponse`)."""

    async def handle(request: Mapping[str, Any]) -> dict[str, Any]:
        return context_usage(driver)

    return handle


def context_usage(driver: Driver) -> dict[str, Any]:
    """The window part by part, estimated as compaction estimates it (the system prompt, the
    tools' definitions, the conversation), with the last request's own count as the model
    gave it (`apiUsage`)."""
    session = driver.session
    params = session.setup.params
    window = params.context_window
    parts = {
        "System prompt": len(params.system_prompt) // CHARS_PER_TOKEN,
        "System tools": session.tool_tokens(),
        "Messages": estimate_tokens(session.history),
    }
    total = sum(parts.values())
    auto = params.compaction.auto
    limit = min(threshold(params), window) if auto else window
    categories = [
        {"name": name, "tokens": tokens, "color": color}
        for (name, tokens), color in zip(parts.items(), COLOURS, strict=True)
    ]
    categories.append({"name": "Free space", "tokens": max(0, limit - total), "color": "subtle"})
    usage: dict[str, Any] = {
        "categories": categories,
        "totalTokens": total,
        "maxTokens": limit,
        "rawMaxTokens": window,
        "percentage": round(total * 100 / window, 1) if window else 0.0,
        "model": params.model,
        "isAutoCompactEnabled": auto,
        "memoryFiles": _memory_files(driver),
        "mcpTools": [],
        "agents": [],
        "gridRows": [],
        "apiUsage": _last_usage(driver),
    }
    if auto:
        usage["autoCompactThreshold"] = limit
    return usage


def _memory_files(driver: Driver) -> list[dict[str, Any]]:
    """The memory files in the system prompt: path, where it comes from, and its estimate."""
    resolved = driver.session.setup.resolved
    memory = resolved.system.memory if resolved is not None else None
    if memory is None:
        return []
    return [
        {"path": str(file.path), "type": file.source, "tokens": len(file.text) // CHARS_PER_TOKEN}
        for file in memory.files
    ]


def _last_usage(driver: Driver) -> dict[str, int] | None:
    for message in reversed(driver.session.history):
        if isinstance(message, AssistantMessage):
            return usage_to_wire(message.usage)
    return None
