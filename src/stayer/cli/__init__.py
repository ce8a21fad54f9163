"""The `stayer` command: Claude Code's flags → options → one run → a printer.

    stayer -p "PROMPT" [--output-format text|json|stream-json] [flags]
    echo "PROMPT" | stayer -p
    stayer demo            a live session on a small task in a throwaway repository

Unknown flags are reported on standard error and ignored, so newer callers (claude-agent-sdk
passes flags stayer may not know yet) keep working. Errors in what the user gave are one line
on standard error and exit status 2; a run that ends in error exits 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from stayer._version import CLAUDE_CODE_COMPAT_VERSION, __version__
from stayer.errors import ConfigError, StayerError

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141
STDIN_WAIT_S = 3.0
"""With a prompt argument, how long to wait for piped input before going on without it."""

# Claude Code flags stayer does not act on yet. Declared with their arity, so their values are
# never mistaken for the prompt; each use is reported on standard error.
UNSUPPORTED_WITH_VALUE = (
    "--fallback-model", "--settings", "--setting-sources", "--add-dir", "--mcp-config",
    "--resume", "--permission-prompt-tool", "--max-budget-usd", "--max-thinking-tokens",
    "--betas", "--agents", "--plugin-dir", "--json-schema", "--thinking", "--thinking-display",
    "--effort", "--task-budget", "--resume-session-at", "--resume-drops-turn",
)  # fmt: skip
UNSUPPORTED_SWITCHES = (
    "--continue", "--fork-session", "--strict-mcp-config", "--include-hook-events",
    "--replay-user-messages", "--no-session-persistence", "--bare", "--session-mirror",
)  # fmt: skip


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{message} (see stayer --help)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with Claude Code's flag names (and their kebab-case spellings)."""
    parser = _Parser(
        prog="stayer",
        description="An agent harness that keeps going until the work is done.",
        epilog="Subcommand: `stayer demo` runs a live session on a throwaway repository.",
    )
    parser.add_argument("prompt", nargs="?", help="what to do (read from stdin if omitted)")
    parser.add_argument("-p", "--print", action="store_true", help="run once and print")
    parser.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="final text; one JSON result; or one JSON line per message (Claude Code's shapes)",
    )
    parser.add_argument("--input-format", choices=["text", "stream-json"], default="text")
    parser.add_argument("--verbose", action="store_true", help="with json: every message")
    parser.add_argument(
        "--include-partial-messages", action="store_true", help="stream-json: add raw deltas"
    )
    parser.add_argument("--max-turns", type=int, help="stop after this many tool rounds")
    parser.add_argument("--model", help="model name, or provider:model (anthropic, openai)")
    parser.add_argument("--system-prompt", help="replace the base system prompt")
    parser.add_argument("--system-prompt-file", type=Path, help="the same, from a file")
    parser.add_argument("--append-system-prompt", help="add to the end of the system prompt")
    parser.add_argument("--append-system-prompt-file", type=Path, help="the same, from a file")
    for flag, dest, verb in (
        ("--allowedTools", "allowed_tools", "allow"),
        ("--disallowedTools", "disallowed_tools", "deny"),
    ):
        kebab = "--" + flag[2:].replace("Tools", "-tools").lower()
        parser.add_argument(
            flag,
            kebab,
            dest=dest,
            action="append",
            nargs="+",
            default=[],
            metavar="RULE",
            help=f"{verb} calls matching rules such as Bash or 'Bash(git diff:*)'",
        )
    parser.add_argument(
        "--tools", action="append", nargs="+", metavar="TOOL", help="offer only these tools"
    )
    parser.add_argument(
        "--permission-mode",
        default="default",
        help="default, acceptEdits, plan, bypassPermissions or dontAsk",
    )
    parser.add_argument(
        "--dangerously-skip-permissions", action="store_true", help="allow every tool call"
    )
    parser.add_argument("--session-id", help="use this session id instead of a new one")
    parser.add_argument("-v", "--version", action="store_true", help="print the version")
    unsupported = parser.add_argument_group("accepted for compatibility, not acted on yet")
    for flag in UNSUPPORTED_WITH_VALUE:
        unsupported.add_argument(flag, dest=_dest(flag), action="append", help=argparse.SUPPRESS)
    for flag in UNSUPPORTED_SWITCHES:
        unsupported.add_argument(
            flag, dest=_dest(flag), action="store_true", help=argparse.SUPPRESS
        )
    unsupported.add_argument("-r", dest=_dest("--resume"), action="append", help=argparse.SUPPRESS)
    unsupported.add_argument(
        "-c", dest=_dest("--continue"), action="store_true", help=argparse.SUPPRESS
    )
    return parser


