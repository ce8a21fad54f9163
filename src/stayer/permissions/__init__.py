"""Permission modes and rules, and the pure decision over one tool call: allow, deny or ask.

The order is Claude Code's (`hasPermissionsToUseTool`): a deny rule denies; an ask rule asks,
in every mode; a call that leaves plan mode asks for the plan to be accepted; a write to a
protected path (`protected.py`), by a file tool or a shell command, asks, even in
bypassPermissions, unless an allow rule names that place (for a command, the exact line);
bypassPermissions allows; an allow rule allows; a read-only call is allowed, unless it reaches
out: to the network (a domain subject), or to files outside the session's own places
(`reach.py`), which asks; acceptEdits allows writes inside the working directories; plan mode
refuses anything else; everything else asks. In dontAsk mode nothing asks: what would is
denied. Under --sandbox, a call that would leave the sandbox is denied before all that
(`reach.sandbox_refusal`).

An ask goes to the session's decider (a dialog, an SDK callback); with none (a headless run) it
is denied, and its `reason` is written for that case: it tells the model, and the person
reading the transcript, which rule would allow the call. Rules are in `rules.py`.

No tool is named here: each declares what its subject is (`stayer.tools.base.SubjectKind`),
and whether calling it asks to leave plan mode. A command line is judged by the simple commands
a real shell parse finds in it (`shell.py`). A call with a path subject that is not read-only
writes that path; what else a call writes (a command's redirections and the files its
programs write) comes in `Writes`, with the places the session found on the disk.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from stayer.exec.globs import glob_literal
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
from .protected import Place, Writes, protected_places, rule_names, unknown_place
from .reach import Confinement, Places, outside_reads, sandbox_refusal
from .rules import Rule, command_literal, domain_pattern, parse_rules
from .texts import (
    asked_by_rule,
    dont_ask,
    fetch_asked,
    history_asked,
    outside,
    outside_read,
    plan_exit,
    plan_refusal,
    protected,
    protected_command,
    unattended,
    unknown_write_asked,
    written_denied,
)

__all__ = [
    "MODE_ALIASES",
    "PERMISSION_MODES",
    "Behavior",
    "Confinement",
    "Decision",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionState",
    "Places",
    "Resolver",
    "Rule",
    "Writes",
    "domain_pattern",
    "evaluate",
    "history_asked",
    "lexical_subject",
    "nul_refusal",
    "outside_reads",
    "parse_mode",
    "parse_rules",
    "reads_denied",
    "resolve_subject",
    "rule_path",
    "sandbox_refusal",
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
    outside: tuple[str, ...] | None = (),
    reads_as: str | None = None,
    writes: Writes | None = None,
    writes_as: str | None = None,
) -> Decision:
    """Decide one call (see the module docstring for the order).

    `subject_kind` says what `subject` is (the tool declares it). A path must already be
    resolved (see `resolve_subject`); `aliases` are other names of the same thing (the path as
    written, before symlinks), which deny and ask rules and the protected-path check also see.
    `exits_plan` marks a call that asks for the plan to be accepted. `outside` is what a
    read-only call reads outside the session's places that no rule allows (`outside_reads`;
    None: it cannot tell), and `reads_as` the tool whose rules name such reads (the call's own
    when None). `writes` is what else the call writes, and the protected places the session
    found around it; `writes_as` the tool whose rules also judge what the call writes (its
    path, and `writes`), as Edit's judge Write's.
    """
    reach = _Reach(outside, reads_as or tool, writes or Writes(), writes_as)
    decision = _decide(
        policy, tool, subject, read_only, cwd, subject_kind, aliases, exits_plan, reach
    )
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
    reach: _Reach,
) -> Decision:
    names = (subject, *aliases)
    writes = kind == "path" and not read_only
    judges = _judges(tool, writes, reach.writes_as)
    denied = _hit(policy.deny, judges, names, cwd, kind)
    if denied is not None:
        return Decision(
            "deny", f"Permission to use {tool} has been denied by a deny rule.", rule=str(denied)
        )
    written = _written(policy.deny, reach.writes_as, reach.writes, cwd)
    if written is not None:
        return written_denied(tool, *written)
    if policy.mode == "plan" and not read_only and not exits_plan:
        return plan_refusal(tool)  # before any question: no answer makes a change in plan mode
    asked = _hit(policy.ask, judges, names, cwd, kind)
    if asked is not None:
        return asked_by_rule(tool, asked)
    asked_write = _asked_write(policy, tool, reach.writes_as, reach.writes, cwd)
    if asked_write is not None:
        return asked_write
    if exits_plan:
        return plan_exit(policy)
    judged = not read_only or kind == "command"  # a command's own writes, read-only or not
    guard = _guard(policy, tool, subject, aliases, cwd, writes, reach.writes) if judged else None
    if guard is not None:
        return guard
    allowed = any(covered(policy.allow, judge, subject, cwd, kind) for judge in judges)
    if policy.mode == "bypassPermissions" or allowed:
        return Decision("allow")
    if read_only:
        return _reading(policy, tool, subject, cwd, kind, reach)
    within = inside(subject, (cwd, *policy.directories))
    if policy.mode == "acceptEdits" and writes and within:
        return Decision("allow")
    if writes and subject is not None and not within:
        return outside(policy, tool, subject, cwd)
    return unattended(policy, tool, subject, kind)


def _judges(tool: str, writes: bool, writes_as: str | None) -> tuple[str, ...]:
    """The tools whose rules judge the call: its own, and `writes_as`'s when it writes its
    path."""
    return (tool, writes_as) if writes and writes_as and writes_as != tool else (tool,)


def _hit(
    rules: tuple[Rule, ...],
    judges: tuple[str, ...],
    names: tuple[str | None, ...],
    cwd: Path,
    kind: SubjectKind,
) -> Rule | None:
    """The first rule of any of the `judges` that hits the call."""
    hits = (first_hit(rules, judge, names, cwd, kind) for judge in judges)
    return next((hit for hit in hits if hit is not None), None)


def _written(
    rules: tuple[Rule, ...], writes_as: str | None, found: Writes, cwd: Path
) -> tuple[str, Rule] | None:
    """A path the call writes besides its subject (a command's redirections and the files its
    programs write) that a rule of `writes_as` hits, with that rule."""
    if writes_as is None:
        return None
    for path in found.paths:
        hit = first_hit(rules, writes_as, (path,), cwd, "path")
        if hit is not None:
            return path, hit
    return None


def _asked_write(
    policy: PermissionPolicy, tool: str, writes_as: str | None, found: Writes, cwd: Path
) -> Decision | None:
    """The question for what the call writes besides its subject: an ask rule of `writes_as`
    hits it, or it writes somewhere known only as it runs while a deny rule of `writes_as`
    with a pattern is in force (that write cannot be judged against it)."""
    written = _written(policy.ask, writes_as, found, cwd)
    if written is not None:
        return asked_by_rule(tool, written[1])
    if found.unknown and writes_as is not None:
        rule = next((r for r in policy.deny if r.names(writes_as) and r.specifier), None)
        if rule is not None:
            return unknown_write_asked(tool, found.unknown[0], rule)
    return None


class _Reach(Struct, frozen=True):
    """What a call reaches besides its subject: files read outside the session's places
    (judged by `reads_as`'s rules), and what else it writes (judged by `writes_as`'s too)."""

    outside: tuple[str, ...] | None
    reads_as: str
    writes: Writes
    writes_as: str | None = None


def _reading(
    policy: PermissionPolicy,
    tool: str,
    subject: str | None,
    cwd: Path,
    kind: SubjectKind,
    reach: _Reach,
) -> Decision:
    """A read-only call no rule allows: it runs unless it reaches out, to the network or to
    files outside the session's places, which asks."""
    if kind == "domain":
        return fetch_asked(policy, tool, subject)
    if reach.outside == ():
        return Decision("allow")
    return outside_read(policy, tool, reach.reads_as, reach.outside, cwd)


