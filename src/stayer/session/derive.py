"""A child session from its parent's, with no file or process I/O (`Session.derive`).

A child (a subagent's session, a side task) shares what is costly or must stay one: the model
client and its connection pool, the caller's decider, the settings, the sandbox and the
working directories. It has its own conversation, id, system prompt, tool set and tool context
(files read, todos, background shells), and a permission state of its own that cannot exceed
its parent's: its mode is the one asked for only when that allows no more than the parent's
mode at the moment of deriving, and the rules are the parent's as they are then. A parent's
later switch to a stricter mode reaches the child at once (the stricter of the two). Rules the
parent gains or loses later (a person's "don't ask again", a rule removed in `/permissions`)
reach the child at once, and the child cannot remove a deny or ask rule its parent holds. It
keeps no transcript unless asked, and never closes what it shares.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from stayer.context.memory import Memory
from stayer.errors import ConfigError
from stayer.permissions import (
    Behavior,
    PermissionMode,
    PermissionPolicy,
    PermissionState,
    Rule,
    parse_mode,
)
from stayer.providers.select import ModelChoice
from stayer.tools.base import Tool

from .assemble import Setup, assemble
from .mode_bounds import NO_LOOSER as _NO_LOOSER
from .resolve import Resolved, listed
from .system_prompt import SystemPrompt
from .toolset import run_toolbox


class BoundedPermissionState(PermissionState):
    """A child's live permission state: a switch to a mode looser than its ceiling (its
    parent's mode when it was derived) keeps the ceiling instead, whoever asks for it (a front
    end, an accepted plan); it follows its parent's rule edits, and refuses to drop a deny or
    ask rule the parent still holds."""

    __slots__ = ("ceiling", "limit", "parent")

    def __init__(
        self, policy: PermissionPolicy, ceiling: PermissionMode, parent: PermissionState
    ) -> None:
        super().__init__(policy)
        self.limit = ceiling
        """The parent's mode when the child was derived: no later switch goes past it."""
        self.ceiling = ceiling
        self.parent = parent
        parent.follow(self)

    def set_mode(self, mode: PermissionMode) -> None:
        super().set_mode(mode if mode in _NO_LOOSER[self.ceiling] else self.ceiling)

    def leader_switched(self, mode: PermissionMode) -> None:
        """The parent switched to `mode`: it is the child's ceiling now (never past the one
        the child was derived under), and a child whose mode lets through more than it does
        switches to it at once (a running subagent must not write after its parent entered
        plan mode). A parent loosening again does not loosen the child."""
        self.ceiling = mode if mode in _NO_LOOSER[self.limit] else self.limit
        if self.mode not in _NO_LOOSER[mode]:
            super().set_mode(mode)

    def remove_rule(self, rule: Rule) -> tuple[Behavior, ...]:
        held = self.parent.policy
        if rule in held.deny or rule in held.ask:
            raise ConfigError(
                f"{rule} is a rule of the session this one was derived from; a derived session "
                "cannot drop it (remove it from that session instead)"
            )
        return super().remove_rule(rule)


def derived_setup(
    parent: Setup,
    *,
    system_prompt: str | None = None,
    tools: str | Sequence[str] | None = None,
    extra_tools: Sequence[Tool[Any]] = (),
    model: str | None = None,
    permission_mode: str | None = None,
    cwd: Path | None = None,
) -> Setup:
    """The child's setup: see the module's docstring. `tools` picks among the parent's tools
    (all of them when None); `extra_tools` adds the caller's own; `cwd` is where it works
    (its parent's folder when None; a subagent's own git worktree, say). Raises `ConfigError`
    for a tool the parent does not have or a model its parent's client does not serve."""
    resolved = parent.resolved
    if resolved is None:
        raise ConfigError("this session was not opened from options, so it cannot be derived")
    ceiling = parent.permissions.mode
    mode = _bounded(permission_mode, ceiling)
    # an accepted plan returns to the parent's mode, never to one the parent was not in
    policy = replace(parent.permissions.policy, mode=mode, after_plan=ceiling)
    names = parent.params.tools.names
    wanted = list(names) if tools is None else _own(listed(tools), names)
    inherited = {tool.name: tool for tool in resolved.options.extra_tools}
    given = {tool.name: tool for tool in extra_tools}
    own = [*given.values(), *(inherited[n] for n in wanted if n in inherited and n not in given)]
    builtin = [name for name in wanted if name not in inherited and name not in given]
    options = replace(
        resolved.options,
        cwd=cwd or resolved.options.cwd,
        system_prompt=system_prompt,
        append_system_prompt=None,
        tools=builtin,
        extra_tools=tuple(own),
        permission_mode=mode,
        persist_session=False,
        session_id=None,
        resume=None,
        continue_session=False,
        history=(),
    )
    toolbox = run_toolbox(builtin, own, policy)
    child = replace(
        resolved,
        settled=replace(resolved.settled, options=options),
        cwd=cwd or resolved.cwd,
        policy=replace(resolved.policy, mode=mode),
        session_id=str(uuid.uuid4()),
        tools=toolbox,
        owns_provider=False,
        system=_system(resolved, system_prompt),
        choice=_choice(resolved, model),
    )
    return assemble(child, permissions=BoundedPermissionState(policy, ceiling, parent.permissions))


def _bounded(asked: str | None, ceiling: PermissionMode) -> PermissionMode:
    """The mode asked for, unless it lets through more than the parent's does now."""
    if asked is None:
        return ceiling
    mode = parse_mode(asked)
    return mode if mode in _NO_LOOSER[ceiling] else ceiling


def _own(asked: Sequence[str], names: Sequence[str]) -> list[str]:
    """The tools asked for, each one the parent has: a child never gets a tool its parent
    lacks (a parent limited to Read must not hand its child Bash)."""
    wanted = [name.strip() for item in asked for name in item.split(",") if name.strip()]
    missing = sorted(set(wanted) - set(names))
    if missing:
        raise ConfigError(
            f"a child session can have only its parent's tools; the parent has no "
            f"{', '.join(missing)} (it has {', '.join(names)})"
        )
    return wanted


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
