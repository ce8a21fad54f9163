"""`TranscriptWriter.result`: each tool call's result on disk as the call finishes, read back as
one message of results in call order, never twice once its round's message is written too."""

from __future__ import annotations

import json
from pathlib import Path

from stayer.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
)
from stayer.session.repair import UNKNOWN_OUTCOME, repair
from stayer.session.transcript import TranscriptWriter, load

SESSION = "0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"
PROMPT = UserMessage.of_text("Look at all three.")
ANSWER = AssistantMessage(
    tuple(ToolUseBlock(f"toolu_{n}", "Bash", {"command": f"echo {n}"}) for n in (1, 2, 3)),
    id="msg_1",
)


def result(n: int) -> ToolResultBlock:
    return ToolResultBlock(f"toolu_{n}", (TextBlock(f"out {n}"),))


def started(path: Path) -> TranscriptWriter:
    """A writer with the prompt and the answer that made three calls on record."""
    out = TranscriptWriter(path, session_id=SESSION, cwd="/work")
    out.sync((PROMPT, ANSWER))
    return out


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_results_written_as_calls_finish_read_back_in_call_order(tmp_path: Path) -> None:
    out = started(tmp_path / "s.jsonl")
    out.result(result(3))  # the calls finish out of order; the first never does
    out.result(result(2))
    out.close()  # the process dies before the round ends

    loaded = load(out.path)

    assert loaded.messages == (PROMPT, ANSWER, UserMessage((result(2), result(3))))
    assert loaded.warnings == ()
    # each result is a record of its own, hanging off the answer that made its call
    answer_id = records(out.path)[1]["uuid"]
    assert [r["parentUuid"] for r in records(out.path)[2:]] == [answer_id, answer_id]
    # resumed, the call that never finished is the only one of unknown outcome
    unknown = ToolResultBlock("toolu_1", (TextBlock(UNKNOWN_OUTCOME),), is_error=True)
    repaired = repair(loaded.messages).messages
    assert repaired[-1] == UserMessage((result(2), result(3), unknown))
    assert history_problems(repaired) == []


def test_a_round_written_after_its_results_is_read_once_with_its_text(tmp_path: Path) -> None:
    out = started(tmp_path / "s.jsonl")
    for n in (2, 1, 3):
        out.result(result(n))
    round_ = UserMessage((result(1), result(2), result(3), TextBlock("[a note the loop adds]")))
    then = AssistantMessage((TextBlock("All three looked at."),), id="msg_2")
    out.sync((PROMPT, ANSWER, round_))
    out.sync((PROMPT, ANSWER, round_, then))
    out.close()

    loaded = load(out.path)

    assert loaded.messages == (PROMPT, ANSWER, round_, then)
    assert loaded.warnings == ()


def test_a_resumed_round_does_not_bring_back_the_results_it_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    out = started(path)
    out.result(result(1))
    out.close()
    loaded = load(path)
    repaired = repair(loaded.messages).messages

    again = TranscriptWriter(path, session_id=SESSION, cwd="/work")  # the resumed session
    again.go_on_from(loaded.messages, loaded.chain)
    prompt = UserMessage((*repaired[-1].content, TextBlock("go on")))
    then = AssistantMessage((TextBlock("Going on."),), id="msg_2")
    history: tuple[Message, ...] = (*repaired[:-1], prompt, then)
    again.sync(history)
    again.result(result(2))  # a result of no call on record is left to its round
    again.close()

    assert load(path).messages == history
    assert len(records(path)) == 5  # prompt, answer, one result, the resumed round, the answer


def test_a_result_whose_call_is_not_on_record_is_left_to_its_round(tmp_path: Path) -> None:
    out = TranscriptWriter(tmp_path / "s.jsonl", session_id=SESSION, cwd="/work")
    out.sync((PROMPT,))
    out.result(result(1))
    out.sync((PROMPT, AssistantMessage((ANSWER.content[0],), id="msg_1")))
    out.close()

    assert [r["type"] for r in records(out.path)] == ["user", "assistant"]
