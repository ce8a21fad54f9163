"""The `stayer` command: Claude Code's flags → options → one run → a printer.

    stayer [PROMPT] [flags]  the interactive terminal (a prompt given is sent first)
    stayer -p "PROMPT" [--output-format text|json|stream-json] [flags]
    echo "PROMPT" | stayer -p
    stayer demo            a live session on a small task in a throwaway repository
    stayer permissions check [TRANSCRIPT...]   past sessions' tool calls replayed against rules
    stayer acp             an Agent Client Protocol agent on stdio, for editors
    stayer batch TASKS.jsonl --out DIR   many tasks at once, each a session in its own clone
    stayer batch TASKS.jsonl --out DIR   many agent tasks at once, each in a workspace of its own

A subcommand is the first word only (see `subcommands`): `stayer -p demo` is a prompt.

Unknown flags are reported on standard error and ignored, so newer callers (claude-agent-sdk
passes flags stayer may not know yet) keep working. Errors in what the user gave are one line
on standard error and exit status 2; a run that ends in error exits 1.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stayer._version import CLAUDE_CODE_COMPAT_VERSION, __version__
from stayer.errors import ConfigError, StayerError

from .flags import (
    output_format_in,
    parse_args,
    refuse_continuation,
    refuse_prompt_tool,
    session_id_in,
    warn_ignored,
)
from .subcommands import subcommand

if TYPE_CHECKING:
    from stayer.ui.sdk.permission_prompt import PermissionPrompt

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141
STDIN_WAIT_S = 3.0
"""With a prompt argument, how long to wait for piped input before going on without it."""


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
    from msgspec.structs import replace

    from stayer.driver import Driver
    from stayer.ui.headless import HeadlessOutput, Printer, run_headless

    from .options import options_from_args
    from .unused_flags import say_unused

    options = options_from_args(args)  # its files are read before a session is picked
    options = replace(options, resume=_resume_choice(args.resume))
    printer = Printer(
        output_format=args.output_format,
        verbose=args.verbose,
        include_partial=args.include_partial_messages,
        include_hooks=args.include_hook_events,
        api_key_source=_api_key_source(os.environ),
    )
    prompt = _prompt(args)
    say_unused(options)
    if args.replay_user_messages:
        print("stayer: --replay-user-messages does nothing without --input-format stream-json",
              file=sys.stderr)  # fmt: skip
    output = HeadlessOutput(printer)
    asker = _prompt_tool(args.permission_prompt_tool)
    if asker is not None:
        options = replace(options, can_use_tool=asker)
    driver = await Driver.open(options, output)
    if asker is not None:
        asker.bind(driver)
    session = driver.session
    for warning in session.warnings:
        print(f"stayer: {warning}", file=sys.stderr)
    shown = len(session.warnings)
    status = await run_headless(driver, prompt, output)
    for line in driver.errors:  # a prompt that could not be sent (a command's refused `!`)
        print(f"stayer: {line}", file=sys.stderr)
    for warning in session.warnings[shown:]:  # what went wrong on the way (an unsaved session)
        print(f"stayer: {warning}", file=sys.stderr)
    return status


async def _sdk(args: argparse.Namespace) -> int:
    """`--input-format stream-json`: the session claude-agent-sdk drives (`stayer.ui.sdk`)."""
    from msgspec.structs import replace

    from stayer.ui.sdk.serve import SdkSettings, serve

    from .options import options_from_args
    from .unused_flags import say_unused

    if args.output_format != "stream-json":
        raise ConfigError("--input-format stream-json needs --output-format stream-json")
    if args.resume == "":
        raise ConfigError("--resume needs a session id with --input-format stream-json")
    if args.prompt:
        raise ConfigError(
            "a prompt argument is not read with --input-format stream-json; send it on standard "
            'input as a user message ({"type": "user", "message": {...}})'
        )
    options = replace(options_from_args(args), resume=args.resume)
    say_unused(options)
    settings = SdkSettings(
        include_partial=args.include_partial_messages,
        include_hooks=args.include_hook_events,
        replay_user_messages=args.replay_user_messages,
        api_key_source=_api_key_source(os.environ),
        permission_prompt=args.permission_prompt_tool,
    )
    return await serve(options, settings)


def _prompt_tool(name: str | None) -> PermissionPrompt | None:
    """The decider `--permission-prompt-tool` names for a `-p` run, if any: an MCP tool
    (`stdio` is refused before: it needs stream-json input)."""
    if name is None:
        return None
    from stayer.ui.sdk.prompt_tool import prompt_for

    return prompt_for(name)


def _resume_choice(given: str | None) -> str | None:
    """The session `--resume` names; with no value, one chosen from the recent ones."""
    if given != "":
        return given
    from stayer.session.paths import config_root, project_slug
    from stayer.session.transcript import summaries

    cwd = Path.cwd().resolve()
    found = summaries(config_root(os.environ) / "projects" / project_slug(cwd), cwd=cwd)
    if not found:
        raise ConfigError("no saved session to resume in this folder; start one first")
    for number, summary in enumerate(found, start=1):
        when = datetime.datetime.fromtimestamp(summary.modified).strftime("%Y-%m-%d %H:%M")
        first = summary.first_prompt.replace("\n", " ")
        first = first if len(first) <= 60 else first[:59] + "…"
        print(
            f"{number:>3}. {summary.session_id}  {when}  {summary.turns:>3} turns  {first}",
            file=sys.stderr,
        )
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()):
        raise ConfigError("--resume needs a session id here (no terminal to choose on); see above")
    # asked on standard error, as the list is: standard output is for the run's output only
    print("Resume which session? (number) ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip()
    if not answer.isdigit() or not 1 <= int(answer) <= len(found):
        raise ConfigError(f"{answer!r} is not one of the numbers listed; nothing resumed")
    return found[int(answer) - 1].session_id


def run(argv: Sequence[str]) -> int:
    """Run the command line `argv` (without the program name); returns the exit status."""
    status = subcommand(argv)
    if status is not None:
        return status
    args, unknown = parse_args(argv)
    strays = [item for item in unknown if not item.startswith("-")]
    if strays:
        raise ConfigError(
            f"unexpected argument {strays[0]!r}: give the prompt as one quoted argument; "
            "if it is the value of an option stayer does not know, write --option=value"
        )
    for line in warn_ignored(args, unknown):
        print(line, file=sys.stderr)
    if args.version:
        print(f"{CLAUDE_CODE_COMPAT_VERSION} (stayer {__version__})")
        return 0
    refuse_continuation(args)
    refuse_prompt_tool(args)
    import asyncio  # imported late: `--version` and `--help` need not pay for it

    if args.input_format == "stream-json":
        return asyncio.run(_sdk(args))
    if _interactive(args):
        return asyncio.run(_repl(args))
    return asyncio.run(_headless(args))


def _interactive(args: argparse.Namespace) -> bool:
    """The REPL is for a person at a terminal: no `-p`, and both ends of it a terminal (piped
    in or out, stayer runs as `-p` does)."""
    if args.print or args.input_format == "stream-json":
        return False
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout))


async def _repl(args: argparse.Namespace) -> int:
    if args.permission_prompt_tool is not None:
        raise ConfigError(
            "--permission-prompt-tool is for runs without a person (-p, or stream-json input); "
            "in the terminal you answer the questions yourself"
        )
    from msgspec.structs import replace

    from stayer.ui.repl.app import run_repl

    from .options import options_from_args

    options = options_from_args(args)
    options = replace(options, resume=_resume_choice(args.resume))
    return await run_repl(options, (args.prompt or "").strip() or None)


def _report(error: StayerError, argv: Sequence[str]) -> None:
    """One line on standard error; for json and stream-json also one error `result` object on
    standard output, so a program reading it is not left with nothing."""
    print(f"stayer: {error}", file=sys.stderr)
    if output_format_in(argv) in ("json", "stream-json"):
        from stayer.ui.error_result import error_result_line

        line = error_result_line(str(error), session_id=session_id_in(argv))
        try:
            print(line, flush=True)
        except BrokenPipeError:  # nobody reads it; standard error has the line
            _quiet_stdout()


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so Python's flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        status = run(args)
    except ConfigError as exc:
        _report(exc, args)
        status = EXIT_USAGE
    except StayerError as exc:
        _report(exc, args)
        status = 1
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:  # the reader went away before the run began (`stayer -v | true`)
        _quiet_stdout()
        status = EXIT_BROKEN_PIPE
    sys.exit(status)