def _guard(
    policy: PermissionPolicy,
    tool: str,
    subject: str | None,
    aliases: tuple[str, ...],
    cwd: Path,
    writes_subject: bool,
    found: Writes,
) -> Decision | None:
    """The question for a write to a protected place (the subject of a file tool, or what a
    command writes), or the allowance of a rule that names it; None when there is none."""
    if writes_subject and subject is not None:
        names = (subject, *aliases)
        guarded = [n for n in names if n and protected_places(n, found.located)]
        if guarded:
            return _protected(policy, tool, subject, aliases, cwd, guarded[0], found.located)
    if found.paths or found.unknown:
        hit = _written_place(found, subject or "")
        if hit is not None:
            return _protected_line(policy, tool, subject or "", hit, cwd)
    return None


def _protected(
    policy: PermissionPolicy,
    tool: str,
    subject: str,
    aliases: tuple[str, ...],
    cwd: Path,
    guarded: str,
    located: tuple[Place, ...],
) -> Decision:
    """Only an allow rule that names every protected place on the path lets a write through
    without asking: `Edit(.vscode/**)` opens `.vscode/`, not a `.git/` someone put inside it."""
    names = (subject, *aliases)
    needed = {place for name in names for place in protected_places(name, located)}
    explicit = tuple(
        rule
        for rule in policy.allow
        if rule.specifier is not None and rule_names(rule.path_pattern(cwd), needed, located)
    )
    if any(covered(explicit, tool, name, cwd, "path") for name in names):
        return Decision("allow")
    written = next((alias for alias in aliases if alias != subject), None)
    place = protected_places(guarded, located)[0]
    return protected(tool, subject, written, guarded, place, cwd)


