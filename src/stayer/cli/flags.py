"""Claude Code's command-line flags: the ones stayer acts on, and the ones it only tolerates.

Scripts and claude-agent-sdk pass Claude Code's flags, so every flag Claude Code has is known
here with its arity, even the ones stayer does not act on yet: their values are never taken for
the prompt, and each use is reported on standard error. Abbreviations are off (argparse would
otherwise read `--dang` as `--dangerously-skip-permissions`). Flags whose silent omission would
lose the user's work (`--resume-session-at`: going on from the middle of a session) are refused
instead of ignored.
"""

from __future__ import annotations

import argparse
import itertools
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from stayer.errors import ConfigError

# Claude Code flags stayer does not act on yet, by arity.
IGNORED_WITH_VALUE = (
    "--permission-prompts", "--task-budget",
    "--debug-file", "--append-subagent-system-prompt", "--advisor", "--name", "--remote",
    # what Claude Code passes the teammates of an agent team
    "--agent-id", "--agent-name", "--team-name", "--agent-color", "--parent-session-id",
    "--teammate-mode",
)  # fmt: skip
IGNORED_MANY_VALUES = ("--file",)
IGNORED_OPTIONAL_VALUE = ("--debug", "--from-pr", "--teleport", "--worktree")
IGNORED_SWITCHES = (
    "--bare", "--session-mirror", "--mcp-debug", "--ide",
    "--chrome", "--no-chrome", "--tmux", "--disable-slash-commands",
    "--exclude-dynamic-system-prompt-sections",
)  # fmt: skip
IGNORED_SHORT = {"-n": "--name", "-w": "--worktree", "-d": "--debug"}

# Claude Code flags that continue an earlier conversation from a point inside it. Running from
# its end instead would silently lose what a script asked for, so they are refused.
REFUSED = ("--resume-session-at", "--resume-drops-turn")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{message} (see stayer --help)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with Claude Code's flag names (and their kebab-case spellings)."""
    parser = _Parser(
        prog="stayer",
        description="An agent harness that keeps going until the work is done.",
        epilog=(
            "Subcommands: `stayer demo` runs a live session on a throwaway repository; "
            "`stayer permissions check` replays past sessions' tool calls against rules; "
            "`stayer batch TASKS.jsonl --out DIR` runs many tasks at once."
        ),
        allow_abbrev=False,
    )
    parser.add_argument("prompt", nargs="?", help="what to do (read from stdin if omitted)")
    parser.add_argument("-p", "--print", action="store_true", help="run once and print")
    _output_flags(parser)
    _model_flags(parser)
    add_permission_flags(parser)
    parser.add_argument(
        "--token-budget",
        type=_tokens,
        metavar="TOKENS",
        help="output tokens the run should produce at least (500k, 2m); +500k in the prompt too",
    )
    parser.add_argument(
        "--done-when",
        metavar="COMMAND",
        help="a shell command that must succeed before the run may end (e.g. 'pytest -q')",
    )
    _recovery_flags(parser)
    add_settings_flags(parser)
    _mcp_flags(parser)
    parser.add_argument(
        "--session-id", type=_session_id, help="use this session id (a UUID) instead of a new one"
    )
    _session_flags(parser)
    parser.add_argument("-v", "--version", action="store_true", help="print the version")
    _tolerated_flags(parser)
    return parser


def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    """`--settings` and `--setting-sources` (`stayer permissions check` takes them too)."""
    parser.add_argument(
        "--settings", metavar="FILE|JSON",
        help="more settings over the settings files: a file, or a JSON object "
        "('{\"model\": \"sonnet\"}')",
    )  # fmt: skip
    parser.add_argument(
        "--setting-sources", metavar="SOURCES",
        help="which settings files to read: user, project and/or local, comma-separated "
        "(default all; .claude/ files too unless STAYER_NO_CLAUDE_SETTINGS=1)",
    )  # fmt: skip


def _mcp_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mcp-config", dest="mcp_config", action="append", nargs="+", metavar="FILE|JSON",
        help="MCP servers to start: files or JSON objects with mcpServers (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--strict-mcp-config", dest="strict_mcp_config", action="store_true",
        help="start only the MCP servers of --mcp-config, none from settings or .mcp.json",
    )  # fmt: skip
    parser.add_argument(
        "--agents", dest="agents", metavar="JSON",
        help='custom agents as JSON: {"name": {"description": ..., "prompt": ..., "tools": [...]}}',
    )  # fmt: skip
    parser.add_argument(
        "--agent", dest="agent", metavar="NAME",
        help="run the session as this agent (its prompt, tools, model and permission mode)",
    )  # fmt: skip
    parser.add_argument(
        "--plugin-dir", dest="plugin_dirs", action="append", nargs="+", metavar="DIR",
        help="load the plugin in this folder for this session (repeatable)",
    )  # fmt: skip


