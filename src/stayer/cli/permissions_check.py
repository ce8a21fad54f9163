"""`stayer permissions check`: replay past sessions' tool calls against a set of rules.

    stayer permissions check [--settings FILE|JSON] [--setting-sources SOURCES]
                             [--allowedTools RULE…] [--disallowedTools RULE…]
                             [--permission-mode MODE] [--json] [TRANSCRIPT…]

The rules are those a run started here with the same flags would have: the settings files are
read by the run's own code (`session.settings.settle`, then `query.starting_policy`), so the
levels, `.claude/` and `.stayer/`, `readClaudeSettings`, `STAYER_NO_CLAUDE_SETTINGS`, `/path`
rules anchored to their file's folder, `defaultMode`, `disableBypassPermissionsMode` and a broken
file's refusal (`STAYER_IGNORE_BAD_SETTINGS`) all behave as they do in a run.

With no transcripts it replays the sessions of the current directory that stayer
(`~/.stayer/projects/<slug>/`) and Claude Code (`~/.claude/projects/<slug>/`) kept; a directory
given stands for the transcripts in it. It prints, per tool, how many calls would have been
allowed, asked and denied, then the calls themselves, the allow rules in force that widen
dangerously, and the fewest allow rules that would have removed the most questions
(`stayer.session.policy_proposals`). ``--json`` prints the same as one JSON object.

`--allowedTools` and `--disallowedTools` take several values, so a transcript written after
them would read as a rule; a value ending in ``.jsonl`` is taken as a transcript instead, since
no tool's name ends so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from msgspec import Struct

from stayer.cli.flags import add_rule_flags, add_settings_flags
from stayer.config.dirs import claude_config_dir
from stayer.errors import ConfigError
from stayer.permissions import PERMISSION_MODES, PermissionPolicy
from stayer.session.options import QueryOptions
from stayer.session.paths import config_root, project_slug
from stayer.session.policy_proposals import (
    Proposal,
    Widening,
    judged_cwd,
    propose,
    rule_text,
    widenings,
)
from stayer.session.policy_replay import (
    VERDICTS,
    Checks,
    Judged,
    Replay,
    Rules,
    recorded_calls,
    replay,
)
from stayer.session.resolve import starting_policy
from stayer.session.settings import settle
from stayer.tools.base import Tool

USAGE = (
    "stayer permissions check [--settings FILE|JSON] [--setting-sources SOURCES] "
    "[--allowedTools RULE...] [--disallowedTools RULE...] [--permission-mode MODE] [--json] "
    "[TRANSCRIPT...]"
)
SHOWN_CHARS = 100


# --- arguments --------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"permissions check: {message}; usage: {USAGE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stayer permissions check", usage=USAGE, add_help=True)
    parser.add_argument(
        "transcripts",
        nargs="*",
        type=Path,
        metavar="TRANSCRIPT",
        help="a session's .jsonl file, or a folder of them (default: this project's sessions)",
    )
    add_settings_flags(parser)
    add_rule_flags(parser)
    parser.add_argument(
        "--permission-mode",
        metavar="MODE",
        help=f"the mode to replay in: {', '.join(PERMISSION_MODES)} (default: the settings' "
        "permissions.defaultMode, else default)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


class Request(Struct, frozen=True):
    """What to check: the rules, the transcripts, and how to print."""

    rules: Rules
    transcripts: tuple[Path, ...]
    as_json: bool
    warnings: tuple[str, ...] = ()
    """What loading the settings had to say (a value dropped, a file left out)."""


def parse_request(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Request:
    """The check the arguments ask for; raises `ConfigError` with one line for a bad one, and
    for settings a run in `cwd` would refuse."""
    args = _parser().parse_args(list(argv))
    given: list[Path] = list(args.transcripts)
    rule_values: dict[str, list[str]] = {"allowed_tools": [], "disallowed_tools": []}
    for dest, values in rule_values.items():
        for value in (item for group in getattr(args, dest) for item in group):
            if value.endswith(".jsonl"):
                given.append(Path(value))
            else:
                values.append(value)
    options = QueryOptions(
        permission_mode=args.permission_mode,
        allowed_tools=rule_values["allowed_tools"],
        disallowed_tools=rule_values["disallowed_tools"],
        settings=args.settings,
        setting_sources=args.setting_sources,
    )
    settled = settle(options, cwd, env)  # as a run does: the same files, checks and refusals
    policy = starting_policy(settled.options, settled.ask, cwd)
    return Request(Rules(policy), _transcripts(given, env, cwd), args.json, settled.warnings)


def _transcripts(given: Sequence[Path], env: Mapping[str, str], cwd: Path) -> tuple[Path, ...]:
    """The transcripts to replay: those given (a directory for the ones in it), else this
    project's sessions kept by stayer and by Claude Code."""
    if not given:
        folders = [root / "projects" / project_slug(cwd) for root in _roots(env)]
        found = [path for folder in folders for path in sorted(folder.glob("*.jsonl"))]
        if not found:
            raise ConfigError(
                f"no saved sessions of {cwd} in {' or '.join(map(str, folders))}; "
                "name the transcripts to replay: stayer permissions check FILE.jsonl"
            )
        return tuple(found)
    paths: list[Path] = []
    for path in given:
        if path.is_dir():
            inside = sorted(path.glob("*.jsonl"))
            if not inside:
                raise ConfigError(f"{path} holds no .jsonl transcripts; name a session's file")
            paths += inside
        elif not path.is_file():
            raise ConfigError(f"no transcript at {path}; give the path of a session's .jsonl file")
        else:
            paths.append(path)
    return tuple(paths)


