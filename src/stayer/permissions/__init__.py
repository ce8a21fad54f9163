"""Permission modes and rules, and the pure decision over one tool call: allow, deny or ask.

The order is Claude Code's (`hasPermissionsToUseTool`): a deny rule denies; an ask rule asks,
in every mode; a call that leaves plan mode asks for the plan to be accepted; a write to a
protected path (`protected.py`) asks, even in bypassPermissions, unless an allow rule names
that place; bypassPermissions allows; an allow rule allows; a read-only call is allowed;
acceptEdits allows writes inside the working directories; plan mode refuses anything else;
everything else asks. In dontAsk mode nothing asks: what would is denied.

An ask goes to the session's decider (a dialog, an SDK callback); with none (a headless run) it
is denied, and its `reason` is written for that case: it tells the model, and the person
reading the transcript, which rule would allow the call. Rules are in `rules.py`.

No tool is named here: each declares what its subject is (`stayer.tools.base.SubjectKind`),
and whether calling it asks to leave plan mode. A command line is judged by the simple commands
a real shell parse finds in it (`shell.py`). A call with a path subject that is not read-only
writes that path.
"""

from __future__ import annotations

from pathlib import Path

from stayer.tools.base import SubjectKind

from .matching import covered, first_hit, inside, lexical_subject, resolve_subject, rule_path
from .policy import (
    MODE_ALIASES,
    PERMISSION_MODES,
    Behavior,
    Decision,
    PermissionMode,
    PermissionPolicy,
    PermissionState,
    Resolver,
    parse_mode,
)
from .protected import protected_parts
from .rules import Rule, parse_rules
from .texts import asked_by_rule, dont_ask, outside, plan_exit, plan_refusal, protected, unattended

__all__ = [
    "MODE_ALIASES",
    "PERMISSION_MODES",
    "Behavior",
    "Decision",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionState",
    "Resolver",
    "Rule",
    "evaluate",
    "lexical_subject",
    "nul_refusal",
    "parse_mode",
    "parse_rules",
    "reads_denied",
    "resolve_subject",
    "rule_path",
]


def evaluate(
    policy: PermissionPolicy,
    *,
    tool: str,
    subject: str | None,
    read_only: bool,
    cwd: Path,
    subject_kind: SubjectKind = "none",
    aliases: tuple[str, ...] = (),
    exits_plan: bool = False,
) -> Decision:
    """Decide one call (see the module docstring for the order).

    `subject_kind` says what `subject` is (the tool declares it). A path must already be
    resolved (see `resolve_subject`); `aliases` are other names of the same thing (the path as
    written, before symlinks), which deny and ask rules and the protected-path check also see.
    `exits_plan` marks a call that asks for the plan to be accepted.
    """
    decision = _decide(policy, tool, subject, read_only, cwd, subject_kind, aliases, exits_plan)
    if decision.behavior == "ask" and policy.mode == "dontAsk":
        return dont_ask(tool, decision)
    return decision


def _decide(
    policy: PermissionPolicy,
    tool: str,
    subject: str | None,
    read_only: bool,
    cwd: Path,
    kind: SubjectKind,
    aliases: tuple[str, ...],
    exits_plan: bool,
) -> Decision:
    names = (subject, *aliases)
    denied = first_hit(policy.deny, tool, names, cwd, kind)
    if denied is not None:
        return Decision(
            "deny", f"Permission to use {tool} has been denied by a deny rule.", rule=str(denied)
        )
    asked = first_hit(policy.ask, tool, names, cwd, kind)
    if asked is not None:
        return asked_by_rule(tool, asked)
    if exits_plan:
        return plan_exit(policy)
    writes = kind == "path" and not read_only
    if writes and subject is not None:
        guarded = [n for n in names if n and protected_parts(n)]
        if guarded:
            return _protected(policy, tool, subject, aliases, cwd, guarded[0])
    if policy.mode == "bypassPermissions" or covered(policy.allow, tool, subject, cwd, kind):
        return Decision("allow")
    if read_only:
        return Decision("allow")
    within = inside(subject, (cwd, *policy.directories))
    if policy.mode == "acceptEdits" and writes and within:
        return Decision("allow")
    if policy.mode == "plan":
        return plan_refusal(tool)
    if writes and subject is not None and not within:
        return outside(policy, tool, subject, cwd)
    return unattended(policy, tool, subject, kind)


def _protected(
    policy: PermissionPolicy,
    tool: str,
    subject: str,
    aliases: tuple[str, ...],
    cwd: Path,
    guarded: str,
) -> Decision:
    """Only an allow rule that names every protected place on the path lets a write through
    without asking: `Edit(.vscode/**)` opens `.vscode/`, not a `.git/` someone put inside it."""
    names = (subject, *aliases)
    needed = {part for name in names for part, _ in protected_parts(name)}
    explicit = tuple(
        rule
        for rule in policy.allow
        if rule.specifier is not None
        and needed <= {part for part, _ in protected_parts(rule.path_pattern(cwd))}
    )
    if any(covered(explicit, tool, name, cwd, "path") for name in names):
        return Decision("allow")
    written = next((alias for alias in aliases if alias != subject), None)
    return protected(tool, subject, written, guarded, cwd)


def reads_denied(
    policy: PermissionPolicy, *, tool: str, paths: tuple[str, ...] | None, cwd: Path
) -> Decision | None:
    """A denial when a file this call reads is one a deny rule of `tool` names (the tool whose
    rules judge reading: a shell command that reads `.env` is judged as reading it would be);
    None otherwise. Each path is judged as written and where it really points; a call that
    cannot tell what it reads (`paths` None) is denied while any such rule has a pattern."""
    rules = tuple(rule for rule in policy.deny if rule.names(tool) and rule.specifier)
    if not rules:
        return None
    if paths is None:
        return Decision(
            "deny",
            f"Permission denied: the files this command reads cannot be told from its words, "
            f"and {tool} deny rules are in force. Name the files plainly instead.",
        )
    for path in paths:
        if path.endswith("/**") and _tree_holds(rules, path[:-3] or "/", cwd):
            return Decision(
                "deny",
                f"Permission denied: a search of everything under {path[:-3] or '/'} would read "
                f"files a deny rule for {tool} names. Search a narrower folder, or use the "
                "search tool, which leaves those files out.",
            )
        names: tuple[str, ...] = (resolve_subject(path, cwd), lexical_subject(path, cwd))
        # A directory holds what `dir/**` denies: searching it reads those files.
        names += tuple(name.rstrip("/") + "/" for name in names)
        if any(
            rule.matches(tool, name, cwd, kind="path", fold=True)
            for rule in rules
            for name in names
        ):
            return Decision(
                "deny",
                f"Permission to read {path} has been denied by a deny rule for {tool}; reading "
                "it another way is denied as well.",
            )
    return None


def _tree_holds(rules: tuple[Rule, ...], folder: str, cwd: Path) -> bool:
    """Whether a rule's pattern names something under `folder` (or the folder itself)."""
    roots = {resolve_subject(folder, cwd).casefold(), lexical_subject(folder, cwd).casefold()}
    for rule in rules:
        pattern = rule.path_pattern(cwd).casefold()
        if any(pattern == root or pattern.startswith(root.rstrip("/") + "/") for root in roots):
            return True
    return False


def nul_refusal(tool: str, subject: str | None) -> Decision | None:
    """A denial for a subject holding a NUL byte, which no file name or command line can (the
    system cuts or refuses it, so what would run is not what the rules saw); None otherwise."""
    if subject is None or "\x00" not in subject:
        return None
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: its input holds a NUL byte, which no file "
        "name or command can contain. Remove it and try again.",
    )