def _session_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--continue", dest="continue_session", action="store_true",
        help="go on with the latest session saved for this folder",
    )  # fmt: skip
    parser.add_argument(
        "-r", "--resume", nargs="?", const="", metavar="ID|PATH",
        help="go on with a saved session (its id, or a transcript's path: Claude Code's too); "
        "with no value, list the recent ones",
    )  # fmt: skip
    parser.add_argument(
        "--fork-session", action="store_true",
        help="with --resume or --continue: go on under a new session id",
    )  # fmt: skip
    parser.add_argument(
        "--no-session-persistence", dest="persist_session", action="store_false",
        help="do not write this session's transcript",
    )  # fmt: skip


def _recovery_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="TEXT",
        help="a note every compaction keeps word for word (repeatable)",
    )
    parser.add_argument(
        "--autocompact",
        type=_autocompact,
        metavar="auto|TOKENS",
        help="compact as if the context window were this many tokens, at least 100k (auto: "
        "the model's window)",
    )
    for flag, default, what in (
        ("--repeat-nudge-after", 3, "tell the model to change course after"),
        ("--repeat-stop-after", 5, "end the run after"),
    ):
        parser.add_argument(
            flag,
            type=_rounds,
            default=default,
            metavar="N",
            help=f"{what} N rounds in a row of the same calls failing the same way",
        )


def _output_flags(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--replay-user-messages",
        action="store_true",
        help="stream-json input: echo each user message as its run takes it",
    )
    parser.add_argument(
        "--include-hook-events",
        action="store_true",
        help="stream-json: add a hook_started and a hook_response line per hook run",
    )


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-turns", type=int, help="stop after this many tool rounds")
    parser.add_argument(
        "--max-budget-usd",
        type=_dollars,
        metavar="USD",
        help="stop once the run has cost this much at list prices (error_max_budget_usd)",
    )
    parser.add_argument(
        "--model",
        help="model id (claude-…, gpt-…) or alias (sonnet, opus, haiku, fable, best, opusplan; "
        "[1m] for the 1M window) or provider:model; default: ANTHROPIC_MODEL, settings, opus",
    )
    parser.add_argument(
        "--fallback-model",
        action="append",
        default=[],
        metavar="MODEL[,MODEL…]",
        help="models to go on with, in order, when the model is overloaded 3 times in a row",
    )
    parser.add_argument(
        "--betas",
        action="append",
        nargs="+",
        default=[],
        metavar="BETA",
        help="Anthropic beta headers to send with every request",
    )
    _thinking_flags(parser)
    parser.add_argument("--system-prompt", help="replace the base system prompt")
    parser.add_argument("--system-prompt-file", type=Path, help="the same, from a file")
    parser.add_argument("--append-system-prompt", help="add to the end of the system prompt")
    parser.add_argument("--append-system-prompt-file", type=Path, help="the same, from a file")


def _thinking_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--thinking", choices=["adaptive", "enabled", "disabled"],
        help="extended thinking: the model decides how much, on, or off",
    )  # fmt: skip
    parser.add_argument(
        "--max-thinking-tokens", type=_thinking_tokens, metavar="TOKENS",
        help="let the model think up to this many tokens before answering (0: no thinking)",
    )  # fmt: skip
    parser.add_argument(
        "--thinking-display", choices=["summarized", "omitted"],
        help="with thinking: have it come back summarized, or left out",
    )  # fmt: skip
    parser.add_argument(
        "--json-schema", metavar="SCHEMA",
        help="the final answer must be JSON matching this JSON Schema (the result's "
        "structured_output)",
    )  # fmt: skip
    parser.add_argument(
        "--effort", choices=["low", "medium", "high", "xhigh", "max"],
        help="how hard the model works at its answers (OpenAI models: up to high)",
    )  # fmt: skip


def add_rule_flags(parser: argparse.ArgumentParser) -> None:
    """`--allowedTools` / `--disallowedTools` (and their kebab-case spellings), each taking
    every word after it, into `allowed_tools` / `disallowed_tools` (lists of lists)."""
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


