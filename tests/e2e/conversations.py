"""Conversations as requests carry them, for tests that compare what was saved, resumed and
sent: stayer's messages in wire form, a recorded request's messages, and where a session's
transcript lies."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from stayer.messages import JSON, Message, TextBlock, UserMessage, block_to_wire
from stayer.session.paths import config_root, project_slug
from tests.fakes.model_server import RecordedRequest


def wire(messages: Sequence[Message]) -> list[JSON]:
    """Messages as a request carries them (role and content only)."""
    return [
        {"role": message.role, "content": [block_to_wire(block) for block in message.content]}
        for message in messages
    ]


def _without_cache_marks(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


def sent(request: RecordedRequest) -> list[JSON]:
    """The conversation a request carried, without its cache breakpoints."""
    return [_without_cache_marks(message) for message in request.messages]


def continued(history: Sequence[Message], prompt: Sequence[str]) -> list[JSON]:
    """The request a resumed history leads to: the prompt's texts join a history that ends with
    the user's message (the API wants roles to alternate), else follow it."""
    texts = tuple(TextBlock(text) for text in prompt)
    if history and isinstance(history[-1], UserMessage):
        return wire([*history[:-1], UserMessage((*history[-1].content, *texts))])
    return wire([*history, UserMessage(texts)])


def transcript_of(cwd: Path, session_id: str) -> Path:
    """Where a session run in `cwd` is saved (under this test process's STAYER_CONFIG_DIR)."""
    folder = config_root(os.environ) / "projects" / project_slug(cwd.resolve())
    return folder / f"{session_id}.jsonl"
