"""The faults the chaos model injects, and how each one spoils a good reply, in both protocols.

Each fault is what a real model service does on a bad day: refuse with a status (overloaded,
rate limited, prompt too long), break a stream (cut, an error event, a stall before the first
byte, a frame that is not JSON), drop the connection after the last event instead of ending
the body, or send a reply that is complete but not the work (cut by the output limit inside
its text or inside a tool call's input, empty, a tool_use stop with no call).
`Injector` decides, from a seeded random source, which replies are spoiled: about `share` of
them, never more than `max_in_a_row` in a row.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from tests.fakes.sse import (
    Block,
    Frame,
    Reply,
    Response,
    Stream,
    Text,
    ToolCall,
    WireProtocol,
    anthropic_error,
    anthropic_error_event,
    garbage_frame,
    openai_error,
    openai_error_chunk,
)

FaultKind = Literal[
    "overloaded",
    "overloaded_mid_stream",
    "rate_limited",
    "cut_stream",
    "unfinished_body",
    "slow_first_byte",
    "garbage_frame",
    "max_tokens_in_text",
    "max_tokens_in_tool_input",
    "prompt_too_long",
    "empty_reply",
    "tool_use_without_call",
]
ALL_FAULTS: tuple[FaultKind, ...] = get_args(FaultKind)
TRANSIENT: tuple[FaultKind, ...] = (
    "overloaded",
    "overloaded_mid_stream",
    "rate_limited",
    "cut_stream",
    "unfinished_body",
    "slow_first_byte",
    "garbage_frame",
)
"""Faults a retry of the same request gets past; the only ones a summary request is given
(a summary refused or spoiled is a failed compaction, which is not what the chaos run tests)."""

STALL_S = 30.0
"""How long a slow first byte would take: far longer than any test, so only the client's
first-byte timeout ends the wait (the server stops as soon as the client hangs up)."""


@dataclass
class Injector:
    """Which replies to spoil: a `share` of them at random, at most `max_in_a_row` in a row
    (None: no limit), each with one of the faults the reply allows."""

    rng: random.Random
    share: float
    max_in_a_row: int | None = 2
    in_a_row: int = 0

    def choose(self, allowed: Sequence[FaultKind]) -> FaultKind | None:
        """The fault for the next reply, or None for a good one."""
        limited = self.max_in_a_row is not None and self.in_a_row >= self.max_in_a_row
        if not allowed or limited or self.rng.random() >= self.share:
            self.in_a_row = 0
            return None
        self.in_a_row += 1
        return self.rng.choice(allowed)


def possible_faults(good: Reply) -> list[FaultKind]:
    """The faults that make sense for this reply: a cut inside text needs text to cut, one
    inside a tool call's input or a tool_use stop with no call needs a call."""
    kinds: list[FaultKind] = [*TRANSIENT, "prompt_too_long", "empty_reply"]
    if len(_text(good)) >= 2:
        kinds.append("max_tokens_in_text")
    if _call(good) is not None:
        kinds += ["max_tokens_in_tool_input", "tool_use_without_call"]
    return kinds


@dataclass(frozen=True, slots=True)
class Spoiled:
    """A spoiled reply, and whether a tool call it carries may run: one in an answer the harness
    received whole, and whose input was not cut, or one whose block streamed whole before a
    stream broke (the harness starts a call as soon as its block completes, and then keeps the
    answer up to it rather than withdrawing it)."""

    response: Response
    calls_may_run: bool


def spoil(
    kind: FaultKind, good: Reply, protocol: WireProtocol, rng: random.Random, model: str
) -> Spoiled:
    """`good` with `kind` done to it."""
    stream = good.render(protocol, request_model=model)
    frames = len(stream.frames)
    match kind:
        case "overloaded":
            return Spoiled(_status(protocol, 529, "overloaded_error", "Overloaded"), False)
        case "rate_limited":
            return Spoiled(_rate_limited(protocol, rng), False)
        case "prompt_too_long":
            return Spoiled(_too_long(protocol), False)
        case "overloaded_mid_stream":
            at = rng.randint(1, frames - 1)
            return Spoiled(_broken_at(stream, at, protocol), _call_whole_before(stream, at))
        case "cut_stream":
            at = rng.randint(1, frames - 1)
            return Spoiled(stream.cut(at), _call_whole_before(stream, at))
        case "unfinished_body":  # the answer is whole, only the body never ends
            return Spoiled(stream.cut(frames), True)
        case "slow_first_byte":
            if rng.random() < 0.5:
                return Spoiled(stream.stalled(before_headers=STALL_S), False)
            return Spoiled(stream.stalled(at=0, seconds=STALL_S), False)
        case "garbage_frame":
            at = rng.randint(0, frames - 1)
            return Spoiled(stream.with_frame(at, garbage_frame()), _call_whole_before(stream, at))
        case _:
            return Spoiled(_incomplete(kind, good, rng), kind != "max_tokens_in_tool_input")


