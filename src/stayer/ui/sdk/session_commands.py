"""User messages that are the session's own commands (`stayer.ui.session_commands`), carried
out by the driver as Claude Code does with them in stream-json input: `/clear` starts the
conversation over (a `system` `conversation_reset` line names the new session), `/compact
[instructions]` summarises it (its `compact_boundary` line as ever). Each still gets exactly
one `result`: a success, or an error saying why it could not be done (nothing to compact yet,
say).
"""

from __future__ import annotations

import uuid

from stayer.driver import Clear, Driver
from stayer.ui.session_commands import SessionCommand

from .output import SdkOutput


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
