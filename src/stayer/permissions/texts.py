"""The decisions that need words: why a call asks, and what the model reads if nobody answers.

An ask's `reason` is the text of its denial when nobody is there to answer (a headless run, or
a decider that failed), so each says how the user can allow the call (a flag or rule) and
tells the model not to work around the refusal.
"""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from stayer.tools.base import SubjectKind

from .matching import rule_path
from .policy import Decision, PermissionPolicy
from .protected import Place
from .rules import Rule, command_literal

_CARRY_ON = "Carry on with the tools you may use; if this one is essential, stop and say so"


def asked_by_rule(tool: str, rule: Rule) -> Decision:
    """An ask rule covers the call: it asks in every mode."""
    return Decision(
        "ask",
        f"Permission to use {tool} has been denied: the ask rule {rule} says each such call "
        f"needs the user's approval, and nobody is here to give it. {_CARRY_ON} (the user can "
        "approve such calls in an interactive session, or remove the ask rule).",
        rule=str(rule),
        question="rule",
    )


def plan_exit(policy: PermissionPolicy) -> Decision:
    """A call asking for the plan to be accepted: the user decides; accepted, the session goes
    back to the mode it had before plan mode."""
    if policy.mode != "plan":
        return Decision(
            "deny",
            f"There is no plan to accept: the session is not in plan mode (it is in "
            f"{policy.mode} mode). Carry on with the task.",
        )
    return Decision(
        "ask",
        "Nobody is here to accept the plan, so this run stays in plan mode. Give the plan, in "
        "full, as your final answer and stop; the user will read it and decide.",
        mode=policy.after_plan,
        question="plan",
    )


def plan_refusal(tool: str) -> Decision:
    """Plan mode allows only read-only calls until the plan is accepted."""
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: plan mode allows only read-only tools "
        "until the plan is accepted. Finish the plan and present it for approval instead.",
    )


def unattended(
    policy: PermissionPolicy, tool: str, subject: str | None, kind: SubjectKind
) -> Decision:
    """A call no rule or mode allows: it asks; unanswered, it says which flag would allow it."""
    specific = None
    if subject is not None and kind == "command":
        specific = f"{tool}({command_literal(subject.strip())})"
    elif subject is not None and kind == "domain":
        specific = f"{tool}(domain:{subject.lower()})"
    return Decision(
        "ask",
        f"Permission to use {tool} has been denied: nobody is here to approve it in "
        f"{policy.mode} mode. {_CARRY_ON} (the user can allow it with --allowedTools {tool}, "
        "or --permission-mode acceptEdits / bypassPermissions).",
        suggestions=tuple(rule for rule in (specific, tool) if rule),
        question="mode",
    )


def fetch_asked(policy: PermissionPolicy, tool: str, host: str | None) -> Decision:
    """A call that reaches the network, to a host no rule allows: it asks; unanswered, it names
    the rule for that host."""
    if host is None:
        return unattended(policy, tool, host, "domain")
    named = f"{tool}(domain:{host})"
    return Decision(
        "ask",
        f"Permission to use {tool} on {host} has been denied: reaching a site needs the user's "
        f"approval, and nobody is here to give it in {policy.mode} mode. {_CARRY_ON} (the user "
        f'can allow this host with --allowedTools "{named}", or every host with --allowedTools '
        f"{tool}).",
        suggestions=(named, tool),
        question="mode",
    )


def outside_read(
    policy: PermissionPolicy, tool: str, rule_tool: str, paths: tuple[str, ...] | None, cwd: Path
) -> Decision:
    """A read-only call that reads outside the working directories: it asks; unanswered, it
    names the rule (for `rule_tool`, the tool reading is judged as) and the --add-dir to use."""
    roots = ", ".join(str(root) for root in (cwd, *policy.directories))
    if not paths:
        return Decision(
            "ask",
            f"Permission to use {tool} has been denied: which files it reads cannot be told "
            f"from its words, so it may read outside the working directories ({roots}), and "
            f"nobody is here to approve that in {policy.mode} mode. Name the files plainly; "
            f"{_CARRY_ON[0].lower()}{_CARRY_ON[1:]} (the user can allow it with --allowedTools "
            f"{tool}, or --permission-mode bypassPermissions).",
            suggestions=(tool,),
            question="mode",
        )
    first = paths[0]
    folder = first.endswith("/**")
    place = (first[:-3] or "/") if folder else first
    named = f"{rule_tool}({_read_pattern(place, cwd, folder=folder)})"
    what = f"everything under {place}" if folder else place
    more = f" (and {len(paths) - 1} more outside)" if len(paths) > 1 else ""
    add_dir = place if folder else str(Path(place).parent)
    return Decision(
        "ask",
        f"Permission to use {tool} has been denied: it reads {what}{more}, outside the "
        f"working directories ({roots}), and nobody is here to approve that in {policy.mode} "
        f'mode. {_CARRY_ON} (the user can allow it with --allowedTools "{named}", or add '
        f"the directory with --add-dir {add_dir}).",
        suggestions=(named,),
        question="mode",
    )


def _read_pattern(place: str, cwd: Path, *, folder: bool) -> str:
    """How a rule names `place` (everything under it, for a `folder`)."""
    if place == "/":
        return "//**" if folder else "//"
    named = rule_path(place, cwd).removesuffix("/.")  # the home directory itself: `~`
    return named + "/**" if folder else named


def sandbox_offline(tool: str) -> Decision:
    """Under --sandbox without --sandbox-network nothing reaches the network, in any mode."""
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: the session runs under --sandbox without "
        "network access, so nothing may reach the network. Work without it; if it is "
        "essential, stop and say so (the user can run with --sandbox-network).",
    )


