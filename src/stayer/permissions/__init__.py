"""Permission modes and rules, and the pure decision over one tool call.

Until interactive approval exists, a call that would need asking is denied with a message that
tells the model (and the person reading the transcript) how to allow it. Rules use Claude Code's
syntax: ``Tool`` or ``Tool(specifier)``, where the specifier is matched against the call's
subject (a Bash command, a file path) as a glob; the legacy ``prefix:*`` form matches a prefix.

A Bash command is judged by its parts: ``git status; rm -rf x`` is two commands, and an allow
rule must cover every part, while a deny rule needs to match only one. A command whose parts
cannot be told apart (command substitution, unbalanced quotes) is never allowed by a rule.
File paths arrive resolved (absolute, ``~`` expanded, ``..`` gone); path specifiers are resolved
against the working directory the same way before matching.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, cast, get_args

from stayer.errors import ConfigError

from .shell import command_parts, program_forms

PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"
]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
MODE_ALIASES = {"manual": "default"}
"""Newer Claude Code names `default` `manual`; both are accepted."""

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_.\-]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)


def parse_mode(value: str) -> PermissionMode:
    """A permission mode from its name; raises `ConfigError` for an unknown one."""
    name = MODE_ALIASES.get(value, value)
    if name in PERMISSION_MODES:
        return cast(PermissionMode, name)
    raise ConfigError(
        f"unknown permission mode {value!r}; use one of: {', '.join(PERMISSION_MODES)}"
    )


@dataclass(frozen=True, slots=True)
class Rule:
    """``Tool`` (every call) or ``Tool(specifier)`` (calls whose subject matches)."""

    tool: str
    specifier: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Parse one rule; raises `ConfigError` naming the bad rule."""
        match = _RULE.match(text.strip())
        if not match:
            raise ConfigError(f"bad permission rule {text!r}; write Tool or Tool(pattern)")
        spec = match.group("spec")
        return cls(match.group("tool"), spec if spec not in (None, "", "*") else None)

    def matches(self, tool: str, subject: str | None, cwd: Path, *, path: bool = False) -> bool:
        """Whether this rule covers a call of `tool` on `subject` (a resolved path if `path`)."""
        if tool != self.tool:
            return False
        if self.specifier is None:
            return True
        if subject is None:
            return False
        if self.specifier.endswith(":*"):  # the legacy prefix form ends at a word boundary
            prefix = self.specifier[:-2]
            return subject == prefix or subject.startswith(prefix + " ")
        pattern = self.specifier
        if path:
            if pattern.startswith("//"):  # Claude Code's spelling of an absolute path
                pattern = pattern[1:]
            pattern = os.path.normpath(cwd / Path(pattern).expanduser())
        return fnmatch.fnmatchcase(subject, pattern)


def parse_rules(values: Iterable[str]) -> tuple[Rule, ...]:
    """Rules from flag values; each value may hold several, comma- or space-separated."""
    rules: list[Rule] = []
    for value in values:
        for item in _split_rules(value):
            rules.append(Rule.parse(item))
    return tuple(rules)


def _split_rules(value: str) -> list[str]:
    """Split on commas and spaces that are not inside parentheses."""
    items: list[str] = []
    depth, current = 0, ""
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char in ", " and depth == 0:
            if current:
                items.append(current)
            current = ""
            continue
        current += char
    if current:
        items.append(current)
    return items


@dataclass(frozen=True, slots=True)
class Decision:
    """Allow or deny, and why (the reason is what the model reads on a denial)."""

    behavior: Literal["allow", "deny"]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PermissionPolicy:
    """The mode and rules in force for a run."""

    mode: PermissionMode = "default"
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    def hides(self, tool: str) -> bool:
        """Whether a whole-tool deny rule removes `tool` from what the model is shown."""
        return any(rule.tool == tool and rule.specifier is None for rule in self.deny)


def _covered(
    rules: tuple[Rule, ...], tool: str, subject: str | None, cwd: Path, path: bool
) -> bool:
    """An allow rule must cover every part of a compound command."""
    if tool != "Bash" or subject is None:
        return any(rule.matches(tool, subject, cwd, path=path) for rule in rules)
    parts = command_parts(subject)
    if parts is None:
        return any(rule.matches(tool, None, cwd) for rule in rules)  # only whole-tool rules
    return all(any(rule.matches(tool, part, cwd) for rule in rules) for part in parts)


def _hit(rules: tuple[Rule, ...], tool: str, subject: str | None, cwd: Path, path: bool) -> bool:
    """A deny rule needs to match the whole command or only one of its parts; a command whose
    parts cannot be told apart is denied by any Bash rule with a pattern.
    """
    candidates = [subject]
    if tool == "Bash" and subject is not None:
        parts = command_parts(subject)
        if parts is None:
            return any(rule.tool == "Bash" for rule in rules)
        for part in parts:
            candidates += [part, *program_forms(part)]
    return any(rule.matches(tool, c, cwd, path=path) for rule in rules for c in candidates)


def evaluate(
    policy: PermissionPolicy,
    *,
    tool: str,
    subject: str | None,
    read_only: bool,
    cwd: Path,
    subject_is_path: bool = False,
    aliases: tuple[str, ...] = (),
) -> Decision:
    """Decide one call. Deny rules win, then bypass, allow rules, read-only, accept-edits.

    A path `subject` must already be resolved (see `resolve_subject`); `aliases` are other
    names of the same thing (the path as written, before symlinks), which deny rules also see.
    """
    denied = (subject, *aliases)
    if any(_hit(policy.deny, tool, name, cwd, subject_is_path) for name in denied):
        return Decision("deny", f"Permission to use {tool} has been denied by a deny rule.")
    if policy.mode == "bypassPermissions":
        return Decision("allow")
    if _covered(policy.allow, tool, subject, cwd, subject_is_path):
        return Decision("allow")
    if read_only:
        return Decision("allow")
    if policy.mode == "acceptEdits" and tool in EDIT_TOOLS and _inside(subject, cwd):
        return Decision("allow")
    if policy.mode == "plan":
        return Decision(
            "deny",
            f"Permission to use {tool} has been denied: plan mode allows only read-only tools. "
            "Finish the plan and present it instead.",
        )
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: nobody is here to approve it in "
        f"{policy.mode} mode. Carry on with the tools you may use; if this one is essential, "
        f"stop and say so (the user can allow it with --allowedTools {tool}, or "
        "--permission-mode acceptEdits / bypassPermissions).",
    )


def _inside(subject: str | None, cwd: Path) -> bool:
    """Whether a resolved path lies in the working directory."""
    if subject is None or not subject.startswith("/"):
        return False
    return Path(subject).is_relative_to(cwd)


def resolve_subject(path: str | None, cwd: Path) -> str:
    """A path as permission rules see it: absolute, `~` expanded, symlinks and `..` resolved."""
    return str(Path(lexical_subject(path, cwd)).resolve())


def lexical_subject(path: str | None, cwd: Path) -> str:
    """A path made absolute as written: `~` expanded and `..` folded, symlinks left alone."""
    return os.path.normpath(cwd / Path(path or ".").expanduser())
