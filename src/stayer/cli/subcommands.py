"""The subcommands: `stayer demo`, `stayer permissions check`, `stayer mcp ...`, `stayer acp` and
`stayer batch`, each with its own words and its own `--help`.

A subcommand is named by the first word of the command line only, so `stayer -p permissions`
(or any flag first) still sends the word to the model as a prompt. A subcommand never falls
back to being a prompt: what it does not take is a one-line usage error (exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from stayer.errors import ConfigError

SUBCOMMANDS = ("demo", "permissions", "mcp", "acp", "batch")
EXIT_USAGE = 2

PERMISSIONS_HELP = """usage: stayer permissions check [...]

What the permission rules would have done with past sessions.

subcommands:
  check    replay the tool calls of past sessions (stayer's and Claude Code's) against a set
           of rules: what would be allowed, asked and denied, the allow rules that widen
           dangerously, and the fewest allow rules that would remove the most questions

`stayer permissions check --help` lists its options.
"""


def subcommand(argv: Sequence[str]) -> int | None:
    """Run the subcommand `argv` names and return its exit status; None when its first word
    names none (it is then a run)."""
    if not argv or argv[0] not in SUBCOMMANDS:
        return None
    if argv[0] == "demo":
        return _demo_command(argv[1:])
    if argv[0] == "mcp":
        return _mcp_command(argv[1:])
    if argv[0] == "acp":
        from .acp_command import run_acp

        return run_acp(argv[1:])
    if argv[0] == "batch":
        from .batch_command import run_batch_command

        return run_batch_command(argv[1:])
    return _permissions_command(argv[1:])


def _mcp_command(argv: Sequence[str]) -> int:
    """`stayer mcp serve` offers stayer's tools as an MCP server; the other words manage the
    servers of the settings (`list`, `get`, `add`, `add-json`, `remove`, `approve`)."""
    if argv and argv[0] == "serve":
        from .mcp_serve import run_serve

        return run_serve(argv[1:])
    from .mcp_manage import run_manage

    return run_manage(argv)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        name = self.prog.removeprefix("stayer ")
        raise ConfigError(f"{name}: {message}; usage: {self.usage}")


def _demo_command(argv: Sequence[str]) -> int:
    parser = _Parser(
        prog="stayer demo",
        usage="stayer demo",
        description=(
            "Watch a live session fix a real bug in a throwaway git repository. With a model "
            "configured (ANTHROPIC_API_KEY, OPENAI_API_KEY or a base URL) that model does the "
            "work; with none, the scripted model plays it, running the real tools."
        ),
        allow_abbrev=False,
    )
    parser.parse_args(list(argv))  # only --help; it exits before anything runs
    import asyncio

    return asyncio.run(_demo())


def _permissions_command(argv: Sequence[str]) -> int:
    if not argv:
        print(PERMISSIONS_HELP, end="", file=sys.stderr)
        return EXIT_USAGE
    word, rest = argv[0], argv[1:]
    if word in ("-h", "--help"):
        print(PERMISSIONS_HELP, end="")
        return 0
    if word == "check":
        from .permissions_check import run as check_permissions

        return check_permissions(rest)
    raise ConfigError(
        f"permissions: {word!r} is not one of its subcommands; the one there is: "
        "stayer permissions check (see stayer permissions --help)"
    )


async def _demo() -> int:
    from stayer.providers.select import model_configured
    from stayer.session.demo import PROMPT, make_repo, scripted_model
    from stayer.session.options import QueryOptions
    from stayer.session.query import query
    from stayer.ui.headless import show_live

    root = await make_repo()
    scripted = None
    if model_configured(os.environ):
        print(f"stayer demo: a real session on a throwaway repository at {root}", file=sys.stderr)
    else:
        print(
            "stayer: no model configured (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or a base "
            "URL); running the offline demo on the scripted model, with real tools",
            file=sys.stderr,
        )
        scripted = scripted_model(root)
    options = QueryOptions(cwd=root, permission_mode="bypassPermissions", provider=scripted)
    print(f"> {PROMPT}\n", flush=True)
    status = await show_live(query(PROMPT, options=options), options.abort, sys.stdout)
    if scripted is not None and status == 0:
        scripted.assert_done()
    print(f"\nThe repository is still there to inspect: {root}", file=sys.stderr)
    return status
