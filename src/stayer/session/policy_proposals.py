"""Judging allow rules: which widen too far, and which few would have removed most questions.

A *dangerous widening* is an allow rule that lets through what no one should allow by a pattern:
deleting files (``rm``), running as another user (``sudo``), running a command or code it is
handed (any program the command table knows to do so: a shell, ``eval``, an interpreter such as
``python3``, a wrapper such as ``env``, ``setsid`` or ``xargs``, ``script``, ``find``, ``git``,
``make``, ``npm``; see `stayer.exec.hidden_runs.runs_programs`), a pipe into a shell, every command
(``Bash``, ``Bash(* --help)``), writing outside the project or anywhere, or opening a protected
path. A rule for such a program's subcommand (``Bash(git status:*)``) is judged by its
subcommand.

*Proposals* come from a greedy set cover over the calls that were asked: each asked call offers
candidate rules (``Bash(<program> <subcommand>:*)`` and ``Bash(<program>:*)`` for each command of
its line, ``Tool(<dir>/**)`` for each directory between a file and the project, ``Tool(<file>)``
in the project itself, ``WebFetch(domain:<host>)``, the tool's name for a tool without a subject).
Each round takes the candidate that would allow the most remaining asked calls (the narrower on a
tie), and refuses any that is a dangerous widening or would, were no deny rule there, allow a
call that a deny rule or a protected path refused: a rule the person's own deny rules argue
against. It stops when no candidate allows another call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from stayer.exec.hidden_runs import runs_programs
from stayer.exec.shell_syntax import SimpleCommand, parse
from stayer.permissions import PermissionPolicy, Rule, rule_path
from stayer.permissions.protected import protected_parts
from stayer.tools.base import Tool
from stayer.tools.names import TOOL_ALIASES

from .policy_replay import Checks, Judged

_DELETES = frozenset({"rm", "rmdir", "shred", "unlink", "srm"})
_OTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "runuser"})
_PIPE_TO_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:[\w./-]*/)?(?:sh|bash|zsh|dash|ksh)\b")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]*$")
_GLOB_CHAR = re.compile(r"[*?\[{]")


def rule_text(rule: Rule) -> str:
    """A rule as it is written."""
    return rule.tool if rule.specifier is None else f"{rule.tool}({rule.specifier})"


def widening(
    rule: Rule, tools: Mapping[str, Tool[Any]], cwd: Path, directories: Sequence[Path] = ()
) -> str | None:
    """Why allowing `rule` is dangerous, or None when it is not."""
    tool = tools.get(TOOL_ALIASES.get(rule.tool, rule.tool))
    if tool is None:
        return None
    if tool.subject_kind == "command":
        return _command_widening(rule.specifier)
    if tool.subject_kind == "path" and not tool.read_only:
        if rule.specifier is None:
            return "it allows writing any file, anywhere"
        pattern = rule.path_pattern(cwd)
        found = protected_parts(pattern)
        if found:
            return f"it opens {found[0][0]}, a protected path ({found[0][1]})"
        fixed = Path(_GLOB_CHAR.split(pattern, maxsplit=1)[0])
        if not any(fixed.is_relative_to(root) for root in (cwd, *directories)):
            return "it allows writing outside the project"
    return None


def _command_widening(specifier: str | None) -> str | None:
    if specifier is None or specifier.startswith("*"):
        return "it allows every command"
    if _PIPE_TO_SHELL.search(specifier):
        return "it allows piping into a shell, which runs whatever comes down the pipe"
    words = specifier.removesuffix(":*").split()
    program = os.path.basename(words[0]) if words else ""
    if program in _DELETES:
        return f"it allows {program}, which deletes files"
    if program in _OTHER_USER:
        return f"it allows {program}, which runs any command as another user"
    exact = not specifier.endswith(":*") and not _GLOB_CHAR.search(specifier)
    runs = None if exact else runs_programs(program, words[1] if len(words) > 1 else None)
    if runs is not None:
        return f"it allows {' '.join(words[:2])} with any arguments, and {runs}"
    return None


def candidates(judged: Judged) -> list[Rule]:
    """The allow rules that could stand for this call, narrowest first."""
    tool, kind = judged.tool, judged.tool.subject_kind
    subject = tool.permission_subject(judged.input)
    if kind == "none":
        return [Rule(tool.name)]
    if subject is None:
        return []
    if kind == "domain":
        return [Rule(tool.name, f"domain:{subject.lower()}")]
    if kind == "path":
        return list(_path_candidates(tool.name, subject, judged.call.cwd))
    return list(dict.fromkeys(_command_candidates(tool.name, subject)))


def _path_candidates(tool: str, subject: str, cwd: Path) -> Iterator[Rule]:
    path = Path(os.path.normpath(cwd / Path(subject).expanduser()))
    if path.parent == cwd:
        yield Rule(tool, path.name)
    for parent in path.parents:
        if parent == cwd or not parent.is_relative_to(cwd):
            break
        yield Rule(tool, f"{rule_path(str(parent), cwd)}/**")


def _command_candidates(tool: str, command: str) -> Iterator[Rule]:
    parsed = parse(command)
    if parsed.hidden:
        return
    if parsed.writes:
        yield Rule(tool, command.strip())
        return
    for simple in parsed.commands:
        yield from _simple_candidates(tool, simple)


def _simple_candidates(tool: str, simple: SimpleCommand) -> Iterator[Rule]:
    words = simple.words
    if simple.assignments or not words or words[0].dynamic:
        return
    program = words[0].text
    if len(words) == 1:
        yield Rule(tool, program)  # exactly this: nothing more can ride on it
    if len(words) > 1 and not words[1].dynamic and _SUBCOMMAND.match(words[1].text):
        yield Rule(tool, f"{program} {words[1].text}:*")
    yield Rule(tool, f"{program}:*")


class Proposal(Struct, frozen=True):
    """An allow rule to add, and how many of the questions it would have removed."""

    rule: Rule
    removes: int


class Widening(Struct, frozen=True):
    """An allow rule in force that widens too far, and why."""

    rule: Rule
    why: str


def widenings(
    policy: PermissionPolicy, tools: Mapping[str, Tool[Any]], cwd: Path
) -> list[Widening]:
    """The allow rules of `policy` that widen too far."""
    found = ((rule, widening(rule, tools, cwd, policy.directories)) for rule in policy.allow)
    return [Widening(rule, why) for rule, why in found if why is not None]


async def propose(
    policy: PermissionPolicy,
    asked: Sequence[Judged],
    refused: Sequence[Judged],
    tools: Mapping[str, Tool[Any]],
    checks: Checks,
) -> list[Proposal]:
    """The allow rules, chosen greedily, that would have removed the most of the `asked` calls
    without standing for any of the `refused` ones (see the module's docstring)."""
    pool = list(dict.fromkeys(rule for judged in asked for rule in candidates(judged)))
    pool = [
        rule
        for rule in pool
        if rule not in policy.allow
        and widening(rule, tools, judged_cwd(asked), policy.directories) is None
    ]
    chosen: list[Proposal] = []
    remaining = list(asked)
    while remaining and pool:
        best: tuple[int, int, Rule] | None = None
        for rule in pool:
            trial = replace(policy, allow=(*policy.allow, *(p.rule for p in chosen), rule))
            removed = sum([await checks.allows(trial, judged) for judged in remaining])
            narrow = len(rule.specifier or "")
            if removed and (best is None or (removed, narrow) > best[:2]):
                best = (removed, narrow, rule)
        if best is None:
            break
        removed, _, rule = best
        pool.remove(rule)
        if await _argued_against(policy, [p.rule for p in chosen], rule, refused, checks):
            continue
        chosen.append(Proposal(rule, removed))
        trial = replace(policy, allow=(*policy.allow, *(p.rule for p in chosen)))
        remaining = [judged for judged in remaining if not await checks.allows(trial, judged)]
    return chosen


def judged_cwd(calls: Sequence[Judged], default: Path | None = None) -> Path:
    """The directory most of the calls ran in (the project the rules are for); `default`, else
    the current one, when there are none."""
    counts: dict[Path, int] = {}
    for judged in calls:
        counts[judged.call.cwd] = counts.get(judged.call.cwd, 0) + 1
    if not counts:
        return default or Path.cwd()
    return max(counts, key=lambda cwd: counts[cwd])


async def _argued_against(
    policy: PermissionPolicy,
    chosen: list[Rule],
    rule: Rule,
    refused: Sequence[Judged],
    checks: Checks,
) -> bool:
    """Whether, with no deny rule in force, `rule` would allow a refused call that the rules
    chosen so far would not."""
    before = replace(policy, allow=(*policy.allow, *chosen), deny=())
    after = replace(before, allow=(*before.allow, rule))
    for judged in refused:
        if await checks.allows(after, judged) and not await checks.allows(before, judged):
            return True
    return False
