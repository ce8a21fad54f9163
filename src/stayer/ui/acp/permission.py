"""A permission question put to the editor (`session/request_permission`), and its answer as
a `Decision`.

The options are allow once, allow always (only when the policy suggested a rule it may keep,
the REPL's "don't ask again"; chosen, the rule holds for this session: nothing is written to
the project's settings from an editor's click) and reject. Anything else the editor answers
(`cancelled`, an option it was not offered) is a rejection.
"""

from __future__ import annotations

from acp import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from stayer.events import PermissionRequested
from stayer.permissions import Decision
from stayer.session.session import Session
from stayer.ui.repl.dialogs import kept_rule

from .updates import Translator

ALLOW, ALWAYS, REJECT = "allow", "allow_always", "reject"


def options_for(request: PermissionRequested) -> list[PermissionOption]:
    """What the editor may answer `request` with; see the module."""
    options = [PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once")]
    rule = kept_rule(request)
    if rule is not None:
        options.append(
            PermissionOption(option_id=ALWAYS, name=f"Always allow {rule}", kind="allow_always")
        )
    options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    return options


async def ask(
    client: Client, session: Session, request: PermissionRequested, calls: Translator
) -> Decision:
    """Ask the editor about `request` and turn its answer into a decision (an "always" adds
    the session rule first). Raises what the connection raises (the caller denies then)."""
    announced = calls.announce(
        request.tool_use_id, request.name, request.input, "pending", request.agent
    )
    tool_call = ToolCallUpdate(
        tool_call_id=request.tool_use_id,
        title=announced.title,
        kind=announced.kind,
        status="pending",
        locations=announced.locations,
        content=announced.content,
        raw_input=request.input,
    )
    options = options_for(request)
    response = await client.request_permission(
        session_id=session.session_id, tool_call=tool_call, options=options
    )
    outcome = response.outcome
    chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else None
    if chosen not in {option.option_id for option in options}:
        chosen = None  # cancelled, or an option this question did not offer
    if chosen == ALWAYS:
        rule = kept_rule(request)
        if rule is not None:
            session.add_rule("allow", rule, save=False)
        return Decision("allow", by="user")
    if chosen == ALLOW:
        return Decision("allow", by="user")
    return Decision("deny", "the user rejected this call in the editor", by="user")