def _roots(env: Mapping[str, str]) -> tuple[Path, Path]:
    return config_root(env), claude_config_dir(env)


# --- the check --------------------------------------------------------------------------------


class Report(Struct, frozen=True):
    """Everything the check found."""

    transcripts: tuple[Path, ...]
    policy: PermissionPolicy
    replayed: Replay
    widenings: tuple[Widening, ...]
    proposals: tuple[Proposal, ...]


async def check(request: Request, cwd: Path) -> Report:
    """Replay the request's transcripts and judge its rules."""
    from stayer.tools.registry import builtin_tools

    tools: dict[str, Tool[Any]] = {tool.name: tool for tool in builtin_tools()}
    try:
        calls, warnings = recorded_calls(request.transcripts, cwd=cwd)
    except OSError as exc:
        raise ConfigError(f"cannot read transcript {exc.filename}: {exc.strerror}") from None
    for warning in warnings:  # a file that is not a transcript at all shows up here
        print(f"stayer: {warning}", file=sys.stderr)
    checks = Checks()
    replayed = await replay(calls, request.rules, tools, checks)
    policy = request.rules.policy
    proposals = await propose(policy, replayed.of("asked"), replayed.of("denied"), tools, checks)
    return Report(
        request.transcripts,
        policy,
        replayed,
        tuple(widenings(policy, tools, judged_cwd(replayed.judged, cwd))),
        tuple(proposals),
    )


def run(argv: Sequence[str], *, out: TextIO | None = None) -> int:
    """Run `stayer permissions check` with `argv` (what follows ``check``); returns 0."""
    cwd = Path.cwd().resolve()
    request = parse_request(argv, os.environ, cwd)
    for warning in request.warnings:
        print(f"stayer: {warning}", file=sys.stderr)
    report = asyncio.run(check(request, cwd))
    stream = out or sys.stdout
    if request.as_json:
        print(json.dumps(as_json(report), indent=2), file=stream)
    else:
        stream.write(as_text(report))
    return 0


# --- what is printed --------------------------------------------------------------------------


def shown(judged: Judged) -> str:
    """The call on one line: its subject as written (the command, the path), else its tool."""
    subject = judged.tool.permission_subject(judged.input)
    if subject is None:
        return ""
    line = " ⏎ ".join(subject.splitlines()) or subject
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