def add_permission_flags(parser: argparse.ArgumentParser) -> None:
    add_rule_flags(parser)
    parser.add_argument(
        "--tools", action="append", nargs="+", metavar="TOOL", help="offer only these tools"
    )
    parser.add_argument(
        "--add-dir",
        dest="add_dirs",
        action="append",
        nargs="+",
        default=[],
        metavar="DIR",
        help="another working directory the model may edit in (acceptEdits)",
    )
    parser.add_argument(
        "--permission-mode",
        help="default, acceptEdits, plan, bypassPermissions or dontAsk (default: the settings' "
        "permissions.defaultMode, else default)",
    )
    parser.add_argument(
        "--dangerously-skip-permissions", action="store_true", help="allow every tool call"
    )
    parser.add_argument(
        "--allow-dangerously-skip-permissions",
        action="store_true",
        help="let the session switch into bypassPermissions later without starting in it",
    )
    parser.add_argument(
        "--permission-prompt-tool",
        metavar="stdio|mcp__SERVER__TOOL",
        help="who answers what the permission rules would ask a person: claude-agent-sdk's "
        "can_use_tool callback (stdio, with --input-format stream-json), or an MCP tool",
    )
    # stayer's own: Claude Code turns its sandbox on in settings (`sandbox.enabled`)
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run Bash commands under bubblewrap: only the working directories (and a private "
        "/tmp) writable, no network",
    )
    parser.add_argument(
        "--sandbox-network", action="store_true", help="with --sandbox: allow network access"
    )


def _tolerated_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("accepted for compatibility, not acted on yet")
    hidden = argparse.SUPPRESS
    for flag in IGNORED_WITH_VALUE:
        shorts = [s for s, long in IGNORED_SHORT.items() if long == flag]
        group.add_argument(*shorts, flag, dest=dest(flag), action="append", help=hidden)
    for flag in IGNORED_MANY_VALUES:
        group.add_argument(flag, dest=dest(flag), action="append", nargs="+", help=hidden)
    for flag in IGNORED_OPTIONAL_VALUE:
        shorts = [s for s, long in IGNORED_SHORT.items() if long == flag]
        group.add_argument(
            *shorts, flag, dest=dest(flag), action="append", nargs="?", const="", help=hidden
        )
    for flag in IGNORED_SWITCHES:
        group.add_argument(flag, dest=dest(flag), action="store_true", help=hidden)
    for flag in REFUSED:
        group.add_argument(flag, dest=dest(flag), action="append", help=hidden)


def dest(flag: str) -> str:
    """Where argparse keeps a tolerated or refused flag."""
    return "compat_" + flag.lstrip("-").replace("-", "_")


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def _session_id(value: str) -> str:
    """A session id in the standard 8-4-4-4-12 form (Python's `UUID` also takes braces,
    `urn:uuid:` and bare hex), in lower case: the form its file is named in and looked up by."""
    if not _UUID.match(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a UUID; give one such as {uuid.uuid4()}, or leave the flag out"
        )
    return value.lower()


def _tokens(value: str) -> int:
    from stayer.loop.budget import parse_amount

    amount = parse_amount(value)
    if amount is None:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of tokens (say 500k or 2m)")
    return amount


def _autocompact(value: str) -> int | Literal["auto"]:
    if value == "auto":
        return "auto"
    amount = _tokens(value)
    if amount < 100_000:
        raise argparse.ArgumentTypeError(f"{value!r} is too small a window (at least 100k)")
    return amount


def _thinking_tokens(value: str) -> int:
    return 0 if value.strip() == "0" else _tokens(value)


def _rounds(value: str) -> int:
    return at_least_one(value, "a number of rounds (1 or more)")


def at_least_one(value: str, what: str) -> int:
    """`value` as a whole number of at least 1; else an argparse error: `value` is not `what`."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not {what}")
    return number


def _dollars(value: str) -> float:
    try:
        amount = float(value)
    except ValueError:
        amount = -1.0
    if not amount > 0 or amount == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive amount of US dollars")
    return amount


def refuse_continuation(args: argparse.Namespace) -> None:
    """Raise `ConfigError` for a flag that asks to continue an earlier session."""
    for flag in REFUSED:
        if getattr(args, dest(flag)):
            raise ConfigError(
                f"{flag} is not supported yet: stayer cannot resume a session from the middle; "
                "use --resume ID to go on from its end, or --fork-session to branch it"
            )


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The flags of `argv`, and the options stayer does not know. With `--input-format
    stream-json` the prompts come on standard input, so a word after an unknown option is that
    option's value (claude-agent-sdk passes `extra_args` as `--flag value`), not a prompt."""
    args, unknown = build_parser().parse_known_args(list(argv))
    if args.input_format != "stream-json":
        return args, unknown
    if args.prompt is not None:
        for before, item in itertools.pairwise(argv):
            if item == args.prompt and before in unknown and "=" not in before:
                args.prompt = None
                break
    values = {
        index
        for index, (before, item) in enumerate(itertools.pairwise(unknown), start=1)
        if _takes_value(before) and not item.startswith("-")
    }
    return args, [item for index, item in enumerate(unknown) if index not in values]


