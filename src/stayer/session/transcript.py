"""Transcripts on disk: one append-only JSONL file per session, and reading one back.

`~/.stayer/projects/<folder-slug>/<session-id>.jsonl` (see `paths`). Each message of the
conversation is one record, flushed as it is written, so a killed process loses at most the
record being written. Records chain by `parentUuid`, as Claude Code's do: when the conversation
is rewritten (a compaction, a dropped answer), the new records hang off the last one still
shared, and the conversation the model last saw is the chain from the newest message record
back to its root. Compaction boundaries, model switches and interruptions are `system`
records beside the chain. Secrets the user passed in the environment never reach the file.

Reading follows the same chain over every record that has a `uuid`, so Claude Code's own files
(one assistant record per content block, attachments in the chain) load as well; records that
are not messages are counted and skipped, and a torn line (a crash mid-write) is skipped with a
warning, never an error.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from stayer._version import __version__
from stayer.messages import (
    AssistantMessage,
    Message,
    message_from_wire,
    message_to_wire,
)

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
MIN_SECRET_CHARS = 8


def now() -> str:
    """The time as transcripts write it (UTC, milliseconds, `Z`)."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@dataclass(frozen=True)
class Scrubber:
    """Replaces the values of secret-looking environment variables with their names."""

    secrets: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, *envs: Mapping[str, str]) -> Scrubber:
        found = {
            value: name
            for env in envs
            for name, value in env.items()
            if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS
        }
        # longest first, so a secret that contains another is replaced whole
        ordered = sorted(found.items(), key=lambda item: -len(item[0]))
        return cls(tuple((value, name) for value, name in ordered))

    def __call__(self, line: str) -> str:
        for value, name in self.secrets:
            escaped = json.dumps(value)[1:-1]
            for form in {value, escaped}:
                line = line.replace(form, f"[{name} redacted]")
        return line


@dataclass
class TranscriptWriter:
    """Appends a session's records to its file; `sync` records the conversation as it stands."""

    path: Path
    session_id: str
    cwd: str
    git_branch: str | None = None
    scrub: Scrubber = field(default_factory=lambda: Scrubber(()))
    chain: list[tuple[Message, str]] = field(default_factory=list[tuple[Message, str]])
    """The conversation as written: each message and its record's uuid."""
    _file: IO[str] | None = None

    def sync(self, messages: Sequence[Message]) -> None:
        """Write the messages of `messages` not yet in the file, hanging them off the longest
        prefix already written (a rewritten history starts a new branch)."""
        shared = 0
        for (written, _), message in zip(self.chain, messages, strict=False):
            if written is not message and written != message:
                break
            shared += 1
        del self.chain[shared:]
        for message in messages[shared:]:
            parent = self.chain[-1][1] if self.chain else None
            record_id = str(uuid.uuid4())
            self._write(_message_record(message), record_id, parent)
            self.chain.append((message, record_id))

    def event(self, subtype: str, **fields: Any) -> None:
        """A `system` record beside the chain: a compaction, a model switch, an interruption."""
        parent = self.chain[-1][1] if self.chain else None
        self._write({"type": "system", "subtype": subtype, **fields}, str(uuid.uuid4()), parent)

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
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = open(fd, "a", encoding="utf-8")  # noqa: SIM115 (held open for the session)
        self._file.write(self.scrub(json.dumps(full, ensure_ascii=False)) + "\n")
        self._file.flush()


def _message_record(message: Message) -> dict[str, Any]:
    return {"type": message.role, "message": message_to_wire(message)}


@dataclass(frozen=True, slots=True)
class Loaded:
    """A conversation read back, with its chain, what was skipped and the warnings to show."""

    messages: tuple[Message, ...]
    chain: tuple[str, ...]
    """The uuid of the last record of each message (a writer continues from it)."""
    session_id: str | None
    skipped: int
    warnings: tuple[str, ...]


def load(path: Path) -> Loaded:
    """The conversation the transcript at `path` holds; raises `OSError` if it cannot be read."""
    records, warnings = _records(path)
    by_id = {record["uuid"]: record for record in records if isinstance(record.get("uuid"), str)}
    leaf = next((r for r in reversed(records) if _is_message(r)), None)
    walk: list[dict[str, Any]] = []
    seen: set[str] = set()
    while leaf is not None and leaf["uuid"] not in seen:
        seen.add(leaf["uuid"])
        walk.append(leaf)
        parent = leaf.get("parentUuid")
        leaf = by_id.get(parent) if isinstance(parent, str) else None
    walk.reverse()
    messages, chain, bad = _messages(walk)
    if bad:
        warnings.append(f"{path}: {bad} unreadable message record(s) skipped")
    session_id = next((r.get("sessionId") for r in records if r.get("sessionId")), None)
    skipped = len(records) - sum(1 for r in walk if _is_message(r))
    return Loaded(tuple(messages), tuple(chain), session_id, skipped, tuple(warnings))


def _records(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    records: list[dict[str, Any]] = []
    torn = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            torn += 1
            continue
        if isinstance(record, dict):
            records.append(record)
    warnings = [f"{path}: {torn} torn line(s) skipped (a write was cut short)"] if torn else []
    return records, warnings


def _is_message(record: Mapping[str, Any]) -> bool:
    return (
        record.get("type") in ("user", "assistant")
        and isinstance(record.get("message"), dict)
        and isinstance(record.get("uuid"), str)
        and not record.get("isMeta")
    )


def _messages(walk: list[dict[str, Any]]) -> tuple[list[Message], list[str], int]:
    """The chain's messages; consecutive records of one answer (Claude Code writes one per
    content block) are joined into one message."""
    messages: list[Message] = []
    chain: list[str] = []
    bad = 0
    for record in walk:
        if not _is_message(record):
            continue
        try:
            message = message_from_wire(record["message"])
        except (ValueError, KeyError, TypeError):
            bad += 1
            continue
        last = messages[-1] if messages else None
        if (
            isinstance(message, AssistantMessage)
            and isinstance(last, AssistantMessage)
            and message.id
            and message.id == last.id
        ):
            messages[-1] = AssistantMessage(
                (*last.content, *message.content),
                id=last.id,
                model=last.model,
                stop_reason=message.stop_reason or last.stop_reason,
                usage=message.usage,
            )
            chain[-1] = record["uuid"]
            continue
        messages.append(message)
        chain.append(record["uuid"])
    return messages, chain, bad


@dataclass(frozen=True, slots=True)
class Summary:
    """One saved session, as `--resume` lists it."""

    session_id: str
    path: Path
    modified: float
    first_prompt: str
    turns: int


def summaries(folder: Path, *, limit: int = 20) -> list[Summary]:
    """The most recent sessions saved in `folder`, newest first."""
    try:
        files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found: list[Summary] = []
    for path in files[:limit]:
        try:
            loaded = load(path)
        except OSError:
            continue
        first = next((m for m in loaded.messages if not isinstance(m, AssistantMessage)), None)
        prompt = " ".join(getattr(b, "text", "") for b in first.content) if first else ""
        turns = sum(1 for m in loaded.messages if isinstance(m, AssistantMessage))
        found.append(Summary(path.stem, path, path.stat().st_mtime, prompt.strip(), turns))
    return found