def _grouped(calls: Sequence[Judged]) -> list[dict[str, Any]]:
    """The calls, each distinct one once with how often it came."""
    groups: dict[tuple[str, str, str], int] = {}
    for judged in calls:
        key = (judged.call.tool, shown(judged), judged.reason)
        groups[key] = groups.get(key, 0) + 1
    return [
        {"tool": tool, "subject": subject, "count": count, "reason": reason}
        for (tool, subject, reason), count in groups.items()
    ]


def _per_tool(replayed: Replay) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for judged in replayed.judged:
        row = table.setdefault(judged.call.tool, dict.fromkeys(VERDICTS, 0))
        row[judged.verdict] += 1
    return dict(sorted(table.items()))


def as_json(report: Report) -> dict[str, Any]:
    """The report as one JSON object."""
    replayed = report.replayed
    return {
        "transcripts": [str(path) for path in report.transcripts],
        "permission_mode": report.policy.mode,
        "calls": len(replayed.judged),
        "tools": _per_tool(replayed),
        **{kind: _grouped(replayed.of(kind)) for kind in VERDICTS},
        "dangerous": [{"rule": rule_text(w.rule), "why": w.why} for w in report.widenings],
        "proposals": [{"rule": rule_text(p.rule), "removes": p.removes} for p in report.proposals],
        "not_replayed": {
            "unknown_tools": dict(replayed.unknown_tools),
            "unreadable": replayed.unreadable,
        },
    }


def as_text(report: Report) -> str:
    """The report for a person to read."""
    replayed = report.replayed
    count = len(report.transcripts)
    lines = [
        f"Replayed {len(replayed.judged)} tool calls from {count} transcript"
        f"{'s' if count != 1 else ''} in {report.policy.mode} mode.",
        "",
        *_table(_per_tool(replayed)),
    ]
    for kind in ("asked", "denied", "allowed"):
        lines += _listed(kind, replayed.of(kind))
    lines += ["", "Dangerous widenings:"]
    lines += [f"  {rule_text(w.rule)}: {w.why}" for w in report.widenings] or ["  none"]
    removed = sum(p.removes for p in report.proposals)
    asked = len(replayed.of("asked"))
    lines += ["", f"Proposed allow rules (they remove {removed} of {asked} questions):"]
    width = max((len(rule_text(p.rule)) for p in report.proposals), default=0)
    lines += [f"  {rule_text(p.rule):<{width}}  removes {p.removes}" for p in report.proposals] or [
        "  none"
    ]
    lines += _not_replayed(replayed)
    return "\n".join(lines) + "\n"


def _table(rows: dict[str, dict[str, int]]) -> list[str]:
    width = max((len(tool) for tool in rows), default=4)
    head = f"{'tool':<{width}}  " + "  ".join(f"{kind:>7}" for kind in VERDICTS)
    body = [
        f"{tool:<{width}}  " + "  ".join(f"{row[kind]:>7}" for kind in VERDICTS)
        for tool, row in rows.items()
    ]
    return [head, *body]


def _listed(kind: str, calls: Sequence[Judged]) -> list[str]:
    if not calls:
        return []
    lines = ["", f"{kind.capitalize()} ({len(calls)}):"]
    for group in _grouped(calls):
        times = f" (x{group['count']})" if group["count"] > 1 else ""
        why = f"  [{group['reason']}]" if kind == "denied" else ""
        lines.append(f"  {group['tool']}  {group['subject']}{times}{why}")
    return lines


def _not_replayed(replayed: Replay) -> list[str]:
    lines: list[str] = []
    if replayed.unknown_tools:
        names = ", ".join(f"{name} x{n}" for name, n in sorted(replayed.unknown_tools.items()))
        lines.append(f"Not replayed: calls of tools stayer does not have ({names}).")
    if replayed.unreadable:
        lines.append(f"Not replayed: {replayed.unreadable} calls whose input their tool refuses.")
    return ["", *lines] if lines else []
