"""Where a session keeps its files: `~/.stayer/projects/<folder-slug>/<session-id>/`.

`STAYER_CONFIG_DIR` moves the root. The folder slug is the working directory's absolute path
with every character that is not a letter, a digit or `-` turned into `-`, as Claude Code names
its project folders, so one project's sessions sit together and are easy to find by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from stayer.errors import ConfigError

_UNSAFE = re.compile(r"[^A-Za-z0-9-]")


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


def project_slug(cwd: Path) -> str:
    """The name of the folder holding the sessions run in `cwd`."""
    return _UNSAFE.sub("-", str(cwd))


def session_folder(env: Mapping[str, str], cwd: Path, session_id: str) -> Path:
    """The folder for one session's files (saved prompts, and later large tool output)."""
    return config_root(env) / "projects" / project_slug(cwd) / session_id
