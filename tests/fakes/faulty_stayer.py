"""`python -m tests.fakes.faulty_stayer ARGS`: stayer's command line with one fault of its own
planted, for tests of what a front end does when a run breaks on a bug rather than a
`StayerError`: recording an answer whose text holds `BREAK HERE` raises `RuntimeError`
(as a transcript write that cannot encode its text once did)."""

from __future__ import annotations

from stayer.events import Event, MessageCompleted
from stayer.messages import TextBlock
from stayer.session import session as session_module
from stayer.session.transcript import TranscriptWriter

MARKER = "BREAK HERE"

_record = getattr(session_module, "record")  # noqa: B009 - not exported: planted over


def _faulty(writer: TranscriptWriter, event: Event) -> None:
    if isinstance(event, MessageCompleted) and any(
        isinstance(block, TextBlock) and MARKER in block.text for block in event.message.content
    ):
        raise RuntimeError("a planted fault")
    _record(writer, event)


if __name__ == "__main__":  # planted only in the process run so, never in a test importing it
    from stayer.cli import main

    setattr(session_module, "record", _faulty)  # noqa: B010
    main()
