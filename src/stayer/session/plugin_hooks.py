"""Plugins' hooks joining a session's: each loaded plugin's `hooks/hooks.json`, in Claude Code's
format (`{"hooks": {"PreToolUse": [{"matcher": ..., "hooks": [...]}]}}`), with
`${CLAUDE_PLUGIN_ROOT}` in its commands made the plugin's folder.

The user enabled or passed the plugin, so its hooks run as the user's settings' do, after
them. A hooks file that cannot be used stops the session with one line, as a settings file's
bad hooks do: a hook may guard something (a PreToolUse that blocks), and running without it
unseen would let through what the person meant to stop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from stayer.agents.model import Plugin
from stayer.errors import ConfigError

if TYPE_CHECKING:
    from stayer.config.model import HookMatcher

Hooks = Mapping[str, tuple["HookMatcher", ...]]

_ROOT = "${CLAUDE_PLUGIN_ROOT}"
_FIX = "fix it, or leave the plugin out"


def plugin_hooks(plugins: Sequence[Plugin]) -> dict[str, tuple[HookMatcher, ...]]:
    """The hooks of every plugin that has some, event name → matchers, in the plugins' order;
    raises `ConfigError` in one line for a hooks file that cannot be used."""
    merged: dict[str, tuple[HookMatcher, ...]] = {}
    for plugin in plugins:
        for event, matchers in _read(plugin).items():
            merged[event] = (*merged.get(event, ()), *matchers)
    return merged


def with_plugin_hooks(settings: Hooks, plugins: Hooks) -> Hooks:
    """The settings' hooks, then the plugins' for each event."""
    if not plugins:
        return settings
    events = dict.fromkeys((*settings, *plugins))
    return {event: (*settings.get(event, ()), *plugins.get(event, ())) for event in events}


def _read(plugin: Plugin) -> dict[str, tuple[HookMatcher, ...]]:
    path = plugin.hooks_file
    if path is None:
        return {}
    from stayer.config.model import HookMatcher

    where = f"plugin {plugin.name}: {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{where}: cannot read it ({error}); {_FIX}") from None
    except (json.JSONDecodeError, RecursionError, ValueError) as error:
        raise ConfigError(f"{where}: not valid JSON ({error}); {_FIX}") from None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        raise ConfigError(f'{where}: needs a "hooks" object of events; {_FIX}')
    try:
        return msgspec.convert(_rooted(hooks, str(plugin.root)), dict[str, tuple[HookMatcher, ...]])
    except msgspec.ValidationError as error:
        raise ConfigError(f"{where}: {error}; {_FIX}") from None


def _rooted(value: Any, root: str) -> Any:
    """`value` with `${CLAUDE_PLUGIN_ROOT}` in its strings made the plugin's folder."""
    if isinstance(value, str):
        return value.replace(_ROOT, root)
    if isinstance(value, list):
        return [_rooted(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _rooted(item, root) for key, item in value.items()}
    return value
