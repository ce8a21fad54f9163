"""Transcripts on disk: one append-only JSONL file per session, and reading one back.

`~/.stayer/projects/<folder-slug>/<session-id>.jsonl` (see `paths`). Each message of the
conversation is one record, flushed as it is written, so a killed process loses at most the
record being written. Records chain by `parentUuid`, as Claude Code's do: when the conversation
is rewritten (a compaction, a dropped answer), the new records hang off the last one still
shared, and the conversation the model last saw is the chain from the newest message record
back to its root. Compaction boundaries, model switches and interruptions are `system`
records beside the chain. The values of environment variables whose names say they are secret
(`…_KEY`, `…_TOKEN`, `…_SECRET`, `…PASSWORD`, `…_PWD`, …), and passwords inside URLs in the
environment, are replaced by the variable's name (thinking blocks excepted: their signature
covers their text).

Reading follows the same chain over every record that has a `uuid`, so Claude Code's own files
(one record per content block of an answer and per tool result, parallel calls written as a fan
beside the chain, attachments in it) load as well; records that are not messages are counted
and skipped, and a torn line (a crash mid-write) is skipped with a warning, never an error. A
writer that opens a file ending in a torn line ends that line first.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from stayer._version import __version__
from stayer.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    UserMessage,
    is_blank_text,
    message_from_wire,
    message_to_wire,
)

_SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|PASS|CREDENTIALS?|AUTH|AUTH_TOKEN)(_|$)",
    re.IGNORECASE,
)
"""Names whose values are secrets: a whole part of the name (`GIT_AUTHOR_NAME` is not one)."""
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/:@\s]+:([^/@\s]+)@", re.IGNORECASE)
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
        found: dict[str, str] = {}
        for env in envs:
            for name, value in env.items():
                if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS:
                    found[value] = name
                password = _URL_PASSWORD.match(value)
                if password and len(password.group(1)) >= 4:  # the password part of a URL
                    found[password.group(1)] = f"{name} password"
        # longest first, so a secret that contains another is replaced whole
        ordered = sorted(found.items(), key=lambda item: -len(item[0]))
        return cls(tuple((value, name) for value, name in ordered))

    def __call__(self, text: str) -> str:
        for value, name in self.secrets:
            text = text.replace(value, f"[{name} redacted]")
        return text

    def record(self, value: Any) -> Any:
        """`value` (a record or part of one) with every string scrubbed, except inside thinking
        blocks: their signature covers their text, and a changed one is refused on resume."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.record(item) for item in value]
        if isinstance(value, dict):
            if value.get("type") in ("thinking", "redacted_thinking"):
                return value
            return {key: self.record(item) for key, item in value.items()}
        return value


