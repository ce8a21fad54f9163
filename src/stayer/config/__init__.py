"""Settings files: stayer's `.stayer/` and Claude Code's `.claude/`, typed, merged and placed.

`load_settings(cwd, env, flag_settings=..., sources=...)` reads every level (user, project,
local, then `--settings`) and returns one `Loaded`: the merged `Settings`, the permission rules
with the file each came from, and one warning line per problem. See `sources` for the order and
`model` for the keys.
"""

from __future__ import annotations

from .dirs import claude_config_dir, config_root
from .model import HookHandler, HookMatcher, Permissions, Settings
from .sources import (
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

__all__ = [
    "LEVELS",
    "NO_CLAUDE_SWITCH",
    "FlagSettings",
    "HookHandler",
    "HookMatcher",
    "Level",
    "Loaded",
    "Permissions",
    "Settings",
    "Source",
    "SourceDir",
    "SourceRule",
    "claude_config_dir",
    "config_root",
    "load_settings",
    "parse_levels",
]