def _dest(flag: str) -> str:
    return "unsupported_" + flag.lstrip("-").replace("-", "_")


def _warn_unsupported(args: argparse.Namespace, unknown: Sequence[str]) -> None:
    for flag in (*UNSUPPORTED_WITH_VALUE, *UNSUPPORTED_SWITCHES):
        if getattr(args, _dest(flag)):
            print(f"stayer: {flag} is not supported yet and was ignored", file=sys.stderr)
    for flag in unknown:
        print(f"stayer: ignoring unknown option {flag}", file=sys.stderr)


def _flatten(groups: Sequence[Sequence[str]] | None) -> list[str]:
    return [item for group in groups or () for item in group]


def _read_text_file(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; give a text file") from None


def _piped_input(*, wait_s: float | None) -> str:
    """Standard input when it is piped: all of it, or (with `wait_s`) nothing if none comes."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    if wait_s is not None:
        import select

        try:
            ready, _, _ = select.select([sys.stdin], [], [], wait_s)
        except (OSError, ValueError):  # not a selectable stream
            ready = [sys.stdin]
        if not ready:
            print(
                f"stayer: no input on standard input after {wait_s:g}s; going on without it",
                file=sys.stderr,
            )
            return ""
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")


def _prompt(args: argparse.Namespace) -> str:
    given = (args.prompt or "").strip()
    piped = _piped_input(wait_s=STDIN_WAIT_S if given else None).strip()
    prompt = "\n\n".join(part for part in (given, piped) if part)
    if not prompt:
        raise ConfigError(
            'no prompt: give one as an argument (stayer -p "...") or on standard input; '
            "`stayer demo` shows a live session"
        )
    return prompt


def _api_key_source(env: Mapping[str, str]) -> str:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        if env.get(name):
            return name
    return "none"


async def _headless(args: argparse.Namespace) -> int:
    from stayer.session.options import QueryOptions
    from stayer.session.query import query
    from stayer.ui.headless import Printer, print_run

    if args.input_format == "stream-json":
        raise ConfigError("--input-format stream-json is not supported yet; pass the prompt")
    system_prompt = _read_text_file(args.system_prompt_file) or args.system_prompt
    append = _read_text_file(args.append_system_prompt_file) or args.append_system_prompt
    mode = "bypassPermissions" if args.dangerously_skip_permissions else args.permission_mode
    options = QueryOptions(
        model=args.model,
        system_prompt=system_prompt,
        append_system_prompt=append,
        max_turns=args.max_turns,
        tools=_flatten(args.tools) if args.tools else None,
        allowed_tools=_flatten(args.allowed_tools),
        disallowed_tools=_flatten(args.disallowed_tools),
        permission_mode=mode,
        session_id=args.session_id,
    )
    printer = Printer(
        output_format=args.output_format,
        verbose=args.verbose,
        include_partial=args.include_partial_messages,
        api_key_source=_api_key_source(os.environ),
    )
    prompt = _prompt(args)
    return await print_run(query(prompt, options=options), printer, options.abort)


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


def run(argv: Sequence[str]) -> int:
    """Run the command line `argv` (without the program name); returns the exit status."""
    if list(argv[:1]) == ["demo"]:
        import asyncio

        return asyncio.run(_demo())
    args, unknown = build_parser().parse_known_args(list(argv))
    strays = [item for item in unknown if not item.startswith("-")]
    if strays:
        raise ConfigError(
            f"unexpected argument {strays[0]!r}: give the prompt as one quoted argument, "
            "and each flag that takes a value one value (repeat the flag for more)"
        )
    _warn_unsupported(args, unknown)
    if args.version:
        print(f"{CLAUDE_CODE_COMPAT_VERSION} (stayer {__version__})")
        return 0
    import asyncio  # imported late: `--version` and `--help` need not pay for it

    if not args.print and args.prompt is None and sys.stdin is not None and sys.stdin.isatty():
        raise ConfigError(
            'the interactive terminal UI is not built yet; use stayer -p "PROMPT", '
            "or `stayer demo` to watch a session"
        )
    return asyncio.run(_headless(args))


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        status = run(sys.argv[1:] if argv is None else argv)
    except ConfigError as exc:
        print(f"stayer: {exc}", file=sys.stderr)
        status = EXIT_USAGE
    except StayerError as exc:
        print(f"stayer: {exc}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:  # the reader went away (`stayer -p ... | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = EXIT_BROKEN_PIPE
    sys.exit(status)
