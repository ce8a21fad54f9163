"""The `available_commands_update` an editor builds its "/" menu from: the session's own
commands (`/compact`, `/clear`; `stayer.ui.session_commands`) and the custom commands and
skills a user may invoke, each with its description and argument hint.
"""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate
from acp.schema import UnstructuredCommandInput as HintInput

from stayer.session.session import Session
from stayer.ui.session_commands import BUILT_INS


def commands_update(session: Session) -> AvailableCommandsUpdate:
    """The commands `session` takes as a prompt's "/name args"."""
    listed = [_command(name, description, hint) for name, description, hint in BUILT_INS]
    own = {name for name, _, _ in BUILT_INS}
    resolved = session.setup.resolved
    skills = () if resolved is None else resolved.catalog.skills
    listed += [
        _command(skill.name, skill.description or skill.name, skill.argument_hint)
        for skill in skills
        if skill.user_invocable and skill.name not in own  # the session's own come first
    ]
    return AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=listed
    )


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    given = AvailableCommandInput(root=HintInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)