def _takes_value(item: str) -> bool:
    return item.startswith("-") and "=" not in item


def refuse_prompt_tool(args: argparse.Namespace) -> None:
    """Refuse a `--permission-prompt-tool` nobody could be asked through, in one line: `stdio`
    needs stream-json input (the SDK's channel); any value needs a run without a person
    (`-p` or stream-json input), since a person at the REPL answers there."""
    tool = getattr(args, "permission_prompt_tool", None)
    if tool is None:
        return
    if tool != "stdio" and not tool.startswith("mcp__"):
        raise ConfigError(
            f"--permission-prompt-tool {tool}: give stdio (claude-agent-sdk) or an MCP tool of a "
            "server in --mcp-config (mcp__<server>__<tool>)"
        )
    if tool == "stdio" and args.input_format != "stream-json":
        raise ConfigError(
            "--permission-prompt-tool stdio asks over claude-agent-sdk's control protocol, which "
            "needs --input-format stream-json --output-format stream-json"
        )


def warn_ignored(args: argparse.Namespace, unknown: Sequence[str]) -> list[str]:
    """One line for each flag given that has no effect: a Claude Code flag stayer does not act
    on, an unknown option, a value stayer cannot honour, or a flag the others make moot."""
    lines = []
    tolerated = (
        *IGNORED_WITH_VALUE, *IGNORED_MANY_VALUES, *IGNORED_OPTIONAL_VALUE, *IGNORED_SWITCHES
    )  # fmt: skip
    for flag in tolerated:
        if getattr(args, dest(flag)):
            lines.append(f"stayer: {flag} has no effect: stayer does not support it yet")
    lines += [
        f"stayer: {flag.partition('=')[0]} has no effect: stayer does not know this option"
        for flag in unknown
    ]
    return [*lines, *_moot(args)]


def _moot(args: argparse.Namespace) -> list[str]:
    """Lines for values stayer cannot honour and for flags that others given make moot."""
    lines = []
    if args.permission_mode == "auto" and not args.dangerously_skip_permissions:
        lines.append(
            "stayer: --permission-mode auto has no effect: stayer has no auto mode, so calls "
            "are judged as in default mode"
        )
    thinking = args.thinking not in (None, "disabled") or bool(args.max_thinking_tokens)
    if args.thinking_display is not None and not thinking:
        lines.append(
            "stayer: --thinking-display has no effect without --thinking adaptive|enabled or "
            "--max-thinking-tokens"
        )
    if args.max_thinking_tokens is not None and args.thinking in ("adaptive", "disabled"):
        lines.append(f"stayer: --max-thinking-tokens has no effect with --thinking {args.thinking}")
    return lines


def flatten(groups: Sequence[Sequence[str]] | None) -> list[str]:
    """The values of a repeatable many-valued flag, in order."""
    return [item for group in groups or () for item in group]


def output_format_in(argv: Sequence[str]) -> str:
    """The `--output-format` asked for, read straight off `argv` (for reporting errors that
    happen before, or while, the arguments are parsed)."""
    return _last_value(argv, "--output-format") or "text"


def session_id_in(argv: Sequence[str]) -> str | None:
    """A valid `--session-id` in `argv`, if one is there (for the same reports)."""
    value = _last_value(argv, "--session-id")
    return value.lower() if value is not None and _UUID.match(value) else None


def _last_value(argv: Sequence[str], flag: str) -> str | None:
    """The value `flag` was last given (`--flag value` or `--flag=value`), as argparse reads it."""
    found = None
    for index, item in enumerate(argv):
        if item == flag and index + 1 < len(argv):
            found = argv[index + 1]
        elif item.startswith(flag + "="):
            found = item.partition("=")[2]
    return found
