"""Switch variables (`DISABLE_…`, `CLAUDE_CODE_NO_…`): one reading of them for every layer.

A switch is on when its value is `1`, `true`, `yes` or `on` (any case), as Claude Code reads
them; `0`, `false` or an empty value leave it off.
"""

from __future__ import annotations

from collections.abc import Mapping

_TRUE = frozenset({"1", "true", "yes", "on"})


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """Whether the switch variable `name` is on in `env`."""
    return env.get(name, "").strip().lower() in _TRUE
