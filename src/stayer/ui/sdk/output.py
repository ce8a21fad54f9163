"""Standard output of an SDK session: one JSON object a line, control frames and the session's
events alike, in the stream-json printer's shapes (`ui.stream_json`).

Everything is written from the event loop's thread, a whole line at a time and flushed, so a
control reply never lands inside an event's line. A reader that goes away (the SDK's process
died) is noticed as `-p` notices it (`closed_output`) and told to `on_gone`.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from stayer.events import Event, Finished, SessionStarted
from stayer.messages import block_to_wire
from stayer.ui.closed_output import GuardedOutput
from stayer.ui.error_result import error_result_line, result_fields
from stayer.ui.stream_json import Line, StreamJsonWriter, dumps

from .frames import UserInput


class SdkOutput:
    """The session's stdout (see the module); also the driver's sink."""

    def __init__(
        self,
        *,
        include_partial: bool,
        include_hooks: bool,
        api_key_source: str,
        on_gone: Callable[[], None],
        out: TextIO = sys.stdout,
    ) -> None:
        self.writer = StreamJsonWriter(
            include_partial=include_partial,
            api_key_source=api_key_source,
            include_hooks=include_hooks,
        )
        self.out = out
        self._output = GuardedOutput(out, on_gone)
        self.finished: Finished | None = None
        """The last run's end, until `take_finished`."""
        self.last_error = False
        """Whether the last `result` written was an error."""
        self._replay: Line | None = None

    @property
    def gone(self) -> bool:
        """Whether standard output's reader has gone away."""
        return self._output.gone

    @property
    def status(self) -> int:
        """The exit status once `gone`: 141 for a reader gone, 1 for a write that failed."""
        return self._output.status

    def reader_gone(self) -> None:
        """Standard output's reader went away (see `closed_output.watch_reader`)."""
        self._output.reader_gone()

    def frame(self, line: Mapping[str, Any]) -> None:
        """Write one frame (a control request or reply, say) as one line."""
        self._output.write(dumps(dict(line)) + "\n")
        self._output.flush()

    async def __call__(self, event: Event) -> None:
        lines = self.writer.lines(event)
        if self._replay is not None:  # after the init line, before the run's own
            lines.insert(1 if isinstance(event, SessionStarted) else 0, self._replay)
            self._replay = None
        for line in lines:
            self._output.write(dumps(line) + "\n")
        self._output.flush()
        if isinstance(event, Finished):
            self.finished = event
            self.last_error = event.is_error

    def take_finished(self) -> Finished | None:
        """The end of the run since the last call, if one ended."""
        finished, self.finished = self.finished, None
        return finished

    def error_result(self, message: str) -> None:
        """A `result` for a user message that got no run (it was malformed, or could not be
        sent): an error, with `message`."""
        line = error_result_line(message, session_id=self.writer.session_id or None)
        if self._replay is not None:
            self._output.write(dumps(self._replay) + "\n")
            self._replay = None
        self._output.write(line + "\n")
        self._output.flush()
        self.last_error = True

    def done_result(self, message: str) -> None:
        """A success `result` for a user message the front end carried out itself (`/clear`,
        `/compact`), with no run of its own."""
        line = result_fields(message, session_id=self.writer.session_id or None, is_error=False)
        if self._replay is not None:
            self._output.write(dumps(self._replay) + "\n")
            self._replay = None
        self._output.write(dumps(line) + "\n")
        self._output.flush()
        self.last_error = False

    def replay(self, message: UserInput) -> None:
        """Echo a user message as its run takes it (`--replay-user-messages`): printed with
        the run's first line (after the init line, when the run has it)."""
        content: Any = (
            message.prompt
            if isinstance(message.prompt, str)
            else [block_to_wire(block) for block in message.prompt]
        )
        self._replay = {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
            "session_id": self.writer.session_id,
            "uuid": message.uuid or str(uuid.uuid4()),
            "isReplay": True,
        }
