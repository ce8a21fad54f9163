"""Reading a transcript back: the chain from the newest message record to its root, Claude
Code's files included (the format is described in `transcript`), and the list of saved
sessions `--resume` shows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from stayer.messages import (
    JSON,
    AssistantMessage,
    ContentBlock,
    Message,
    ToolResultBlock,
    UserMessage,
    message_from_wire,
)
from stayer.tools.names import TODO_WRITE


class Loaded(Struct, frozen=True):
    """A conversation read back, with its chain, what was skipped and the warnings to show."""

    messages: tuple[Message, ...]
    chain: tuple[str, ...]
    """The uuid of the last record of each message (a writer continues from it)."""
    session_id: str | None
    skipped: int
    warnings: tuple[str, ...]
    permission_mode: str | None = None
    """The permission mode the session was last in, as recorded (not yet checked)."""
    todos: tuple[JSON, ...] | None = None
    """The model's todo list as last recorded (Claude Code's item shape), None if never."""


def load(path: Path) -> Loaded:
    """The conversation the transcript at `path` holds; raises `OSError` if it cannot be read."""
    records, warnings, broken = _records(path)
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
    if broken or gaps or bad:  # a lost answer must not cost the results after it
        from .transcript_damage import calls_in, with_lost_calls  # only a damaged file's

        given = with_lost_calls(messages, chain, [c for line in broken for c in calls_in(line)])
        if given:
            warnings.append(
                f"{path}: {given} tool call(s) whose answer's record was lost were rebuilt "
                "from what was left of it, to keep their results"
            )
    session_id = next((r.get("sessionId") for r in records if r.get("sessionId")), None)
    skipped = len(records) - sum(1 for r in walk if _is_message(r))
    mode = next((r["permissionMode"] for r in reversed(records) if _says_mode(r)), None)
    loaded = Loaded(tuple(messages), tuple(chain), session_id, skipped, tuple(warnings), mode)
    return replace(loaded, todos=_todos(records, messages))


def _says_mode(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("permissionMode"), str)


def _todos(records: list[dict[str, Any]], messages: list[Message]) -> tuple[JSON, ...] | None:
    """The todo list last recorded: stayer's newest `todos` record, else (Claude Code's file)
    the list the last TodoWrite call on the chain was given, if that call did not fail."""
    for record in reversed(records):
        if record.get("type") == "system" and record.get("subtype") == "todos":
            todos = record.get("todos")
            return tuple(todos) if isinstance(todos, list) else None
    failed = {
        block.tool_use_id
        for message in messages
        for block in message.content
        if isinstance(block, ToolResultBlock) and block.is_error
    }
    for message in reversed(messages):
        if not isinstance(message, AssistantMessage):
            continue
        for call in reversed(message.tool_uses):
            todos = call.input.get("todos")
            if call.name == TODO_WRITE and call.id not in failed and isinstance(todos, list):
                return tuple(todos)
    return None


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
        parent = record.get("parentUuid")
        if not isinstance(parent, str) or parent not in attached:  # a file can say anything
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


def _records(path: Path) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The file's records, the warnings for its lines that are not JSON, and those lines."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    records: list[dict[str, Any]] = []
    bad: list[int] = []
    last = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        last = number
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):  # nested past the parser's depth too
            bad.append(number)
            continue
        if isinstance(record, dict):
            records.append(record)
    if not bad:
        return records, [], []
    from .transcript_damage import bad_lines_warnings  # only a damaged file's

    return records, bad_lines_warnings(path, bad, last), [lines[n - 1] for n in bad]


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
    ours: set[int] = set()
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
        if record.get("entrypoint") == "stayer":  # results written one by one as calls ended
            ours.add(at)
    return (
        [_in_call_order(messages, i) if i in ours else m for i, m in enumerate(messages)],
        chain,
        bad,
    )


def _in_call_order(messages: list[Message], index: int) -> Message:
    """`messages[index]`, when it is the results of the answer before it, with its results in
    the order of the calls: stayer writes a record as each call finishes, and sends a round's
    results in call order. (Claude Code sends them in the order they finished, which is the
    order of its records: those are kept as they are.)"""
    message = messages[index]
    answer = messages[index - 1] if index else None
    if not (isinstance(answer, AssistantMessage) and _only_results(message)):
        return message
    order = {call.id: place for place, call in enumerate(answer.tool_uses)}

    def place(block: ContentBlock) -> int:
        call = block.tool_use_id if isinstance(block, ToolResultBlock) else ""
        return order.get(call, len(order))

    ranked = tuple(sorted(message.content, key=place))
    return message if ranked == message.content else UserMessage(ranked)


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


class Summary(Struct, frozen=True):
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
        prompt = _prompt_text(first.content) if first else ""
        turns = sum(1 for m in loaded.messages if isinstance(m, AssistantMessage))
        found.append(Summary(path.stem, path, path.stat().st_mtime, prompt.strip(), turns))
    return found


def _prompt_text(content: Sequence[object]) -> str:
    """What the person typed: the text blocks of a message, less the notes stayer added for
    the model (`<system-reminder>` blocks: plan mode, hook context), which are not the prompt."""
    texts = (getattr(block, "text", "") for block in content)
    return " ".join(t for t in texts if not t.lstrip().startswith("<system-reminder>"))


def recorded_cwd(path: Path) -> str | None:
    """The working directory the session at `path` began in: the `cwd` of its first record
    that has one (None if none does); raises `OSError` if the file cannot be read."""
    with path.open(encoding="utf-8", errors="replace") as file:
        for line in file:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(record, dict) and isinstance(record.get("cwd"), str):
                return str(record["cwd"])
    return None
