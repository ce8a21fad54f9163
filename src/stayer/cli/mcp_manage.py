"""`stayer mcp list|get|add|add-json|remove|approve` (being built: issue 18)."""

from __future__ import annotations

from collections.abc import Sequence

from stayer.errors import ConfigError


def run_manage(argv: Sequence[str]) -> int:
    """Manage the MCP servers of the settings; the exit status."""
    raise ConfigError("stayer mcp is not built yet")
