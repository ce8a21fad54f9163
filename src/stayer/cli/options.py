"""Flags → options, in one place: `options_from_args` is the only function that turns parsed
command-line flags into `QueryOptions`, for every front end started from the command line.

`FLAGS` declares, once per option, the `QueryOptions` field and the parser destination it
comes from (with how its value is read); `API_ONLY` names the fields no flag sets (objects a
program passes, and values only the environment or settings give), and `CLI_ONLY` the flags
that set no option (how to print, what to read the prompt from). `tests/unit/core/
test_option_path.py` fails when a field, a flag or a loop parameter is added in one place only,
so an option is declared here, given its field, and then only its behaviour remains to write.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stayer.errors import ConfigError
from stayer.session.options import QueryOptions

from .flags import flatten


def _read_text_file(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; give a text file") from None


def _same(args: argparse.Namespace, dest: str) -> Any:
    return getattr(args, dest)


def _flat(args: argparse.Namespace, dest: str) -> list[str]:
    return flatten(getattr(args, dest))


def _tools(args: argparse.Namespace, dest: str) -> list[str] | None:
    return flatten(args.tools) if args.tools else None


def _betas(args: argparse.Namespace, dest: str) -> list[str]:
    return [beta for item in flatten(args.betas) for beta in item.split(",") if beta]


def _text_or_file(args: argparse.Namespace, dest: str) -> str | None:
    """`--system-prompt` (text) or `--system-prompt-file`: the file's text wins when given."""
    return _read_text_file(getattr(args, f"{dest}_file")) or getattr(args, dest)


def _agents(args: argparse.Namespace, dest: str) -> str | None:
    """`--agents JSON`, or `--agents @FILE` (older SDKs write long definitions to a file)."""
    given: str | None = args.agents
    if given is not None and given.startswith("@"):
        return _read_text_file(Path(given[1:]))
    return given


def _mode(args: argparse.Namespace, dest: str) -> str | None:
    """`--dangerously-skip-permissions` wins; `auto` (Claude Code's classifier, which stayer has
    not got) runs as `default`, which asks rather than allows (`warn_ignored` says so)."""
    skip: bool = args.dangerously_skip_permissions
    if skip:
        return "bypassPermissions"
    return "default" if args.permission_mode == "auto" else args.permission_mode


Read = Callable[[argparse.Namespace, str], Any]

FLAGS: dict[str, tuple[str, Read]] = {
    "model": ("model", _same),
    "fallback_models": ("fallback_model", _same),
    "system_prompt": ("system_prompt", _text_or_file),
    "append_system_prompt": ("append_system_prompt", _text_or_file),
    "max_turns": ("max_turns", _same),
    "tools": ("tools", _tools),
    "allowed_tools": ("allowed_tools", _flat),
    "disallowed_tools": ("disallowed_tools", _flat),
    "add_dirs": ("add_dirs", _flat),
    "betas": ("betas", _betas),
    "permission_mode": ("permission_mode", _mode),
    "allow_dangerously_skip_permissions": ("allow_dangerously_skip_permissions", _same),
    "session_id": ("session_id", _same),
    "done_when": ("done_when", _same),
    "max_budget_usd": ("max_budget_usd", _same),
    "token_budget": ("token_budget", _same),
    "pins": ("pin", _same),
    "autocompact_window": ("autocompact", _same),
    "repeat_nudge_after": ("repeat_nudge_after", _same),
    "repeat_stop_after": ("repeat_stop_after", _same),
    "resume": ("resume", _same),
    "continue_session": ("continue_session", _same),
    "fork_session": ("fork_session", _same),
    "persist_session": ("persist_session", _same),
    "sandbox": ("sandbox", _same),
    "sandbox_network": ("sandbox_network", _same),
    "settings": ("settings", _same),
    "setting_sources": ("setting_sources", _same),
    "mcp_config": ("mcp_config", _flat),
    "strict_mcp_config": ("strict_mcp_config", _same),
    "agents": ("agents", _agents),
    "agent": ("agent", _same),
    "plugin_dirs": ("plugin_dirs", _flat),
    "thinking": ("thinking", _same),
    "max_thinking_tokens": ("max_thinking_tokens", _same),
    "thinking_display": ("thinking_display", _same),
    "effort": ("effort", _same),
    "json_schema": ("json_schema", _same),
}
"""Each option a flag sets: its `QueryOptions` field → (the parser's destination, how the
value is read from the parsed flags)."""

API_ONLY = frozenset(
    {
        "cwd",  # the directory stayer was started in
        "extra_tools",
        "can_use_tool",
        "provider",
        "env",  # the process's own environment
        "abort",
        "history",
        "retry",  # API_TIMEOUT_MS, CLAUDE_CODE_MAX_RETRIES and the like set it from the environment
        "max_tokens",  # CLAUDE_CODE_MAX_OUTPUT_TOKENS
        "max_concurrent_tools",  # CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY
        "autocompact_percent",  # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
        "editor",  # what an ACP client offers (its fs methods)
        "hooks",  # a program's own callables (the SDK's come through initialize)
        "sdk_mcp",  # the SDK's in-process MCP servers, reached through its control channel
        "sessions_dir",  # where a program keeps its sessions (`stayer batch`: each task's own)
    }
)
"""`QueryOptions` fields no flag sets."""

CLI_ONLY = frozenset(
    {
        "prompt",
        "print",
        "output_format",
        "input_format",
        "verbose",
        "include_partial_messages",
        "include_hook_events",
        "replay_user_messages",
        "permission_prompt_tool",  # the SDK's permission prompt: the SDK session asks it
        "version",
        "dangerously_skip_permissions",  # read with --permission-mode
        "system_prompt_file",  # read with --system-prompt
        "append_system_prompt_file",  # read with --append-system-prompt
    }
)
"""Parser destinations that set no option: how to print and where the prompt comes from."""


def options_from_args(args: argparse.Namespace, **given: Any) -> QueryOptions:
    """The options the flags in `args` set, with `given` fields added or put in their place
    (a program's objects, a value the front end settled otherwise); raises `ConfigError` for a
    file a flag names that cannot be read."""
    read = {field: how(args, dest) for field, (dest, how) in FLAGS.items() if field not in given}
    return QueryOptions(**read, **given)
