"""Messages survive a round trip through their wire form, thinking signatures included."""

from __future__ import annotations

import pytest

from stayer.messages import (
    AssistantMessage,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    message_from_wire,
    message_to_wire,
)


def test_every_block_kind_round_trips() -> None:
    assistant = AssistantMessage(
        content=(
            ThinkingBlock("let me think", signature="sig-abc=="),
            RedactedThinkingBlock("opaque"),
            TextBlock("Reading it."),
            ToolUseBlock("toolu_1", "Read", {"file_path": "/x", "limit": 3}),
        ),
        id="msg_1",
        model="claude-x",
        stop_reason="tool_use",
        usage=Usage(10, 5, 3, 2),
    )
    user = UserMessage(
        (
            ToolResultBlock(
                "toolu_1", (TextBlock("line"), ImageBlock("image/png", "AAAA")), is_error=True
            ),
            TextBlock("and more"),
        )
    )
    for message in (assistant, user):
        assert message_from_wire(message_to_wire(message)) == message


def test_thinking_goes_out_exactly_as_it_came_in() -> None:
    wire = message_to_wire(AssistantMessage((ThinkingBlock("t", signature="S1g"),)))
    assert wire["content"] == [{"type": "thinking", "thinking": "t", "signature": "S1g"}]


def test_string_content_and_string_tool_results_are_accepted() -> None:
    parsed = message_from_wire(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "a", "content": "plain"}],
        }
    )
    assert parsed == UserMessage((ToolResultBlock("a", (TextBlock("plain"),)),))
    assert message_from_wire({"role": "user", "content": "hi"}) == UserMessage.of_text("hi")


@pytest.mark.parametrize(
    ("wire", "complaint"),
    [
        ({"role": "system", "content": "x"}, "unknown message role 'system'"),
        ({"role": "user"}, "a message needs content"),
        ({"role": "user", "content": [{"type": "video"}]}, "unknown content block type 'video'"),
        ({"role": "user", "content": [{"type": "text"}]}, "malformed text block"),
    ],
)
def test_malformed_wire_messages_say_what_is_wrong(wire: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        message_from_wire(wire)


def test_usage_adds_up() -> None:
    total = Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40)
    assert total == Usage(11, 22, 33, 44)
    assert total.total_input_tokens == 11 + 33 + 44


def test_a_call_s_unparsed_text_has_no_wire_form() -> None:
    refused = ToolUseBlock("toolu_1", "Read", {}, unparsed='{"file_path": "/x"')
    wire = message_to_wire(AssistantMessage(content=(refused,), id="msg_1", model="m"))

    assert wire["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]
    assert message_from_wire(wire).content == (ToolUseBlock("toolu_1", "Read", {}),)