def sandbox_bounds(
    tool: str, path: str | None, roots: tuple[Path, ...], tmp: Path | None
) -> Decision:
    """Under --sandbox the file tools stay in the sandbox's places, in any mode."""
    places = f"the working directories ({', '.join(str(root) for root in roots)})"
    if tmp is not None:
        places += f" and the sandbox's temporary folder {tmp} (which is /tmp to the shell)"
    target = "a path it cannot tell" if path is None else path
    hint = ""
    if path is not None and tmp is not None and Path(path).is_relative_to("/tmp"):
        hint = f" What the shell keeps in /tmp/x is at {tmp}/x for the file tools."
    return Decision(
        "deny",
        f"Permission to use {tool} on {target} has been denied: under --sandbox the file tools "
        f"reach only {places}.{hint} Work there; if this file is essential, stop and say so "
        "(the user can add its directory with --add-dir, or run without --sandbox).",
    )


def outside(policy: PermissionPolicy, tool: str, subject: str, cwd: Path) -> Decision:
    """A write outside every working directory: it asks, saying how to widen them."""
    roots = ", ".join(str(root) for root in (cwd, *policy.directories))
    named = f"{tool}({rule_path(subject, cwd)})"
    rule = f'--allowedTools "{named}"'
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
        "ask",
        f"Permission to use {tool} on {subject} has been denied: {why}. Work inside them; if "
        f"this file is essential, stop and say so (the user can {how}).",
        suggestions=(named,),
        question="mode",
    )


def protected(
    tool: str, subject: str, written: str | None, guarded: str, place: Place, cwd: Path
) -> Decision:
    """A write to a protected place asks in every mode, bypassPermissions included."""
    shown = f"{written} (which is {subject})" if written else subject
    named = f"{tool}({rule_path(guarded, cwd)})"
    return Decision(
        "ask",
        f"Permission to use {tool} on {shown} has been denied: {place_name(place, cwd)} is "
        f"protected ({place.why}), so writing it always needs the user's approval, even in "
        "bypassPermissions mode, and nobody is here to give it. Do not try another way to "
        "change it; if the change is needed, stop and say so (the user can allow exactly this "
        f'path with --allowedTools "{named}").',
        suggestions=(named,),
        question="protected",
    )


def protected_command(tool: str, line: str, path: str, place: Place, cwd: Path) -> Decision:
    """A command that writes a protected place asks in every mode, as a file tool's write
    does; the rule it suggests names exactly this command line."""
    named = f"{tool}({command_literal(line)})"
    shown = _short(path, cwd)
    if place.part == path:  # a destination known only when the command runs
        what = f"{shown}, which may be a protected place: {place.why}"
    else:
        what = f"{shown}, and {place_name(place, cwd)} is protected ({place.why})"
    return Decision(
        "ask",
        f"Permission to use {tool} has been denied: this command writes {what}; so it always "
        "needs the user's approval, even in bypassPermissions mode, and nobody is here to "
        "give it. Do not try another way to change it; if the change is needed, stop and say "
        f'so (the user can allow exactly this command with --allowedTools "{named}").',
        suggestions=(named,),
        question="protected",
    )


def place_name(place: Place, cwd: Path) -> str:
    """A protected place as a person reads it: its name, or where it is (relative to the
    working directory, or under `~`)."""
    if not place.located:
        return place.part
    return _short(place.part, cwd)


def _short(path: str, cwd: Path) -> str:
    """`path` relative to the working directory, under `~`, or absolute, keeping a folder's
    trailing `/`."""
    if not path.startswith("/"):
        return path
    tail = "/" if path.endswith("/") and path != "/" else ""
    bare = Path(path.rstrip("/") or "/")
    if bare.is_relative_to(cwd) and bare != cwd:
        return str(bare.relative_to(cwd)) + tail
    home = Path.home()
    if bare.is_relative_to(home) and bare != home:
        return "~/" + str(bare.relative_to(home)) + tail
    return str(bare) + tail


def dont_ask(tool: str, asked: Decision) -> Decision:
    """dontAsk mode never asks: what would ask is denied, saying why it would have asked."""
    return replace(
        asked,
        behavior="deny",
        reason=(
            f"Permission to use {tool} has been denied because the session runs in dontAsk "
            "mode, which refuses whatever would need approval. You may use other tools that "
            f"fit the task, but do not try to get around this denial. {asked.reason}"
        ),
        mode=None,
    )


def history_asked(tool: str, repository: Path) -> Decision:
    """A git call that prints history, in a repository whose history holds a file a rule for
    `tool` forbids reading: a person decides."""
    return Decision(
        "ask",
        f"Permission denied: this git command prints what files hold or held in the history of "
        f"{repository}, and that history holds a file a rule for {tool} forbids reading. "
        "Name the paths it may show after `--` (git log -p -- src/), or ask the user to run it.",
        question="rule",
    )


def written_denied(tool: str, path: str, rule: Rule) -> Decision:
    """A call writes a file an Edit deny rule covers (a command's redirection, say)."""
    return Decision(
        "deny",
        f"Permission to use {tool} has been denied: it writes {path}, which the deny rule "
        f"{rule} covers.",
        rule=str(rule),
    )


def unknown_write_asked(tool: str, written: str, rule: Rule) -> Decision:
    """A call writes somewhere known only as it runs while an Edit deny rule is in force."""
    return Decision(
        "ask",
        f"Permission to use {tool} has been denied: it writes {written}, a file known only when "
        f"it runs, so the deny rule {rule} cannot be checked against it. {_CARRY_ON} (name the "
        "file plainly in the command, or the user can approve it in an interactive session).",
        rule=str(rule),
        question="rule",
    )