@dataclass
class TranscriptWriter:
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
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = open(fd, "a", encoding="utf-8")  # noqa: SIM115 (held open for the session)
            if _ends_mid_line(self.path):
                # a process killed mid-write left a torn line: end it, or the first record of
                # this one would be glued to it and lost with it
                self._file.write("\n")
        line = json.dumps(
            self.scrub.record(full) if self.scrub.secrets else full, ensure_ascii=False
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
    newest, gaps = _chain_to_newest(records)
    if gaps:
        warnings.append(
            f"{path}: {gaps} record(s) point to a parent the file does not hold; the "
            "conversation was joined across the gap in file order"
        )
    walk = _with_parallel_calls(newest, records)
    messages, chain, bad = _messages(walk)
    if bad:
        warnings.append(f"{path}: {bad} unreadable message record(s) skipped")
    session_id = next((r.get("sessionId") for r in records if r.get("sessionId")), None)
    skipped = len(records) - sum(1 for r in walk if _is_message(r))
    return Loaded(tuple(messages), tuple(chain), session_id, skipped, tuple(warnings))


def _chain_to_newest(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The records from the root to the newest message record, following `parentUuid`, and
    how many gaps were crossed: a parent the file lacks (a torn or lost line) is replaced by
    the record before it in the file, so a lost line costs that line, not all that came before.
    """
    by_id = {record["uuid"]: record for record in records if isinstance(record.get("uuid"), str)}
    position = {id(record): index for index, record in enumerate(records)}
    leaf = next((r for r in reversed(records) if _is_message(r)), None)
    walk: list[dict[str, Any]] = []
    seen: set[str] = set()
    gaps = 0
    while leaf is not None and leaf["uuid"] not in seen:
        seen.add(leaf["uuid"])
        walk.append(leaf)
        parent = leaf.get("parentUuid")
        if not isinstance(parent, str):
            break
        found = by_id.get(parent)
        if found is None:
            gaps += 1
            found = _before(records, position[id(leaf)])
        leaf = found
    walk.reverse()
    return walk, gaps


def _before(records: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    """The nearest record with a uuid before `index` in the file."""
    found: dict[str, Any] | None = None
    for record in reversed(records[:index]):
        if isinstance(record.get("uuid"), str):
            found = record
            break
    return found


def _with_parallel_calls(
    walk: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`walk` with the records of its answers' parallel calls that lie beside it, in file order.

    Claude Code writes the calls of one answer, and their results, as a fan rather than a line:
    a second call's record hangs off the first call's, and the first call's result hangs off
    the first call too, so the chain to the newest record passes through some of them only.
    The rest are gathered back: the other records of an answer on the chain, and the results
    of its calls that the chain lacks (each call answered once).
    """
    on_walk = {id(record) for record in walk}
    off_walk = [record for record in records if id(record) not in on_walk]
    if not off_walk:  # a file that is one line of records (stayer's own, mostly)
        return walk
    answers = {_answer_id(record) for record in walk} - {""}
    answered = {result for record in walk for result in _answered_ids(record)}
    calls = {call for record in walk for call in _call_ids(record)}
    # Only what hangs off the chain (or off what was gathered) is part of its fan: an old
    # branch a rewrite left behind (a compaction, say) may hold the same answer, but hangs off
    # messages the conversation no longer has.
    attached = {record["uuid"] for record in walk if isinstance(record.get("uuid"), str)}
    beside: list[dict[str, Any]] = []
    for record in off_walk:
        if record.get("parentUuid") not in attached:
            continue
        results = _result_ids(record)
        if _answer_id(record) in answers:
            calls |= set(_call_ids(record))
        elif not (results and results <= calls - answered):
            continue
        answered |= results
        beside.append(record)
        if isinstance(record.get("uuid"), str):
            attached.add(record["uuid"])
    if not beside:
        return walk
    position = {id(record): index for index, record in enumerate(records)}
    return sorted([*walk, *beside], key=lambda record: position[id(record)])


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


def _answer_id(record: Mapping[str, Any]) -> str:
    """The API message id of an assistant record ("" for any other record)."""
    if record.get("type") != "assistant" or not _is_message(record):
        return ""
    answer = record["message"].get("id")
    return answer if isinstance(answer, str) else ""


def _blocks(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = record["message"].get("content") if _is_message(record) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _call_ids(record: Mapping[str, Any]) -> set[str]:
    return {str(b.get("id")) for b in _blocks(record) if b.get("type") == "tool_use"}


def _answered_ids(record: Mapping[str, Any]) -> set[str]:
    """The calls a user record answers."""
    if record.get("type") != "user":
        return set()
    return {str(b.get("tool_use_id")) for b in _blocks(record) if b.get("type") == "tool_result"}


def _result_ids(record: Mapping[str, Any]) -> frozenset[str]:
    """The calls a user record answers, if it holds nothing but tool results."""
    blocks = _blocks(record)
    if any(block.get("type") != "tool_result" for block in blocks):
        return frozenset()
    return frozenset(_answered_ids(record))


def _messages(walk: list[dict[str, Any]]) -> tuple[list[Message], list[str], int]:
    """The chain's messages. Claude Code writes one record per content block of an answer and
    one per tool result; the records of one answer are joined into one message, and so are the
    results of its calls."""
    messages: list[Message] = []
    chain: list[str] = []
    bad = 0
    for record in walk:
        if not _is_message(record):
            continue
        try:
            message = message_from_wire(record["message"])
        except Exception:  # a record that is not what a message looks like, however it fails
            bad += 1
            continue
        at = _joins(messages, chain, message, record.get("parentUuid"))
        if at is None:
            messages.append(message)
            chain.append(record["uuid"])
            continue
        messages[at] = _joined(messages[at], message)
        chain[at] = record["uuid"]
    return messages, chain, bad


def _joins(
    messages: list[Message], chain: list[str], message: Message, parent: object
) -> int | None:
    """Where `message` is the next part of a message already read, if it is one: a further
    result of the latest calls, or a block of the latest answer. A block may come after a
    result of the same answer (tools start while the answer streams); it then hangs off the
    answer's previous block, which tells it from a new answer that reuses the id (some servers
    give every answer the same one)."""
    last = messages[-1] if messages else None
    if isinstance(message, UserMessage):
        both = isinstance(last, UserMessage) and _only_results(last) and _only_results(message)
        return len(messages) - 1 if both else None
    if not message.id:
        return None
    if isinstance(last, AssistantMessage):
        return len(messages) - 1 if last.id == message.id else None
    earlier = messages[-2] if len(messages) > 1 else None
    if isinstance(earlier, AssistantMessage) and last is not None and _only_results(last):
        return len(messages) - 2 if earlier.id == message.id and parent == chain[-2] else None
    return None


def _only_results(message: Message) -> bool:
    return bool(message.content) and all(isinstance(b, ToolResultBlock) for b in message.content)


def _joined(first: Message, then: Message) -> Message:
    if isinstance(first, AssistantMessage) and isinstance(then, AssistantMessage):
        return AssistantMessage(
            (*first.content, *then.content),
            id=first.id,
            model=first.model,
            stop_reason=then.stop_reason or first.stop_reason,
            usage=then.usage,
        )
    return UserMessage((*first.content, *then.content))


@dataclass(frozen=True, slots=True)
class Summary:
    """One saved session, as `--resume` lists it."""

    session_id: str
    path: Path
    modified: float
    first_prompt: str
    turns: int


def summaries(folder: Path, *, cwd: Path | None, limit: int = 20) -> list[Summary]:
    """The most recent sessions saved in `folder`, newest first; with `cwd`, only those begun
    there (another directory can share the folder's name) or that do not say where."""
    try:
        files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found: list[Summary] = []
    for path in files:
        if len(found) == limit:
            break
        try:
            recorded = recorded_cwd(path)
            if cwd is not None and recorded is not None and Path(recorded) != cwd:
                continue
            loaded = load(path)
        except (OSError, ValueError):  # one unreadable file does not hide the others
            continue
        first = next((m for m in loaded.messages if not isinstance(m, AssistantMessage)), None)
        prompt = " ".join(getattr(b, "text", "") for b in first.content) if first else ""
        turns = sum(1 for m in loaded.messages if isinstance(m, AssistantMessage))
        found.append(Summary(path.stem, path, path.stat().st_mtime, prompt.strip(), turns))
    return found


def recorded_cwd(path: Path) -> str | None:
    """The working directory the session at `path` began in: the `cwd` of its first record
    that has one (None if none does); raises `OSError` if the file cannot be read."""
    with path.open(encoding="utf-8", errors="replace") as file:
        for line in file:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("cwd"), str):
                return str(record["cwd"])
    return None
