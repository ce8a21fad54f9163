"""Request bodies built from each message's JSON encoded once: the same bytes as encoding the
whole request afresh, whatever moved (breakpoints, a compaction, caching switched off for a
model), each message encoded once per form, and nothing kept for messages that are gone."""

from __future__ import annotations

import gc
import json

from msgspec.structs import replace

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
from stayer.providers._encoded import EncodedHistory, EncodedMessages, json_array, json_object
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
    # A prompt merged into the last message (a new object in its place), then a compaction: a
    # new first message, the recent rounds kept as they were.
    merged = UserMessage((*messages[-1].content, TextBlock("and tomorrow?")))
    changed = [*messages[:-1], merged]
    summary = UserMessage.of_text("Summary of the work so far.")
    for sent in (request(changed), request([summary, *changed[-4:]])):
        assert warm.encode(sent) == RequestEncoder().encode(sent)
        assert openai.encode_request(sent) == OpenAIChatProvider(api_key="k").encode_request(sent)


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


def test_a_grown_history_encodes_only_its_new_messages_and_those_whose_form_changed() -> None:
    history = EncodedHistory()
    calls: list[tuple[int, object]] = []
    messages = conversation(3)
    index_of = {id(m): i for i, m in enumerate(messages)}

    def encode(message: Message, form: object) -> bytes:
        calls.append((index_of[id(message)], form))
        return json.dumps([index_of[id(message)], form]).encode()

    def sent(count: int, marks: dict[int, int], context: object = None) -> bytes:
        fragments = history.fragments(
            tuple(messages[:count]), lambda i, _: marks.get(i), encode, marks=marks, context=context
        )
        return json_object([("messages", json_array(fragments))])

    assert json.loads(sent(3, {2: 0, 0: 0})) == {"messages": [[0, 0], [1, None], [2, 0]]}
    calls.clear()
    assert json.loads(sent(5, {4: 0, 2: 0})) == {
        "messages": [[0, None], [1, None], [2, 0], [3, None], [4, 0]]
    }
    # Message 0 lost its mark, 3 and 4 are new; 1 and 2 went out as they were.
    assert sorted(calls) == [(0, None), (3, None), (4, 0)]
    calls.clear()
    # Another context (OpenAI's thinking switch) looks every message up again; each form that
    # was encoded before is still kept.
    sent(5, {4: 0, 2: 0}, context="thinking")
    assert calls == []
    assert json.loads(sent(7, {6: 0, 4: 0}, context="thinking"))["messages"][-1] == [6, 0]
    assert sorted(calls) == [(2, None), (5, None), (6, 0)]


def test_an_array_of_nothing_but_empty_messages_is_still_an_array() -> None:
    assert json.loads(json_object([("messages", json_array([b"", b""]))])) == {"messages": []}
    assert json.loads(json_object([("m", json_array([b"", b",1", b"", b",2"]))])) == {"m": [1, 2]}
