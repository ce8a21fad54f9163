"""Writing a session's transcript: one append-only JSONL file, each record flushed as it is
written (the format is described in `transcript`)."""

from __future__ import annotations

import datetime
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from msgspec import Struct, field
from msgspec.structs import replace

from stayer import json_text
from stayer._version import __version__
from stayer.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    UserMessage,
    is_blank_text,
    message_to_wire,
)

from .scrub import Scrubber


def now() -> str:
    """The time as transcripts write it (UTC, milliseconds, `Z`)."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class TranscriptWriter(Struct):
    """Appends a session's records to its file; `sync` records the conversation as it stands."""

    path: Path
    session_id: str
    cwd: str
    git_branch: str | None = None
    scrub: Scrubber = field(default_factory=lambda: Scrubber(()))
    _written: tuple[Message, ...] = ()
    """The conversation as written, in order ..."""
    _ids: list[str] = field(default_factory=list[str])
    """... and the uuid of each message's record."""
    _file: IO[str] | None = None
    mode: Callable[[], str] | None = None
    """The session's permission mode now, put on every record (as Claude Code puts it on its
    prompts' records), so a resumed session knows the mode it was left in."""
    failure: str | None = None
    """Why the file could not be written (a full disk, say): the session goes on rather than
    failing, says so once, and the next sync writes what was left out."""

    def go_on_from(self, messages: Sequence[Message], ids: Sequence[str]) -> None:
        """Continue a chain already in the file: `messages`, whose records are `ids`."""
        if len(messages) != len(ids):
            raise ValueError(f"{len(messages)} messages but {len(ids)} record ids")
        self._written, self._ids = tuple(messages), list(ids)

    def sync(self, messages: Sequence[Message]) -> None:
        """Write the messages of `messages` not yet in the file, hanging them off the longest
        prefix already written (a rewritten history starts a new branch)."""
        messages = tuple(messages)
        done = self._shared(messages)
        grown = self._grown(messages, done)
        del self._ids[done + (grown is not None) :]
        try:
            if grown is not None:  # only its new blocks, in a record hanging off its start
                # Only new blocks are written: a record of no content would be refused (by
                # Claude Code reading the file too), so the answer keeps the usage it had
                # when its first call started.
                if grown.content:
                    record_id = str(uuid.uuid4())
                    self._write(_message_record(grown), record_id, self._ids[done])
                    self._ids[done] = record_id
                done += 1
            for message in messages[done:]:
                parent = self._ids[-1] if self._ids else None
                record_id = str(uuid.uuid4())
                self._write(_message_record(message), record_id, parent)
                self._ids.append(record_id)
                done += 1
        except OSError as error:
            self._fail(error)
        finally:
            # the objects just given, so the next sync finds them by identity
            self._written = messages[:done]

    def _shared(self, messages: tuple[Message, ...]) -> int:
        """How many messages `messages` and what was written begin with alike.

        The loop calls `sync` twice a turn with the whole conversation, nearly always what was
        written plus a message, the same objects. Comparing the tuples is one pass in C that
        stops at the first difference and calls `==` only for objects that are not the same
        (a few nanoseconds a message, not a Python step each: about 15 µs at 2,000 messages).
        Checking only the last message would be faster but wrong: clearing old tool output
        replaces messages far back and keeps the newest ones.
        """
        written = self._written
        if messages[: len(written)] == written:
            return len(written)
        for index, (before, now) in enumerate(zip(written, messages, strict=False)):
            if before is not now and before != now:
                return index
        return min(len(written), len(messages))

    def _grown(self, messages: tuple[Message, ...], done: int) -> AssistantMessage | None:
        """The blocks an answer gained since it was written as it streamed (its calls start
        before it ends, and are on record first), when `messages[done]` is that answer grown;
        written as a further record of the same message, which is how Claude Code writes
        answers, so a reader joins them back into one."""
        if done != len(self._written) - 1 or done >= len(messages):
            return None
        before, now = self._written[done], messages[done]
        if not (isinstance(before, AssistantMessage) and isinstance(now, AssistantMessage)):
            return None
        if not before.id or before.id != now.id:
            return None
        # The answer on record left out its blank text (the API refuses it), which the whole
        # answer may still hold: compare what is not blank.
        shown = [i for i, block in enumerate(now.content) if not is_blank_text(block)]
        size = len(before.content)
        if len(shown) < size or [now.content[i] for i in shown[:size]] != list(before.content):
            return None
        return replace(now, content=now.content[shown[size - 1] + 1 if size else 0 :])

    def result(self, result: ToolResultBlock) -> None:
        """One call's result, the moment the call finishes (as the model will see it): a record
        of its own hanging off the answer that made the call, beside the chain, so a process
        killed before its round ends keeps it. The round's message, written when the round
        ends, hangs off the same answer and answers the call again; a reader takes that one
        then, and these only while no record answers their calls (`transcript_read`)."""
        answer = self._written[-1] if self._written else None
        if not isinstance(answer, AssistantMessage) or not any(
            call.id == result.tool_use_id for call in answer.tool_uses
        ):
            return  # its call is not on record (a write failed): the round writes it
        try:
            record = _message_record(UserMessage((result,)))
            self._write(record, str(uuid.uuid4()), self._ids[-1])
        except OSError as error:
            self._fail(error)

    def event(self, subtype: str, **fields: Any) -> None:
        """A `system` record beside the chain: a compaction, a model switch, an interruption."""
        parent = self._ids[-1] if self._ids else None
        try:
            record = {"type": "system", "subtype": subtype, **fields}
            self._write(record, str(uuid.uuid4()), parent)
        except OSError as error:
            self._fail(error)

    def _fail(self, error: OSError) -> None:
        self.failure = self.failure or (
            f"cannot write the transcript {self.path} ({error.strerror or error}); what could "
            "not be written is tried again at the next step"
        )
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: dict[str, Any], record_id: str, parent: str | None) -> None:
        full = {
            **record,
            "uuid": record_id,
            "parentUuid": parent,
            "sessionId": self.session_id,
            "timestamp": now(),
            "cwd": self.cwd,
            "gitBranch": self.git_branch,
            "version": __version__,
            "entrypoint": "stayer",
        }
        if self.mode is not None:
            full["permissionMode"] = self.mode()
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = open(fd, "a", encoding="utf-8")  # noqa: SIM115 (held open for the session)
            if _ends_mid_line(self.path):
                # a process killed mid-write left a torn line: end it, or the first record of
                # this one would be glued to it and lost with it
                self._file.write("\n")
        line = json_text.dumps(
            self.scrub.record(full) if self.scrub.secrets else full, separators=None
        )
        self._file.write(line + "\n")
        self._file.flush()


def _ends_mid_line(path: Path) -> bool:
    with path.open("rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return False
        file.seek(-1, os.SEEK_END)
        return file.read(1) != b"\n"


def _message_record(message: Message) -> dict[str, Any]:
    return {"type": message.role, "message": message_to_wire(message)}
