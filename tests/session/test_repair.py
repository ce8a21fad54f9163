"""What makes a conversation invalid for the API, and its repair: every shape, made valid,
losing nothing that can be kept."""

from __future__ import annotations

import pytest

from stayer.messages import (
    AssistantMessage,
    HistoryProblem,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    history_problems,
)
from stayer.session.repair import RESUMED_OPENING, UNKNOWN_OUTCOME, repair

ASK = UserMessage.of_text("do it")
CALL_A = ToolUseBlock("toolu_a", "Bash", {"command": "ls"})
CALL_B = ToolUseBlock("toolu_b", "Read", {"file_path": "/x"})


def answer(*blocks: TextBlock | ToolUseBlock, id: str = "msg_1") -> AssistantMessage:
    return AssistantMessage(tuple(blocks), id=id)


def result(call: str, value: str = "ok", *, error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(call, (TextBlock(value),), is_error=error)


UNKNOWN_A = result("toolu_a", UNKNOWN_OUTCOME, error=True)
UNKNOWN_B = result("toolu_b", UNKNOWN_OUTCOME, error=True)


def test_a_valid_conversation_has_no_problems_and_is_left_alone() -> None:
    valid: tuple[Message, ...] = (
        ASK,
        answer(CALL_A, CALL_B),
        UserMessage((result("toolu_a"), result("toolu_b"))),
        answer(TextBlock("done"), id="msg_2"),
    )
    assert history_problems(valid) == []
    repaired = repair(valid)
    assert (repaired.messages, repaired.fixes, repaired.interrupted) == (valid, (), False)


@pytest.mark.parametrize(
    ("broken", "problems", "fixed", "interrupted"),
    [
        pytest.param(
            (ASK, answer(CALL_A, CALL_B)),
            [HistoryProblem("unanswered_tool_use", 1, ("toolu_a", "toolu_b"))],
            (ASK, answer(CALL_A, CALL_B), UserMessage((UNKNOWN_A, UNKNOWN_B))),
            True,
            id="killed while its tools ran",
        ),
        pytest.param(
            (ASK, answer(CALL_A, CALL_B), UserMessage((result("toolu_b"),))),
            [HistoryProblem("unanswered_tool_use", 1, ("toolu_a",))],
            (ASK, answer(CALL_A, CALL_B), UserMessage((result("toolu_b"), UNKNOWN_A))),
            True,
            id="one result of two recorded (kept as sent, the unknown one after)",
        ),
        pytest.param(
            (ASK, UserMessage.of_text("and also this")),
            [HistoryProblem("roles_repeat", 1)],
            (UserMessage((TextBlock("do it"), TextBlock("and also this"))),),
            True,
            id="two prompts in a row, never answered",
        ),
        pytest.param(
            (ASK, answer(TextBlock("Part one.")), answer(TextBlock(" Part two."), id="msg_2")),
            [HistoryProblem("roles_repeat", 2)],
            (ASK, answer(TextBlock("Part one."), TextBlock(" Part two."))),
            False,
            id="two answers in a row",
        ),
        pytest.param(
            (ASK, answer(CALL_A), answer(TextBlock("So."), id="msg_2")),
            [
                HistoryProblem("roles_repeat", 2),
                HistoryProblem("unanswered_tool_use", 1, ("toolu_a",)),
            ],
            (ASK, answer(CALL_A), UserMessage((UNKNOWN_A,)), answer(TextBlock("So."), id="msg_2")),
            False,
            id="an answer after calls with no results",
        ),
        pytest.param(
            (ASK, AssistantMessage((), id="msg_empty"), UserMessage.of_text("hello?")),
            [HistoryProblem("empty_assistant", 1)],
            (UserMessage((TextBlock("do it"), TextBlock("hello?"))),),
            True,
            id="an empty answer in the middle",
        ),
        pytest.param(
            (ASK, UserMessage((result("toolu_ghost"), TextBlock("see above")))),
            [
                HistoryProblem("roles_repeat", 1),
                HistoryProblem("unexpected_tool_result", 1, ("toolu_ghost",)),
            ],
            (UserMessage((TextBlock("do it"), TextBlock("see above"))),),
            True,
            id="a result of a call never made",
        ),
        pytest.param(
            (answer(TextBlock("Hi.")), UserMessage.of_text("hello")),
            [HistoryProblem("first_not_user", 0)],
            (
                UserMessage.of_text(RESUMED_OPENING),
                answer(TextBlock("Hi.")),
                UserMessage.of_text("hello"),
            ),
            True,
            id="starts with an answer",
        ),
        pytest.param(
            (
                ASK,
                answer(CALL_A, TextBlock("then"), CALL_A),
                UserMessage((result("toolu_a"),)),
                answer(CALL_A, CALL_B, id="msg_2"),
                UserMessage((result("toolu_a", "again"), result("toolu_b"))),
            ),
            [
                HistoryProblem("duplicate_tool_use", 1, ("toolu_a",)),
                HistoryProblem("duplicate_tool_use", 3, ("toolu_a",)),
            ],
            (
                ASK,
                answer(CALL_A, TextBlock("then")),
                UserMessage((result("toolu_a"),)),
                answer(CALL_B, id="msg_2"),
                UserMessage((result("toolu_b"),)),
            ),
            True,  # it ends on results the model never saw
            id="a call twice, as a file whose answer was joined twice holds it",
        ),
    ],
)
def test_each_broken_shape_is_named_and_repaired(
    broken: tuple[Message, ...],
    problems: list[HistoryProblem],
    fixed: tuple[Message, ...],
    interrupted: bool,
) -> None:
    assert history_problems(broken) == problems
    repaired = repair(broken)
    assert repaired.messages == fixed
    assert history_problems(repaired.messages) == []
    assert repaired.fixes == tuple(str(problem) for problem in problems)
    assert repaired.interrupted is interrupted


def test_problems_read_as_one_line_each() -> None:
    assert str(HistoryProblem("unanswered_tool_use", 3, ("toolu_a", "toolu_b"))) == (
        "tool calls in message 3 get no result: toolu_a, toolu_b"
    )
    assert history_problems(()) == [HistoryProblem("empty", 0)]
