"""Permission modes and rules, and the pure decision over one tool call.

Until interactive approval exists, a call that would need asking is denied with a message that
tells the model (and the person reading the transcript) how to allow it. Rules use Claude Code's
syntax: ``Tool`` or ``Tool(specifier)``, where the specifier is matched against the call's
subject as a glob; the legacy ``prefix:*`` form matches a prefix.

No tool is named here: each declares what its subject is (`stayer.tools.base.SubjectKind`).
A command line is judged by the simple commands a real shell parse finds in it (`shell.py`): an
allow rule must cover every one, a deny rule needs to match only one, and what the parse cannot
see through is never allowed by a rule with a pattern. File paths arrive resolved (absolute,
``~`` expanded, ``..`` gone); path specifiers are resolved against the working directory the
same way before matching. A call with a path subject that is not read-only writes that path:
`acceptEdits` allows it inside the working directories (the run's own and those added with
``--add-dir``), and no mode allows it on a protected path (`protected.py`). A domain specifier
may be written ``domain:host``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast, get_args

from stayer.errors import ConfigError
from stayer.tools.base import SubjectKind

from .protected import protected_parts
from .shell import command_forms

PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"
]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
MODE_ALIASES = {"manual": "default"}
"""Newer Claude Code names `default` `manual`; both are accepted."""

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

    def matches(
        self, tool: str, subject: str | None, cwd: Path, *, kind: SubjectKind = "none"
    ) -> bool:
        """Whether this rule covers a call of `tool` on `subject` (a resolved path for paths)."""
        if tool != self.tool:
            return False
        if self.specifier is None:
            return True
        if subject is None:
            return False
        if kind == "domain":  # host names are not case-sensitive
            pattern = self.specifier.removeprefix("domain:")
            return fnmatch.fnmatchcase(subject.lower(), pattern.lower())
        if self.specifier.endswith(":*"):  # the legacy prefix form ends at a word boundary
            prefix = self.specifier[:-2]
            return subject == prefix or subject.startswith(prefix + " ")
        if kind != "path":
            return fnmatch.fnmatchcase(subject, self.specifier)
        pattern = self.path_pattern(cwd)
        # As in gitignore, `**/` also stands for no directory at all.
        return fnmatch.fnmatchcase(subject, pattern) or fnmatch.fnmatchcase(
            subject, pattern.replace("/**/", "/")
        )

    def path_pattern(self, cwd: Path) -> str:
        """The specifier as an absolute path pattern (``//`` is Claude Code's absolute form)."""
        pattern = self.specifier or "**"
        if pattern.startswith("//"):
            pattern = pattern[1:]
        return os.path.normpath(cwd / _expanded(pattern))


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
    unanswered: Literal["mode", "rule"] | None = None
    """Set on a denial that stands for a question nobody was here to answer: the mode would ask
    (`mode`; a PreToolUse hook's allow answers it) or an ask rule does (`rule`; only a person
    can). A Notification hook hears of both."""
    updated_input: Any = None
    """The input the call is to run with instead of its own (a PreToolUse hook rewrote it),
    already validated by the tool's input model; None: its own."""


@dataclass(frozen=True, slots=True)
class PermissionPolicy:
    """The mode and rules in force for a run."""

    mode: PermissionMode = "default"
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    directories: tuple[Path, ...] = ()
    """Working directories besides the run's own (``--add-dir``), resolved."""

    def hides(self, tool: str) -> bool:
        """Whether a whole-tool deny rule removes `tool` from what the model is shown."""
        return any(rule.tool == tool and rule.specifier is None for rule in self.deny)


def _covered(
    rules: tuple[Rule, ...], tool: str, subject: str | None, cwd: Path, kind: SubjectKind
) -> bool:
    """An allow rule must cover every simple command of a command line."""
    if kind != "command" or subject is None:
        return any(rule.matches(tool, subject, cwd, kind=kind) for rule in rules)
    forms = command_forms(subject)
    if forms.allow is None:
        return any(
            rule.matches(tool, None, cwd)
            or (forms.exact and rule.tool == tool and rule.specifier == subject.strip())
            for rule in rules
        )
    return all(
        any(rule.matches(tool, form, cwd) for rule in rules for form in command)
        for command in forms.allow
    )


def _hit(
    rules: tuple[Rule, ...], tool: str, subject: str | None, cwd: Path, kind: SubjectKind
) -> bool:
    """A deny rule needs to match the whole command line or one form of one of its simple
    commands; a line the parse cannot see through is denied by any of the tool's rules."""
    candidates: tuple[str | None, ...] = (subject,)
    if kind == "command" and subject is not None:
        forms = command_forms(subject).deny
        if forms is None:
            return any(rule.tool == tool for rule in rules)
        candidates = forms
    return any(rule.matches(tool, c, cwd, kind=kind) for rule in rules for c in candidates)


def evaluate(
    policy: PermissionPolicy,
    *,
    tool: str,
    subject: str | None,
    read_only: bool,
    cwd: Path,
    subject_kind: SubjectKind = "none",
    aliases: tuple[str, ...] = (),
) -> Decision:
    """Decide one call. Deny rules win, then protected paths, bypass, allow rules, read-only,
    accept-edits.

    `subject_kind` says what `subject` is (the tool declares it). A path must already be
    resolved (see `resolve_subject`); `aliases` are other names of the same thing (the path as
    written, before symlinks), which deny rules and the protected-path check also see. A call
    with a path subject that is not read-only writes that path.
    """
    names = (subject, *aliases)
    if any(_hit(policy.deny, tool, name, cwd, subject_kind) for name in names):
        return Decision("deny", f"Permission to use {tool} has been denied by a deny rule.")
    writes = subject_kind == "path" and not read_only
    if writes and subject is not None:
        guarded = [n for n in names if n and protected_parts(n)]
        if guarded:
            return _protected(policy, tool, subject, aliases, cwd, guarded[0])
    if policy.mode == "bypassPermissions":
        return Decision("allow")
    if _covered(policy.allow, tool, subject, cwd, subject_kind):
        return Decision("allow")
    if read_only:
        return Decision("allow")
    inside = _inside(subject, (cwd, *policy.directories))
    if policy.mode == "acceptEdits" and writes and inside:
        return Decision("allow")
    if policy.mode == "plan":
        return Decision(
            "deny",
            f"Permission to use {tool} has been denied: plan mode allows only read-only tools. "
            "Finish the plan and present it instead.",
        )
    if writes and subject is not None and not inside:
        return _outside(policy, tool, subject, cwd)
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: nobody is here to approve it in "
        f"{policy.mode} mode. Carry on with the tools you may use; if this one is essential, "
        f"stop and say so (the user can allow it with --allowedTools {tool}, or "
        "--permission-mode acceptEdits / bypassPermissions).",
        unanswered="mode",
    )


