"""/permissions: the mode and rules in force, and adding or removing a rule.

`/permissions` lists them; `/permissions allow|ask|deny RULE` adds one and
`/permissions remove RULE` takes one away, each in force at once and saved in the project's
`.stayer/settings.local.json` (the session does both: `Session.add_rule`, `remove_rule`). A
rule that does not parse is the session's one line. Deny still wins over any allow added here.
"""

from __future__ import annotations

from typing import Literal, cast, get_args

from stayer.permissions import PermissionPolicy, Rule
from stayer.session.session import Session
from stayer.tools.names import WEB_FETCH
from stayer.tools.preapproved import PREAPPROVED_HOSTS

from .commands_entry import Command
from .surface import Repl

RuleKind = Literal["allow", "ask", "deny"]
KINDS: tuple[RuleKind, ...] = get_args(RuleKind)
SAVED_IN = ".stayer/settings.local.json"
USAGE = (
    "/permissions lists the rules; /permissions allow RULE, /permissions ask RULE or "
    "/permissions deny RULE adds one (saved in .stayer/settings.local.json), "
    "/permissions remove RULE takes one away. A rule is Tool or Tool(pattern), "
    "e.g. Bash(npm test:*)"
)


async def _permissions(repl: Repl, argument: str) -> None:
    if not argument:
        repl.say(listing(repl.session))
        return
    verb, *rest = argument.split(maxsplit=1)
    verb, rule = verb.lower(), rest[0].strip() if rest else ""
    if verb not in (*KINDS, "remove") or not rule:
        repl.say(USAGE)
        return
    edits = repl.session
    if verb == "remove":
        if edits.remove_rule(rule, save=True):
            repl.say(
                f"Removed {rule}: it no longer applies (nor is it in {SAVED_IN}; another "
                "settings file that lists it still does for later sessions)"
            )
        else:
            repl.say(f"No rule {rule} to remove; /permissions lists the rules in force")
        return
    kind = cast(RuleKind, verb)
    edits.add_rule(kind, rule, save=True)
    repl.say(f"Added {kind} rule {rule}: it applies now and is saved in {SAVED_IN}")


def listing(session: Session) -> str:
    """The mode and each kind's rules, as /permissions shows them."""
    policy = session.setup.permissions.policy
    written = session.setup.resolved.policy if session.setup.resolved else None
    lines = [f"Permission mode: {policy.mode} (Shift+Tab switches)"]
    sites = {str(rule) for rule in policy.allow if _preapproved(rule)}
    for kind in KINDS:
        rules: list[str] = []
        for rule in getattr(policy, kind):
            if kind == "allow" and _preapproved(rule) and not _written(rule, written):
                continue  # the session's own list: one line below says what it is
            if str(rule) not in rules:
                rules.append(str(rule))
        lines.append(f"{kind.capitalize()}:")
        lines += [f"  {rule}" for rule in rules] or ["  none"]
    if sites:
        lines.append(
            f"WebFetch also reaches {len(sites)} documentation sites without asking "
            "(STAYER_NO_PREAPPROVED_HOSTS=1 turns that off)"
        )
    lines.append("Change: /permissions allow|ask|deny RULE, /permissions remove RULE")
    return "\n".join(lines)


def _preapproved(rule: Rule) -> bool:
    """Whether `rule` is one the session made for a documentation site it approves itself."""
    spec = rule.specifier or ""
    return rule.tool == WEB_FETCH and spec.removeprefix("domain:") in PREAPPROVED_HOSTS


def _written(rule: Rule, policy: PermissionPolicy | None) -> bool:
    """Whether a settings file or a flag gave `rule` (not the session's own list)."""
    return policy is not None and rule in policy.allow


permissions_command = Command(
    "permissions",
    "list the permission rules, or add or remove one",
    _permissions,
    argument_hint="[allow|ask|deny|remove RULE]",
    while_running=True,
)
