"""Plugins' hooks joining a session's: each loaded plugin's `hooks/hooks.json`, in Claude Code's
format (`{"hooks": {"PreToolUse": [{"matcher": ..., "hooks": [...]}]}}`), with
`${CLAUDE_PLUGIN_ROOT}` in its commands made the plugin's folder, quoted for where it stands
(`stayer.agents.shell_context`: a folder's name is text, never shell syntax), and the folder
given to each of its commands as `CLAUDE_PLUGIN_ROOT` in their environment.

The user enabled or passed the plugin, so its hooks run as the user's settings' do, after
them. A hooks file that cannot be used stops the session with one line, as a settings file's
bad hooks do: a hook may guard something (a PreToolUse that blocks), and running without it
unseen would let through what the person meant to stop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from stayer.agents.model import Plugin
from stayer.agents.shell_context import Place, Unquotable, places, quoted
from stayer.errors import ConfigError

if TYPE_CHECKING:
    from stayer.config.model import HookHandler, HookMatcher, PluginHookHandler

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
        read = msgspec.convert(hooks, dict[str, tuple[HookMatcher, ...]])
    except msgspec.ValidationError as error:
        raise ConfigError(f"{where}: {error}; {_FIX}") from None
    root = str(plugin.root)
    try:
        return {
            event: tuple(replace(m, hooks=tuple(_rooted(h, root) for h in m.hooks)) for m in ms)
            for event, ms in read.items()
        }
    except Unquotable as error:
        raise ConfigError(f"{where}: {error}; {_FIX}") from None


def _rooted(handler: HookHandler, root: str) -> PluginHookHandler:
    """`handler` knowing its plugin's folder, and `${CLAUDE_PLUGIN_ROOT}` in its command made
    that folder quoted for where it stands (a folder named `a;b` or with a space stays one
    path); raises `Unquotable` where it cannot be."""
    from stayer.config.model import PluginHookHandler

    command = handler.command
    if command is not None and _ROOT in command:
        spans = [(m.start(), m.end()) for m in re.finditer(re.escape(_ROOT), command)]
        pieces, position = [], 0
        for (start, end), place in zip(spans, places(command, spans), strict=True):
            pieces += [command[position:start], _quoted(root, place, command)]
            position = end
        command = "".join([*pieces, command[position:]])
    fields = {**msgspec.structs.asdict(handler), "command": command}
    return PluginHookHandler(**fields, plugin_root=root)


def _quoted(root: str, place: Place, command: str) -> str:
    try:
        return quoted(root, place)
    except Unquotable:
        first = command.strip().splitlines()[0]
        raise Unquotable(
            f"{_ROOT} in the command `{first}`… stands where the folder's name cannot be quoted"
            " safely (after a backquote, here-document, ${…}, arithmetic, case or comment)"
        ) from None