def _protected(
    policy: PermissionPolicy,
    tool: str,
    subject: str,
    aliases: tuple[str, ...],
    cwd: Path,
    guarded: str,
) -> Decision:
    """Only an allow rule that names every protected place on the path lets a write through:
    `Edit(.vscode/**)` opens `.vscode/`, not a `.git/` someone put inside it."""
    names = (subject, *aliases)
    needed = {part for name in names for part, _ in protected_parts(name)}
    explicit = tuple(
        rule
        for rule in policy.allow
        if rule.specifier is not None
        and needed <= {part for part, _ in protected_parts(rule.path_pattern(cwd))}
    )
    if any(_covered(explicit, tool, name, cwd, "path") for name in names):
        return Decision("allow")
    part, why = protected_parts(guarded)[0]
    written = next((alias for alias in aliases if alias != subject), None)
    shown = f"{written} (which is {subject})" if written else subject
    return Decision(
        "deny",
        f"Permission to use {tool} on {shown} has been denied: {part} is protected ({why}), "
        "so no permission mode allows writing it, not even bypassPermissions. Do not try "
        "another way to change it; if the change is needed, stop and say so (the user can "
        f'allow exactly this path with --allowedTools "{tool}({rule_path(guarded, cwd)})").',
    )


def _outside(policy: PermissionPolicy, tool: str, subject: str, cwd: Path) -> Decision:
    """A write outside every working directory: say so, and how the user can widen them."""
    roots = ", ".join(str(root) for root in (cwd, *policy.directories))
    rule = f'--allowedTools "{tool}({rule_path(subject, cwd)})"'
    add_dir = f"--add-dir {Path(subject).parent}"
    if policy.mode == "acceptEdits":
        why = f"acceptEdits allows edits only inside the working directories ({roots})"
        how = f"add its directory with {add_dir}, or allow this path with {rule}"
    else:
        why = (
            f"nobody is here to approve it in {policy.mode} mode, and it is outside the "
            f"working directories ({roots})"
        )
        how = f"allow this path with {rule}, or add its directory with {add_dir} and use "
        how += "--permission-mode acceptEdits"
    return Decision(
        "deny",
        f"Permission to use {tool} on {subject} has been denied: {why}. Work inside them; if "
        f"this file is essential, stop and say so (the user can {how}).",
        unanswered="mode",
    )