def _written_place(found: Writes, line: str) -> tuple[str, Place] | None:
    """The first path a command writes that is, or may be, a protected place, with it."""
    for path in found.paths:
        places = protected_places(path, found.located)
        if places:
            return path, places[0]
    for text in found.unknown:
        place = unknown_place(text, line, found.located)
        if place is not None:
            return text, place
    return None


def _protected_line(
    policy: PermissionPolicy, tool: str, line: str, hit: tuple[str, Place], cwd: Path
) -> Decision:
    """A command that writes a protected place asks in every mode; only an allow rule naming
    exactly this command line lets it through (a pattern was not written with that place in
    mind, as `Edit(**)` is not for `.git/config`)."""
    exact = line.strip()
    named = (exact, command_literal(exact))  # as written, or as the question suggested it
    if any(rule.names(tool) and rule.specifier in named for rule in policy.allow):
        return Decision("allow")
    return protected_command(tool, exact, hit[0], hit[1], cwd)


def reads_denied(
    policy: PermissionPolicy, *, tool: str, paths: tuple[str, ...] | None, cwd: Path
) -> Decision | None:
    """A denial when a file this call reads is one a deny rule of `tool` names (the tool whose
    rules judge reading: a shell command that reads `.env` is judged as reading it would be),
    a question when an ask rule of `tool` names it; None otherwise. Each path is judged as
    written and where it really points; a call that cannot tell what it reads (`paths` None)
    is refused (or asked about) while any such rule has a pattern."""
    for rules, answer in ((policy.deny, "deny"), (policy.ask, "ask")):
        hit = _read_hit(tuple(r for r in rules if r.names(tool) and r.specifier), paths, cwd)
        if hit is None:
            continue
        path, rule = hit
        if answer == "ask":
            return replace(asked_by_rule(tool, rule), reason=_read_refusal(tool, path, "an ask"))
        return Decision("deny", _read_refusal(tool, path, "a deny"), rule=str(rule))
    return None


def _read_hit(
    rules: tuple[Rule, ...], paths: tuple[str, ...] | None, cwd: Path
) -> tuple[str | None, Rule] | None:
    """The path read (None: unknown) and the rule it meets, if any."""
    if not rules:
        return None
    if paths is None:
        return None, rules[0]
    for path in paths:
        if path.endswith("/**"):
            folder = path[:-3] or "/"
            hit = next((rule for rule in rules if _tree_holds((rule,), folder, cwd)), None)
            if hit is not None:
                return path, hit
            continue
        names: tuple[str, ...] = (resolve_subject(path, cwd), lexical_subject(path, cwd))
        # A directory holds what `dir/**` names: searching it reads those files.
        names += tuple(name.rstrip("/") + "/" for name in names)
        for rule in rules:
            if any(rule.matches(rule.tool, n, cwd, kind="path", fold=True) for n in names):
                return path, rule
    return None


def _read_refusal(tool: str, path: str | None, kind: str) -> str:
    if path is None:
        return (
            f"Permission denied: the files this command reads cannot be told from its words, "
            f"and {kind} rule for {tool} is in force. Name the files plainly instead."
        )
    if path.endswith("/**"):
        return (
            f"Permission denied: a search of everything under {path[:-3] or '/'} would read "
            f"files {kind} rule for {tool} names. Search a narrower folder, or use the search "
            "tool, which leaves those files out."
        )
    return (
        f"Permission to read {path} has been denied by {kind} rule for {tool}; reading it "
        "another way is refused as well."
    )


def _tree_holds(rules: tuple[Rule, ...], folder: str, cwd: Path) -> bool:
    """Whether a rule's pattern names something under `folder` (or the folder itself)."""
    roots = {
        glob_literal(resolve_subject(folder, cwd)).casefold().rstrip("/") + "/",
        glob_literal(lexical_subject(folder, cwd)).casefold().rstrip("/") + "/",
    }
    for rule in rules:
        pattern = rule.path_pattern(cwd).casefold()
        above, any_depth, _ = pattern.partition("/**/")
        for root in roots:
            if (pattern + "/").startswith(root):  # it names something under the folder
                return True
            if any_depth and root.startswith(above.rstrip("/") + "/"):  # a name at any depth
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
