"""`stayer mcp serve`: stayer's built-in tools offered to other agents and editors as an MCP
server over standard input and output (the server itself is `stayer.ui.mcp_serve`).

The flags are the main command line's permission and settings flags, added by the same builders
(`flags`) and read into options by the one function that does that (`options_from_args`), so a
rule, a mode or a settings file means here what it means in a run. Every other option keeps the
main command line's default. Standard output carries only the protocol.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from stayer.errors import ConfigError

from .flags import add_permission_flags, add_settings_flags, build_parser

if TYPE_CHECKING:
    from stayer.providers.base import Provider

USAGE = (
    "stayer mcp serve [--permission-mode MODE] [--allowedTools RULE...] "
    "[--disallowedTools RULE...] [--tools TOOL...] [--add-dir DIR...] [--settings FILE|JSON] "
    "[--setting-sources SOURCES] [--sandbox [--sandbox-network]]"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"mcp serve: {message}; usage: {USAGE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stayer mcp serve",
        usage=USAGE,
        description=(
            "Offer stayer's built-in tools (Read, Edit, Bash, ...) as an MCP server on standard "
            "input and output. Every call is judged as a model's call in a headless run is: "
            "the permission mode and rules, the settings' hooks, the protected paths; a call "
            "that would need approval is refused, saying which rule would allow it."
        ),
        allow_abbrev=False,
    )
    add_permission_flags(parser)
    add_settings_flags(parser)
    return parser


def run_serve(argv: Sequence[str]) -> int:
    """Serve stayer's built-in tools over MCP on stdio until standard input closes; the exit
    status. Raises `ConfigError` in one line for flags or settings that cannot be used."""
    import asyncio

    from stayer.ui.mcp_serve import serve_stdio

    from .options import options_from_args

    # what serve does not take keeps the main command line's default
    defaults = build_parser().parse_args([])
    args = _parser().parse_args(list(argv), namespace=defaults)
    # the servers of the settings and .mcp.json stay off: serve offers only stayer's own tools
    options = options_from_args(args, provider=_provider(), strict_mcp_config=True)
    return asyncio.run(serve_stdio(options))


def _provider() -> Provider | None:
    """The model client: the configured one (a tool may ask it, as WebFetch does), else a
    stand-in that says no model is configured, so the tools serve without one."""
    import os

    from stayer.providers.select import model_configured
    from stayer.ui.mcp_serve import NoModel

    return None if model_configured(os.environ) else NoModel()
