"""Settings files: stayer's `.stayer/` and Claude Code's `.claude/`, typed, merged and placed.

`load_settings(cwd, env, flag_settings=..., sources=..., rule_problem=...)` reads every level
(user, project, local, then `--settings`) and returns one `Loaded`: the merged `Settings`, the
permission rules with the file and place each came from, and one warning line per minor problem
or file left out. A file that cannot be used safely raises `ConfigError` instead (fail closed;
`STAYER_IGNORE_BAD_SETTINGS=1` leaves it out whole). See `sources` for the order and what fails,
`parse` for the weight of each problem and `model` for the keys.
"""

from __future__ import annotations

from .dirs import claude_config_dir, config_root
from .model import HookHandler, HookMatcher, Permissions, Settings
from .parse import RuleCheck
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
