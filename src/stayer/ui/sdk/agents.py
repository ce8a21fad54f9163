"""The SDK's agents: claude-agent-sdk sends `ClaudeAgentOptions.agents` in its `initialize`
request (not as `--agents`), in the shape `--agents` takes; they join the command line's, a
name given in both taking the SDK's definition. They are checked as `--agents` is when the
session opens, so a bad definition stops it in one line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from stayer.errors import ConfigError
from stayer.session.options import QueryOptions

from .control import ControlChannel


def with_agents(
    options: QueryOptions, initialize: Mapping[str, Any], channel: ControlChannel
) -> tuple[QueryOptions, Mapping[str, Any]]:
    """`options` with the `initialize` request's `agents` added (a wiring; no reply fields)."""
    given = initialize.get("agents")
    if given is None:
        return options, {}
    if not isinstance(given, Mapping):
        raise ConfigError(
            "initialize: agents must be an object of agent names to definitions, as "
            "ClaudeAgentOptions.agents sends them"
        )
    mine = options.agents
    if isinstance(mine, str):
        try:
            mine = json.loads(mine)
        except json.JSONDecodeError:
            return options, {}  # the command line's own error stops the session as it opens
    if mine is not None and not isinstance(mine, Mapping):
        return options, {}  # likewise
    return replace(options, agents={**(mine or {}), **given}), {}
