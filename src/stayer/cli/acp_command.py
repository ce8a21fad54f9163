"""`stayer acp`: stayer as an Agent Client Protocol agent on standard input and output, for
editors (Zed, JetBrains, Neovim plugins) to start (the agent itself is `stayer.ui.acp`).

The flags are the main command line's permission and settings flags and `--model`, read into
options by the one function that does that (`options_from_args`), so they mean here what they
mean in a run; each session the editor opens starts from them, in the folder it names.
Standard output carries only the protocol; anything to say goes to standard error.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from stayer.errors import ConfigError

from .flags import add_permission_flags, add_settings_flags, build_parser

USAGE = (
    "stayer acp [--model MODEL] [--permission-mode MODE] [--allowedTools RULE...] "
    "[--disallowedTools RULE...] [--tools TOOL...] [--add-dir DIR...] "
    "[--dangerously-skip-permissions] [--allow-dangerously-skip-permissions] "
    "[--settings FILE|JSON] [--setting-sources SOURCES] [--sandbox [--sandbox-network]]"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"acp: {message}; usage: {USAGE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stayer acp",
        usage=USAGE,
        description=(
            "Serve stayer as an Agent Client Protocol agent on standard input and output, for "
            "an editor to start (Zed: agent_servers). Each session the editor opens is a stayer "
            "session in the folder it names, saved as any other and resumable with --resume."
        ),
        allow_abbrev=False,
    )
    parser.add_argument("--model", help="the model every session starts with (an alias or id)")
    add_permission_flags(parser)
    add_settings_flags(parser)
    return parser


def run_acp(argv: Sequence[str]) -> int:
    """Serve ACP on stdio until the editor closes standard input; the exit status. Raises
    `ConfigError` in one line for flags that cannot be used."""
    import asyncio

    from stayer.ui.acp import serve_stdio

    from .options import options_from_args

    defaults = build_parser().parse_args([])  # what acp does not take keeps the main default
    args = _parser().parse_args(list(argv), namespace=defaults)
    return asyncio.run(serve_stdio(options_from_args(args)))
