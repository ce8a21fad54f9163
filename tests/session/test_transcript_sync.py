"""`TranscriptWriter.sync`: what it writes as the conversation grows, and where a rewritten one
branches off, whatever the newest messages look like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stayer.messages import AssistantMessage, Message, TextBlock, UserMessage
from stayer.session.transcript import TranscriptWriter, load

SESSION = "5d1c0e7a-3b2f-4c8d-9e6a-1f0b2c3d4e5f"


def writer(path: Path) -> TranscriptWriter:
    return TranscriptWriter(path, session_id=SESSION, cwd="/work")


def user(text: str) -> UserMessage:
    return UserMessage.of_text(text)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage((TextBlock(text),), id=f"msg_{text}")


def conversation() -> tuple[Message, ...]:
    return (user("p"), answer("a1"), user("r1"), answer("a2"), user("r2"))


def shape(path: Path) -> list[tuple[str, str | None]]:
    """Each record, in file order, as (its message's text, its parent's text); a `system`
    record stands as its subtype."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    text = {
        r["uuid"]: r["message"]["content"][0]["text"] if "message" in r else r["subtype"]
        for r in records
    }
    return [(text[r["uuid"]], text.get(r["parentUuid"])) for r in records]


LINE = [("p", None), ("a1", "p"), ("r1", "a1"), ("a2", "r1"), ("r2", "a2")]


def test_a_growing_conversation_writes_each_message_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    out = writer(path)
    messages = conversation()
    out.sync(messages[:2])
    out.sync(messages[:2])
    out.sync(messages[:3])
    # equal messages that are not the same objects (read back, say) are not written again
    copies = tuple(load(path).messages)
    out.sync((*copies, *messages[3:]))
    out.close()

    assert shape(path) == LINE
    assert load(path).messages == messages


def test_an_old_message_rewritten_behind_unchanged_newest_ones_starts_a_branch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    out = writer(path)
    messages = conversation()
    out.sync(messages)
    # as clearing old tool output does: same length, the newest messages the same objects
    rewritten = (*messages[:2], user("r1 cleared"), *messages[3:])
    out.sync(rewritten)
    out.sync((*rewritten, answer("a3")))
    out.close()

    assert shape(path) == [
        *LINE,
        ("r1 cleared", "a1"),
        ("a2", "r1 cleared"),
        ("r2", "a2"),
        ("a3", "r2"),
    ]
    assert load(path).messages == (*rewritten, answer("a3"))


def test_a_shorter_conversation_goes_on_from_where_it_still_agrees(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    out = writer(path)
    messages = conversation()
    out.sync(messages)
    out.sync(messages[:3])  # the last answer and its results dropped: nothing to write
    out.sync((*messages[:3], answer("a2 again")))
    out.event("interrupted")
    out.close()

    assert shape(path) == [*LINE, ("a2 again", "r1"), ("interrupted", "a2 again")]
    assert load(path).messages == (*messages[:3], answer("a2 again"))


def test_a_writer_given_a_saved_chain_continues_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = writer(path)
    first.sync(conversation()[:4])
    first.close()

    saved = load(path)
    going_on = writer(path)
    going_on.go_on_from(saved.messages, saved.chain)
    going_on.sync((*saved.messages, user("r2")))
    going_on.close()

    assert shape(path) == LINE
    assert load(path).messages == conversation()
    with pytest.raises(ValueError, match="4 messages but 3 record ids"):
        going_on.go_on_from(saved.messages, saved.chain[:3])


def test_messages_a_failed_write_left_out_are_written_by_the_next_sync(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("")
    out = writer(tmp_path / "not-a-folder" / "s.jsonl")
    out.sync(conversation()[:2])  # never raises: the run must not fail on its transcript
    assert out.failure is not None and out.failure.startswith("cannot write the transcript ")
    out.path = tmp_path / "s.jsonl"
    out.sync(conversation())
    out.close()

    assert shape(out.path) == LINE
