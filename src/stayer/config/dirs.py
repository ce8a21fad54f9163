"""The user's own folders: stayer's (`STAYER_CONFIG_DIR`, else `~/.stayer`) and Claude Code's
(`CLAUDE_CONFIG_DIR`, else `~/.claude`), where user settings, memory files and sessions live."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stayer.errors import ConfigError


def config_root(env: Mapping[str, str]) -> Path:
    """stayer's own folder: `STAYER_CONFIG_DIR`, else `~/.stayer`."""
    given = env.get("STAYER_CONFIG_DIR")
    if not given:
        return Path.home() / ".stayer"
    try:
        # absolute, so a path built from it means the same file whatever directory reads it
        return Path(given).expanduser().resolve()
    except RuntimeError:  # `~name` for a user that does not exist
        raise ConfigError(f"STAYER_CONFIG_DIR {given}: no such home directory") from None


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's own folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    given = env.get("CLAUDE_CONFIG_DIR")
    if not given:
        return Path.home() / ".claude"
    try:
        return Path(given).expanduser().resolve()
    except RuntimeError:
        raise ConfigError(f"CLAUDE_CONFIG_DIR {given}: no such home directory") from None


CLAUDE_JSON = ".claude.json"
"""Claude Code's own file of the user's: the servers `claude mcp add` keeps, project approvals."""


def claude_json_path(env: Mapping[str, str]) -> Path:
    """Claude Code's `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set)."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return claude_config_dir(env) / CLAUDE_JSON
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / CLAUDE_JSON
