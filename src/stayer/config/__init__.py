"""Settings files: stayer's `.stayer/` and Claude Code's `.claude/`, typed, merged and placed.

`load_settings(cwd, env, flag_settings=..., sources=..., rule_problem=...)` reads every level
(user, project, local, then `--settings`) and returns one `Loaded`: the merged `Settings`, the
permission rules with the file and place each came from, and one warning line per minor problem
or file left out. A file that cannot be used safely raises `ConfigError` instead (fail closed;
`STAYER_IGNORE_BAD_SETTINGS=1` leaves it out whole). See `sources` for the order and what fails,
`parse` for the weight of each problem and `model` for the keys.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .dirs import claude_config_dir, config_root
from .sources import (
    IGNORE_BAD_SWITCH,
    LEVELS,
    NO_CLAUDE_SWITCH,
    FlagSettings,
    Level,
    Loaded,
    Source,
    SourceDir,
    SourceRule,
    load_settings,
    parse_levels,
)

if TYPE_CHECKING:
    from .model import HookHandler, HookMatcher, Permissions, Settings
    from .parse import RuleCheck

__all__ = [
    "IGNORE_BAD_SWITCH",
    "LEVELS",
    "NO_CLAUDE_SWITCH",
    "FlagSettings",
    "HookHandler",
    "HookMatcher",
    "Level",
    "Loaded",
    "Permissions",
    "RuleCheck",
    "Settings",
    "Source",
    "SourceDir",
    "SourceRule",
    "claude_config_dir",
    "config_root",
    "load_settings",
    "parse_levels",
]

_LAZY = {
    "HookHandler": "model",
    "HookMatcher": "model",
    "Permissions": "model",
    "Settings": "model",
    "RuleCheck": "parse",
}
"""The names of the settings models: imported on first use, so that a run without settings
files never loads them."""


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'stayer.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
