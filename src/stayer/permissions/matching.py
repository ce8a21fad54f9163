"""Which rules a call meets, and the path forms rules are matched against.

An allow rule must cover every simple command of a command line; a deny or ask rule needs to
hit only one (see `shell.py`). File paths arrive resolved (absolute, ``~`` expanded, ``..``
gone, symlinks followed) and, as written, in the lexical form beside it.
"""

from __future__ import annotations

import os
from pathlib import Path

from stayer.tools.base import SubjectKind

from .rules import Rule, expanded
from .shell import CommandForms, command_forms, mentioned_forms


def covered(
    rules: tuple[Rule, ...], tool: str, subject: str | None, cwd: Path, kind: SubjectKind
) -> bool:
    """Whether an allow rule covers the call (for a command line: every simple command)."""
    if kind != "command" or subject is None:
        return any(rule.matches(tool, subject, cwd, kind=kind) for rule in rules)
    forms = command_forms(subject)
    if forms.allow is None:
        return any(
            rule.matches(tool, None, cwd)
            or (forms.exact and rule.names(tool) and rule.specifier == subject.strip())
            for rule in rules
        )
    return all(
        any(rule.matches(tool, form, cwd) for rule in rules for form in command)
        for command in forms.allow
    )


def first_hit(
    rules: tuple[Rule, ...],
    tool: str,
    names: tuple[str | None, ...],
    cwd: Path,
    kind: SubjectKind,
) -> Rule | None:
    """The first rule that hits the call under any of its `names`. A rule hits the whole
    command line or one form of one of its simple commands; a line the parse cannot see
    through is hit by any of the tool's rules."""
    for name in names:
        if kind == "command" and name is not None:
            hit = _command_hit(rules, tool, command_forms(name), cwd)
            if hit is not None:
                return hit
            continue
        for rule in rules:  # deny and ask rules: paths compared case-folded (see Rule)
            if rule.matches(tool, name, cwd, kind=kind, fold=True):
                return rule
    return None


def _command_hit(rules: tuple[Rule, ...], tool: str, forms: CommandForms, cwd: Path) -> Rule | None:
    """The first rule that hits a command line: any of the tool's rules when the line may run
    what its words do not show; else one matching a form, or a place its program is named."""
    if forms.deny is None:
        return next((rule for rule in rules if rule.names(tool)), None)
    for rule in rules:
        candidates = list(forms.deny)
        head = _program_of(rule)
        if forms.mentions and head:
            candidates += mentioned_forms(forms.mentions, head)
        if any(rule.matches(tool, candidate, cwd, fold=True) for candidate in candidates):
            return rule
    return None


def _program_of(rule: Rule) -> str:
    """The program a command rule names first (`curl` of `curl:*` or `curl *`); '' when its
    pattern begins with a wildcard, which the whole line is already matched against."""
    if rule.specifier is None:
        return ""
    head = rule.specifier.removesuffix(":*").split(None, 1)
    return head[0] if head and not any(c in head[0] for c in "*?[") else ""


def rule_path(path: str, cwd: Path) -> str:
    """How a rule names `path`: relative inside the working directory, `~/` under home,
    `//` (Claude Code's absolute form) elsewhere."""
    resolved = Path(path)
    if resolved.is_relative_to(cwd):
        relative = str(resolved.relative_to(cwd))
        return relative if "/" in relative else "./" + relative  # a bare name is any depth
    home = Path.home()
    if resolved.is_relative_to(home):
        return "~/" + str(resolved.relative_to(home))
    return "/" + str(resolved)


def inside(subject: str | None, roots: tuple[Path, ...]) -> bool:
    """Whether a resolved path lies in one of the working directories."""
    if subject is None or not subject.startswith("/"):
        return False
    return any(Path(subject).is_relative_to(root) for root in roots)


def resolve_subject(path: str | None, cwd: Path) -> str:
    """A path as the file system will take it: absolute, `~` expanded, and each component
    resolved in order, so `link/..` goes where the link points, not back where it stands."""
    return str((cwd / expanded(path)).resolve())


def lexical_subject(path: str | None, cwd: Path) -> str:
    """A path made absolute as written: `~` expanded and `..` folded, symlinks left alone."""
    return os.path.normpath(cwd / expanded(path))
