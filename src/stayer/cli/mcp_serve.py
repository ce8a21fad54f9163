"""`stayer mcp serve` (being built: issue 18)."""

from __future__ import annotations

from collections.abc import Sequence

from stayer.errors import ConfigError


def run_serve(argv: Sequence[str]) -> int:
    """Serve stayer's built-in tools over MCP on stdio; the exit status."""
    raise ConfigError("stayer mcp serve is not built yet")
