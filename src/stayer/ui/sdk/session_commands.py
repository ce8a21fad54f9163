"""User messages that are the session's own commands, carried out by the driver as Claude Code
does with them in stream-json input: `/clear` starts the conversation over (a `system`
`conversation_reset` line names the new session), `/compact [instructions]` summarises it
(its `compact_boundary` line as ever). Each still gets exactly one `result`: a success, or an
error saying why it could not be done (nothing to compact yet, say). Any other `/name args`
goes to the session, which expands custom commands and skills.
"""

from __future__ import annotations

import uuid

from stayer.driver import Clear, Compact, Driver
from stayer.messages import TextBlock

from .frames import UserInput
from .output import SdkOutput

SessionCommand = Clear | Compact


def session_command(message: UserInput) -> SessionCommand | None:
    """The command `message` is (`/clear`, `/compact ...`), or None for any other message."""
    prompt = message.prompt
    if not isinstance(prompt, str):
        if len(prompt) != 1 or not isinstance(prompt[0], TextBlock):
            return None
        prompt = prompt[0].text
    name, _, rest = prompt.strip().partition(" ")
    if name == "/clear" and not rest.strip():
        return Clear()
    if name == "/compact":
        return Compact(rest.strip() or None)
    return None


async def carry_out(driver: Driver, command: SessionCommand, output: SdkOutput) -> None:
    """Do `command` with the driver (no run is going) and write its one `result`."""
    errors = len(driver.errors)
    await driver.carry_out(command)
    await driver.settled()
    failed = driver.errors[errors:]
    if failed:
        output.error_result(failed[0])
        return
    session_id = driver.session.session_id
    if isinstance(command, Clear):
        output.writer.session_id = session_id
        output.frame(
            {
                "type": "system",
                "subtype": "conversation_reset",
                "new_conversation_id": session_id,
                "uuid": str(uuid.uuid4()),
                "session_id": session_id,
            }
        )
    output.done_result("")
