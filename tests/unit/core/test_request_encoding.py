"""Request bodies built from each message's JSON encoded once: the same bytes as encoding the
whole request afresh, whatever moved (breakpoints, a compaction, caching switched off for a
model), each message encoded once per form, and nothing kept for messages that are gone."""

from __future__ import annotations

import gc
import json
from dataclasses import replace

from stayer.messages import (
    AssistantMessage,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from stayer.providers._encoded import EncodedMessages
from stayer.providers.anthropic import PromptCaching, RequestEncoder, message_breakpoints
from stayer.providers.base import ModelRequest
from stayer.providers.openai_chat import OpenAIChatProvider
from tests.wire.helpers import WEATHER_TOOL


def turn(number: int, calls: int = 1) -> tuple[AssistantMessage, UserMessage]:
    """One tool round: an answer with `calls` tool calls and the message of their results."""
    uses = tuple(
        ToolUseBlock(f"toolu_{number}_{k}", "get_weather", {"city": "Oslo"}) for k in range(calls)
    )
    answer = AssistantMessage(
        (ThinkingBlock(f"round {number}", "sig"), TextBlock(f"Looking ({number})."), *uses),
        id=f"msg_{number}",
        stop_reason="tool_use",
    )
    results = UserMessage(
        tuple(ToolResultBlock(use.id, (TextBlock(f"rain {number}"),)) for use in uses)
    )
    return answer, results


def conversation(turns: int) -> list[Message]:
    messages: list[Message] = [UserMessage.of_text("weather?")]
    for number in range(turns):
        messages.extend(turn(number, calls=1 + number % 3))
    return messages


def request(messages: list[Message], model: str = "claude-sonnet-4-5") -> ModelRequest:
    return ModelRequest(
        model=model, system="You are terse.", messages=tuple(messages), tools=(WEATHER_TOOL,)
    )


def test_a_warm_encoder_sends_exactly_what_a_fresh_one_would_turn_after_turn() -> None:
    warm = RequestEncoder()
    openai = OpenAIChatProvider(api_key="k")
    messages = conversation(0)
    for number in range(8):
        for sent in (request(messages), request(messages, model="claude-haiku-4-5")):
            assert warm.encode(sent) == RequestEncoder().encode(sent)
            assert openai.encode_request(sent) == OpenAIChatProvider(api_key="k").encode_request(
                sent
            )
        messages.extend(turn(100 + number, calls=2))
    # A compaction: a new first message, the recent rounds kept as they were.
    summary = UserMessage.of_text("Summary of the work so far.")
    compacted = [summary, *messages[-4:]]
    assert warm.encode(request(compacted)) == RequestEncoder().encode(request(compacted))


def test_caching_switched_off_for_one_family_changes_only_its_requests() -> None:
    encoder = RequestEncoder(PromptCaching(off_for=frozenset({"haiku"})))
    messages = conversation(3)
    sonnet = json.loads(encoder.encode(request(messages)))
    haiku = json.loads(encoder.encode(request(messages, model="claude-haiku-4-5")))
    assert "cache_control" in json.dumps(sonnet)
    assert "cache_control" not in json.dumps(haiku)
    assert {**haiku, "model": "claude-sonnet-4-5"} == json.loads(
        RequestEncoder(PromptCaching(enabled=False)).encode(request(messages))
    )


def test_breakpoints_sit_on_the_last_block_that_can_hold_one_of_the_two_newest_prompts() -> None:
    answer, results = turn(1, calls=2)
    trailing_blank = UserMessage(
        (TextBlock("go on"), ImageBlock("image/png", "AAAA"), TextBlock(" "))
    )
    assert message_breakpoints((UserMessage.of_text("hi"),)) == {0: 0}
    assert message_breakpoints((UserMessage.of_text("hi"), answer, results)) == {2: 1, 0: 0}
    assert message_breakpoints((trailing_blank, answer, results, *turn(2))) == {4: 0, 2: 1}
    assert message_breakpoints((UserMessage.of_text("hi"), answer, trailing_blank)) == {2: 1, 0: 0}
    assert message_breakpoints((UserMessage((TextBlock(""),)),)) == {}


def test_each_message_is_encoded_once_per_form() -> None:
    encoded = EncodedMessages()
    calls: list[tuple[str, object]] = []

    def encode(message: Message, form: int | None) -> bytes:
        calls.append((type(message).__name__, form))
        return json.dumps([message.role, form]).encode()

    messages = conversation(2)
    for _ in range(3):
        for index, message in enumerate(messages):
            encoded.get(message, None, encode)
            if index == len(messages) - 1:
                encoded.get(message, 0, encode)
    assert calls == [
        ("UserMessage", None),
        ("AssistantMessage", None),
        ("UserMessage", None),
        ("AssistantMessage", None),
        ("UserMessage", None),
        ("UserMessage", 0),
    ]
    # An equal message that is another object is encoded on its own: identity, not equality.
    twin = replace(messages[0])
    assert twin == messages[0]
    encoded.get(twin, None, encode)
    assert calls[-1] == ("UserMessage", None)
    assert len(calls) == 7


def test_nothing_is_kept_for_messages_that_are_gone() -> None:
    encoded = EncodedMessages()
    messages = conversation(5)
    for message in messages:
        encoded.get(message, None, lambda m, _: m.role.encode())
    assert len(encoded) == len(messages) == 11
    del messages[1:-2]
    gc.collect()
    assert len(encoded) == 3
