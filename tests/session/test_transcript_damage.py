"""A damaged transcript loses only what was damaged: a torn answer's record does not take the
intact results after it along (its calls are read from what is left, or stood in for), and
lines that are not JSON are named by number, a cut last write apart from garbage mid-file."""

from __future__ import annotations

import json
from pathlib import Path

from stayer.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
)
from stayer.session.repair import repair
from stayer.session.transcript import TranscriptWriter, load, recorded_cwd, summaries
from stayer.session.transcript_damage import LOST_CALL_NAME, LOST_CALLS_NOTE

SESSION = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
PROMPT = UserMessage.of_text("Count the files.")
CALL = ToolUseBlock("toolu_c", "Bash", {"command": "ls | wc -l"})
ANSWER = AssistantMessage((TextBlock("Counting."), CALL), id="msg_1")
RESULT = ToolResultBlock("toolu_c", (TextBlock("12"),))
THEN = AssistantMessage((TextBlock("There are 12."),), id="msg_2")


def saved(path: Path) -> list[str]:
    """The lines of a whole conversation written by stayer: prompt, answer, results, answer."""
    out = TranscriptWriter(path, session_id=SESSION, cwd="/work")
    out.sync((PROMPT, ANSWER, UserMessage((RESULT,)), THEN))
    out.close()
    return path.read_text().splitlines()


def rewrite(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


def test_a_torn_answer_keeps_its_call_read_from_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    # cut the answer's record after its call's input, before the rest of the record
    lines[1] = lines[1][: lines[1].index('"command": "ls | wc -l"}') + 25]
    rewrite(path, lines)

    loaded = load(path)

    recovered = AssistantMessage((TextBlock(LOST_CALLS_NOTE), CALL))
    assert loaded.messages == (PROMPT, recovered, UserMessage((RESULT,)), THEN)
    assert history_problems(loaded.messages) == []
    assert repair(loaded.messages).messages == loaded.messages  # the real result is kept
    assert f"{path}: line 2 is not JSON; skipped" in loaded.warnings


def test_a_call_cut_mid_input_keeps_its_id_and_name(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    lines[1] = lines[1][: lines[1].index('"ls | wc')]
    rewrite(path, lines)

    loaded = load(path)

    answer = loaded.messages[1]
    assert answer == AssistantMessage(
        (TextBlock(LOST_CALLS_NOTE), ToolUseBlock("toolu_c", "Bash", {}))
    )
    assert loaded.messages[2] == UserMessage((RESULT,))


def test_an_answer_with_no_call_left_to_read_gets_a_stand_in(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    lines[1] = lines[1][:40]  # nothing of the call is left
    rewrite(path, lines)

    loaded = load(path)

    stand_in = ToolUseBlock("toolu_c", LOST_CALL_NAME, {})
    assert loaded.messages[1:3] == (
        AssistantMessage((TextBlock(LOST_CALLS_NOTE), stand_in)),
        UserMessage((RESULT,)),
    )
    assert history_problems(repair(loaded.messages).messages) == []


def test_a_torn_later_record_of_an_answer_adds_its_call_to_the_answer(tmp_path: Path) -> None:
    # an answer on record in two parts (its text as the call started, then the call): the
    # second part is torn, and its call joins the first part
    path = tmp_path / "s.jsonl"
    out = TranscriptWriter(path, session_id=SESSION, cwd="/work")
    out.sync((PROMPT, AssistantMessage((TextBlock("Counting."),), id="msg_1")))
    out.sync((PROMPT, ANSWER, UserMessage((RESULT,)), THEN))
    out.close()
    lines = path.read_text().splitlines()
    lines[2] = lines[2][: lines[2].index('"ls | wc')]
    rewrite(path, lines)

    loaded = load(path)

    answer = AssistantMessage(
        (TextBlock("Counting."), TextBlock(LOST_CALLS_NOTE), ToolUseBlock("toolu_c", "Bash", {})),
        id="msg_1",
    )
    assert loaded.messages == (PROMPT, answer, UserMessage((RESULT,)), THEN)


def test_garbage_mid_file_is_named_apart_from_a_cut_last_write(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    rewrite(path, [lines[0], "not a record", *lines[1:], lines[-1][:30]])

    loaded = load(path)

    assert loaded.messages == (PROMPT, ANSWER, UserMessage((RESULT,)), THEN)
    assert loaded.warnings == (
        f"{path}: line 2 is not JSON; skipped",
        f"{path}: the last write was cut short (line 6); skipped",
    )


def test_a_line_nested_past_the_parsers_depth_is_garbage_not_a_crash(tmp_path: Path) -> None:
    # a crafted file: json raises RecursionError, not a decode error, for such a line; the
    # torn answer's line is deep too, where its call's input begins
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    lines[1] = lines[1][: lines[1].index('{"command"')] + "[" * 100_000
    rewrite(path, ["[" * 100_000 + "]" * 100_000, *lines])

    loaded = load(path)

    answer = AssistantMessage((TextBlock(LOST_CALLS_NOTE), ToolUseBlock("toolu_c", "Bash", {})))
    assert loaded.messages == (PROMPT, answer, UserMessage((RESULT,)), THEN)
    assert f"{path}: lines 1, 3 are not JSON; skipped" in loaded.warnings
    assert [s.path for s in summaries(tmp_path, cwd=None)] == [path]
    assert recorded_cwd(path) == "/work"


def test_a_record_whose_parent_is_not_a_string_is_skipped_not_a_crash(tmp_path: Path) -> None:
    # a crafted record beside the chain with a list for a parent: a set lookup of it raised
    path = tmp_path / "s.jsonl"
    lines = saved(path)
    odd = json.dumps({"type": "system", "subtype": "x", "uuid": "odd", "parentUuid": ["a"]})
    rewrite(path, [lines[0], odd, *lines[1:]])

    loaded = load(path)

    assert loaded.messages == (PROMPT, ANSWER, UserMessage((RESULT,)), THEN)
    assert [s.path for s in summaries(tmp_path, cwd=None)] == [path]