def reads_denied(
    policy: PermissionPolicy, *, tool: str, paths: tuple[str, ...] | None, cwd: Path
) -> Decision | None:
    """A denial when a file this call reads is one a deny rule of `tool` names (the tool whose
    rules judge reading: a shell command that reads `.env` is judged as reading it would be);
    None otherwise. Each path is judged as written and where it really points; a call that
    cannot tell what it reads (`paths` None) is denied while any such rule has a pattern."""
    rules = tuple(rule for rule in policy.deny if rule.tool == tool and rule.specifier)
    if not rules:
        return None
    if paths is None:
        return Decision(
            "deny",
            f"Permission denied: the files this command reads cannot be told from its words, "
            f"and {tool} deny rules are in force. Name the files plainly instead.",
        )
    for path in paths:
        names = (resolve_subject(path, cwd), lexical_subject(path, cwd))
        if any(rule.matches(tool, name, cwd, kind="path") for rule in rules for name in names):
            return Decision(
                "deny",
                f"Permission to read {path} has been denied by a deny rule for {tool}; reading "
                "it another way is denied as well.",
            )
    return None


def rule_path(path: str, cwd: Path) -> str:
    """How a rule names `path`: relative inside the working directory, `~/` under home,
    `//` (Claude Code's absolute form) elsewhere."""
    resolved = Path(path)
    if resolved.is_relative_to(cwd):
        return str(resolved.relative_to(cwd))
    home = Path.home()
    if resolved.is_relative_to(home):
        return "~/" + str(resolved.relative_to(home))
    return "/" + str(resolved)


def _inside(subject: str | None, roots: tuple[Path, ...]) -> bool:
    """Whether a resolved path lies in one of the working directories."""
    if subject is None or not subject.startswith("/"):
        return False
    return any(Path(subject).is_relative_to(root) for root in roots)


def resolve_subject(path: str | None, cwd: Path) -> str:
    """A path as the file system will take it: absolute, `~` expanded, and each component
    resolved in order, so `link/..` goes where the link points, not back where it stands."""
    return str((cwd / _expanded(path)).resolve())


def lexical_subject(path: str | None, cwd: Path) -> str:
    """A path made absolute as written: `~` expanded and `..` folded, symlinks left alone."""
    return os.path.normpath(cwd / _expanded(path))


def _expanded(path: str | None) -> Path:
    """`path` with `~` expanded; a `~user` that does not exist stays as written."""
    candidate = Path(path or ".")
    try:
        return candidate.expanduser()
    except RuntimeError:  # no such user, or no home directory to be found
        return candidate
