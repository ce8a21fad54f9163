"""Every command line claude-agent-sdk builds is one stayer takes: the SDK's own `_build_command`
turns many `ClaudeAgentOptions` into argv, and each flag must land on the option it means, or
on its one line saying it has no effect; none may be unknown or taken for a prompt. A flag the
SDK starts to pass that no case here covers fails the coverage test."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from stayer.cli.flags import parse_args, refuse_continuation, warn_ignored
from stayer.cli.options import options_from_args
from stayer.errors import ConfigError

SESSION = "3f1e9b6c-8c61-4d6a-9d0b-5c2a3e7f1a20"
PRESET: Any = {"type": "preset", "preset": "claude_code"}
TIME: Any = {"command": "uvx", "args": ["mcp-server-time"]}
NO_EFFECT = "stayer: {} has no effect: stayer does not support it yet"


def sdk_argv(**given: Any) -> list[str]:
    """The arguments the SDK starts its CLI with for these options (the program left out)."""
    options = ClaudeAgentOptions(cli_path="stayer", **given)
    return SubprocessCLITransport(prompt="", options=options)._build_command()[1:]


# (case, ClaudeAgentOptions, the QueryOptions fields they must set, the lines on stderr)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    ("defaults", {}, {"system_prompt": "", "append_system_prompt": None}, []),
    ("prompt text", {"system_prompt": "Be terse."}, {"system_prompt": "Be terse."}, []),
    (
        "custom prompt",
        {"system_prompt": {"type": "custom", "prompt": "Only Go."}},
        {"system_prompt": "Only Go."},
        [],
    ),
    (
        "preset",  # nothing on the command line: stayer's own prompt
        {"system_prompt": {"type": "preset", "preset": "claude_code"}},
        {"system_prompt": None, "append_system_prompt": None},
        [],
    ),
    (
        "preset and append",
        {"system_prompt": {"type": "preset", "preset": "claude_code", "append": "Be kind."}},
        {"system_prompt": None, "append_system_prompt": "Be kind."},
        [],
    ),
    ("tools", {"tools": ["Read", "Grep"]}, {"tools": ["Read,Grep"]}, []),
    ("no tools", {"tools": []}, {"tools": [""]}, []),
    ("tools preset", {"tools": PRESET}, {"tools": ["default"]}, []),
    (
        "allowed and disallowed",
        {"allowed_tools": ["Read", "Bash(git status)"], "disallowed_tools": ["Write", "Edit"]},
        {"allowed_tools": ["Read,Bash(git status)"], "disallowed_tools": ["Write,Edit"]},
        [],
    ),
    (
        "skills",
        {"skills": ["pdf"]},
        {"allowed_tools": ["Skill(pdf)"], "setting_sources": "user,project"},
        [],
    ),
    (
        "limits and models",
        {"max_turns": 3, "max_budget_usd": 1.5, "model": "sonnet", "fallback_model": "haiku"},
        {"max_turns": 3, "max_budget_usd": 1.5, "model": "sonnet", "fallback_models": ["haiku"]},
        [],
    ),
    ("betas", {"betas": ["context-1m-2025-08-07"]}, {"betas": ["context-1m-2025-08-07"]}, []),
    *[
        (f"mode {mode}", {"permission_mode": mode}, {"permission_mode": mode}, [])
        for mode in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
    ],
    (
        "mode auto",  # no classifier here: judged as in default mode, which asks
        {"permission_mode": "auto"},
        {"permission_mode": "default"},
        [
            "stayer: --permission-mode auto has no effect: stayer has no auto mode, so calls "
            "are judged as in default mode"
        ],
    ),
    ("continue", {"continue_conversation": True}, {"continue_session": True}, []),
    (
        "resume and fork",
        {"resume": SESSION, "fork_session": True, "session_id": SESSION.replace("3f", "4f")},
        {"resume": SESSION, "fork_session": True, "session_id": SESSION.replace("3f", "4f")},
        [],
    ),
    ("resume dash", {"resume": "-rf"}, {"resume": "-rf"}, []),  # a value, never a flag
    (
        "settings and sources",
        {"settings": '{"model": "opus"}', "setting_sources": ["project", "local"]},
        {"settings": '{"model": "opus"}', "setting_sources": "project,local"},
        [],
    ),
    ("no sources", {"setting_sources": []}, {"setting_sources": ""}, []),
    ("add dirs", {"add_dirs": ["/a", Path("/b")]}, {"add_dirs": ["/a", "/b"]}, []),
    (
        "mcp servers",
        {"mcp_servers": {"time": TIME}, "strict_mcp_config": True},
        {
            "mcp_config": [json.dumps({"mcpServers": {"time": TIME}})],
            "strict_mcp_config": True,
        },
        [],
    ),
    ("mcp file", {"mcp_servers": "/etc/mcp.json"}, {"mcp_config": ["/etc/mcp.json"]}, []),
    ("plugins", {"plugins": [{"type": "local", "path": "/p"}]}, {"plugin_dirs": ["/p"]}, []),
    ("adaptive", {"thinking": {"type": "adaptive"}}, {"thinking": "adaptive"}, []),
    (
        "budget shown",
        {"thinking": {"type": "enabled", "budget_tokens": 8000, "display": "summarized"}},
        {"thinking": None, "max_thinking_tokens": 8000, "thinking_display": "summarized"},
        [],
    ),
    ("thinking off", {"thinking": {"type": "disabled"}}, {"thinking": "disabled"}, []),
    ("old budget", {"max_thinking_tokens": 2048}, {"max_thinking_tokens": 2048}, []),
    ("effort", {"effort": "xhigh"}, {"effort": "xhigh"}, []),
    (
        "json schema",
        {"output_format": {"type": "json_schema", "schema": {"type": "object"}}},
        {"json_schema": '{"type": "object"}'},
        [],
    ),
    ("task budget", {"task_budget": {"total": 9000}}, {}, [NO_EFFECT.format("--task-budget")]),
    ("session store", {"session_store": object()}, {}, [NO_EFFECT.format("--session-mirror")]),
    (
        "extra args",
        {"extra_args": {"future-switch": None, "future-value": "v", "future-dash": "-x",
                        "future-more": "w"}},
        {},
        [
            f"stayer: --future-{name} has no effect: stayer does not know this option"
            for name in ("switch", "value", "dash", "more")
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "fields", "lines"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_sdks_command_line_sets_the_options_it_means(
    given: dict[str, Any], fields: dict[str, Any], lines: list[str]
) -> None:
    args, unknown = parse_args(sdk_argv(**given))
    options = options_from_args(args)

    assert (args.output_format, args.input_format, args.verbose) == (
        "stream-json",
        "stream-json",
        True,
    )
    assert args.prompt is None  # prompts come on stdin: no flag's value is taken for one
    assert {name: getattr(options, name) for name in fields} == fields
    assert warn_ignored(args, unknown) == lines
    refuse_continuation(args)  # none of these asks for what stayer refuses


def test_a_system_prompt_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text("From a file.")
    args, _ = parse_args(sdk_argv(system_prompt={"type": "file", "path": str(path)}))
    assert options_from_args(args).system_prompt == "From a file."


@pytest.mark.parametrize(
    "switch",
    [
        {"include_partial_messages": True},
        {"include_hook_events": True},
    ],
)
def test_output_switches_reach_the_printer(switch: dict[str, bool]) -> None:
    args, unknown = parse_args(sdk_argv(**switch))
    (name,) = switch
    assert getattr(args, name) is True and unknown == [] and warn_ignored(args, unknown) == []


@pytest.mark.parametrize("given", [{"resume_session_at": "msg_1"}, {"resume_drops_turn": "msg_1"}])
def test_going_on_from_inside_a_session_is_refused_not_run_from_its_end(
    given: dict[str, str],
) -> None:
    args, _ = parse_args(sdk_argv(resume=SESSION, **given))
    with pytest.raises(ConfigError, match="cannot resume a session from the middle"):
        refuse_continuation(args)


def test_the_permission_prompt_tool_is_a_known_flag() -> None:
    # what it does is the control protocol's (`can_use_tool`); here: known, never a prompt
    args, unknown = parse_args(sdk_argv(permission_prompt_tool_name="stdio"))
    assert unknown == [] and args.prompt is None


def test_every_flag_the_sdk_can_pass_is_covered_here() -> None:
    source = inspect.getsource(SubprocessCLITransport._build_command)
    emitted = set(re.findall(r"\"(--[a-zA-Z][a-zA-Z-]*)", source))
    covered: set[str] = set()
    extra: list[dict[str, Any]] = [
        {"system_prompt": {"type": "file", "path": "/p"}},
        {"include_partial_messages": True, "include_hook_events": True},
        {"resume_session_at": "m", "resume_drops_turn": "m"},
        {"permission_prompt_tool_name": "stdio"},
    ]
    for given in [case[1] for case in CASES] + extra:
        covered |= {item.partition("=")[0] for item in sdk_argv(**given) if item.startswith("--")}
    assert emitted - covered == set()
