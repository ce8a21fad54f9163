"""A child session from its parent's, with no file or process I/O (`Session.derive`).

A child (a subagent's session, a side task) shares what is costly or must stay one: the model
client and its connection pool, the caller's decider, the settings, the sandbox and the
working directories. It has its own conversation, id, system prompt, tool set and tool context
(files read, todos, background shells), and a permission state of its own that cannot exceed
its parent's: its mode is the one asked for only when that allows no more than the parent's
mode at the moment of deriving, and the rules are the parent's. It keeps no transcript unless
asked, and never closes what it shares.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from stayer.context.memory import Memory
from stayer.errors import ConfigError
from stayer.permissions import PermissionMode, PermissionState, parse_mode
from stayer.providers.select import ModelChoice
from stayer.tools.base import Tool

from .assemble import Setup, assemble
from .resolve import Resolved, listed
from .system_prompt import SystemPrompt
from .toolset import run_toolbox

_LATITUDE: dict[PermissionMode, int] = {
    "plan": 0,
    "dontAsk": 0,
    "default": 1,
    "acceptEdits": 2,
    "bypassPermissions": 3,
}
"""How much a mode lets through without asking: a child's may not be above its parent's."""


def derived_setup(
    parent: Setup,
    *,
    system_prompt: str | None = None,
    tools: str | Sequence[str] | None = None,
    extra_tools: Sequence[Tool[Any]] = (),
    model: str | None = None,
    permission_mode: str | None = None,
) -> Setup:
    """The child's setup: see the module's docstring; raises `ConfigError` for a tool name it
    does not know or a model its parent's client does not serve."""
    resolved = parent.resolved
    if resolved is None:
        raise ConfigError("this session was not opened from options, so it cannot be derived")
    mode = _bounded(permission_mode, parent.permissions)
    policy = replace(parent.permissions.policy, mode=mode)
    options = replace(
        resolved.options,
        system_prompt=system_prompt,
        append_system_prompt=None,
        tools=tools,
        extra_tools=tuple(extra_tools),
        permission_mode=mode,
        persist_session=False,
        session_id=None,
        resume=None,
        continue_session=False,
        history=(),
    )
    toolbox = run_toolbox(None if tools is None else listed(tools), extra_tools, policy)
    child = replace(
        resolved,
        settled=replace(resolved.settled, options=options),
        policy=replace(resolved.policy, mode=mode),
        session_id=str(uuid.uuid4()),
        tools=toolbox,
        owns_provider=False,
        system=_system(resolved, system_prompt),
        choice=_choice(resolved, model),
    )
    return assemble(child, permissions=PermissionState(policy))


def _bounded(asked: str | None, parent: PermissionState) -> PermissionMode:
    """The mode asked for, unless it lets through more than the parent's does now."""
    if asked is None:
        return parent.mode
    mode = parse_mode(asked)
    return mode if _LATITUDE[mode] <= _LATITUDE[parent.mode] else parent.mode


def _system(resolved: Resolved, text: str | None) -> SystemPrompt:
    """The child's own prompt as given (with no memory files: what it needs is in its prompt),
    or its parent's."""
    if text is None:
        return resolved.system

    def render(budget: int | None, model: str | None = None) -> str:
        return text

    return SystemPrompt(text, Memory(), render)


def _choice(resolved: Resolved, model: str | None) -> ModelChoice:
    """The parent's model, or another the same client serves."""
    if model is None:
        return resolved.choice
    from stayer.providers.select import choose_model

    choice = choose_model(model, resolved.env)
    if choice.provider != resolved.choice.provider:
        raise ConfigError(
            f"model {model!r} is served by {choice.provider}, and a child session uses its "
            f"parent's {resolved.choice.provider} client; pick a {resolved.choice.provider} model"
        )
    return choice