def _incomplete(kind: FaultKind, good: Reply, rng: random.Random) -> Reply:
    """A whole reply that is not the work: cut by the output limit, empty, or a call missing."""
    text, call = _text(good), _call(good)
    said: tuple[Block, ...] = (Text(text),) if text else ()
    if kind == "max_tokens_in_text":
        # Within the first half: even cut at every try, a text of 16 characters or more is
        # still unfinished after the three continuations the loop allows.
        return Reply((Text(text[: rng.randint(1, len(text) // 2)]),), stop_reason="max_tokens")
    if kind == "max_tokens_in_tool_input":
        assert call is not None
        arguments = json.dumps(dict(call.input))
        broken = arguments[: rng.randint(1, len(arguments) - 1)]
        cut = ToolCall(call.id, call.name, raw_input=broken)
        return Reply((*said, cut), stop_reason="max_tokens")
    if kind == "tool_use_without_call":
        return Reply(said, stop_reason="tool_use")
    assert kind == "empty_reply", kind
    return Reply((), stop_reason="end_turn")


def _call_whole_before(stream: Stream, at: int) -> bool:
    """Whether the first `at` frames hold a tool call's whole block: Anthropic's
    `content_block_stop` of a `tool_use` block, or OpenAI's chunk with a `finish_reason` (the
    harness closes an OpenAI call only then)."""
    tool_blocks: set[int] = set()
    for chunk in stream.frames[:at]:
        if not isinstance(chunk, Frame):
            continue
        try:
            payload = chunk.payload
        except ValueError:
            continue
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        block = payload.get("content_block")
        if kind == "content_block_start" and isinstance(block, dict):
            if block.get("type") == "tool_use":
                tool_blocks.add(int(str(payload.get("index"))))
        elif kind == "content_block_stop" and payload.get("index") in tool_blocks:
            return True
        choices = payload.get("choices")
        if isinstance(choices, list) and any(
            isinstance(c, dict) and c.get("finish_reason") == "tool_calls" for c in choices
        ):
            return True
    return False


def _text(reply: Reply) -> str:
    return "".join(block.text for block in reply.blocks if isinstance(block, Text))


def _call(reply: Reply) -> ToolCall | None:
    return next((block for block in reply.blocks if isinstance(block, ToolCall)), None)


def _status(protocol: WireProtocol, status: int, kind: str, message: str) -> Response:
    if protocol == "anthropic":
        return anthropic_error(status, kind, message)
    return openai_error(status, message, error_type=kind)


def _rate_limited(protocol: WireProtocol, rng: random.Random) -> Response:
    """A 429 asking for a short wait, in whole seconds (0 or 1) or in milliseconds."""
    wait = rng.choice(
        [{"retry-after": "0"}, {"retry-after": "1"}, {"retry-after-ms": str(rng.randint(1, 200))}]
    )
    if protocol == "anthropic":
        return anthropic_error(429, "rate_limit_error", "Rate limited", headers=wait)
    return openai_error(
        429, "Rate limit reached", error_type="requests", code="rate_limit_exceeded", headers=wait
    )


def _too_long(protocol: WireProtocol) -> Response:
    if protocol == "anthropic":
        message = "prompt is too long: 212000 tokens > 200000 maximum"
        return anthropic_error(400, "invalid_request_error", message)
    message = (
        "This model's maximum context length is 400000 tokens. However, your messages "
        "resulted in 412000 tokens. Please reduce the length of the messages."
    )
    return openai_error(400, message, code="context_length_exceeded")


def _broken_at(stream: Stream, at: int, protocol: WireProtocol) -> Stream:
    """The stream up to frame `at`, then an overloaded error event in place of the rest."""
    error = (
        anthropic_error_event()
        if protocol == "anthropic"
        else openai_error_chunk("Overloaded", error_type="overloaded_error")
    )
    return stream.truncated(at).with_frame(at, error)
