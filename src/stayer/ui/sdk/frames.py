"""One line of the SDK's standard input, read into what it asks for (protocols.md §1.4).

A line is a control frame (`control_request`, `control_response`, `control_cancel_request`:
the control channel's), a user message (`{"type": "user", "message": {"role": "user",
"content": str | blocks}}`, text and base64 image blocks), or something stayer cannot use:
that is a `BadInput` saying what was wrong in one line, and whether it was meant as a user
message (which is then owed a `result`, as any user message is).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from stayer.json_text import has_lone_surrogate
from stayer.messages import ContentBlock, ImageBlock, TextBlock, block_from_wire

from .control import CONTROL_TYPES

PROMPT_BLOCKS = ("text", "image")

LONE_SURROGATE_ERROR = (
    "the user message holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape not in a pair), "
    "which is not text; send valid Unicode"
)

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
"""Where JSON text can spell a surrogate: raw UTF-8 cannot hold one (it would not decode).
Control frames are not checked: refusing a reply would leave stayer's request waiting, and
every writer replaces what such text brings (`stayer.json_text`)."""


class UserInput(Struct, frozen=True):
    """A user message: its prompt, and its `uuid` when the SDK gave one."""

    prompt: str | tuple[ContentBlock, ...]
    uuid: str | None = None


class BadInput(Struct, frozen=True):
    """A line stayer cannot use; `user`: it was a user message (owed an error `result`)."""

    error: str
    user: bool = False


def read_frame(line: bytes) -> Mapping[str, Any] | UserInput | BadInput | None:
    """What `line` asks for: a control frame, a user message, a `BadInput`; None when blank."""
    if not line.strip():
        return None
    try:
        frame = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return BadInput("an input line is not UTF-8; send one JSON object per line")
    except json.JSONDecodeError as error:
        return BadInput(f"an input line is not JSON ({error.msg}); send one JSON object per line")
    except RecursionError:
        return BadInput("an input line nests too deeply to read; send one JSON object per line")
    except Exception as error:  # whatever else decoding one line does, it is that line's fault
        return BadInput(f"an input line could not be read ({type(error).__name__}); skipped")
    if not isinstance(frame, dict):
        return BadInput("an input line is not a JSON object; send one JSON object per line")
    kind = frame.get("type")
    if kind in CONTROL_TYPES:
        return frame
    if kind == "user":
        if _SURROGATE_ESCAPE.search(line) and has_lone_surrogate(frame):
            return BadInput(LONE_SURROGATE_ERROR, True)
        return _user(frame)
    return BadInput(
        f"unknown input message type {kind!r}: stayer reads user, control_request, "
        "control_response and control_cancel_request lines; the line was skipped"
    )


def _user(frame: Mapping[str, Any]) -> UserInput | BadInput:
    message = frame.get("message")
    uuid = frame.get("uuid")
    uuid = uuid if isinstance(uuid, str) and uuid else None
    if not isinstance(message, Mapping) or message.get("role", "user") != "user":
        return BadInput('a user line needs "message": {"role": "user", "content": ...}', True)
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            return BadInput("the user message is empty; say what to do", True)
        return UserInput(content, uuid)
    if not isinstance(content, list) or not content:
        return BadInput("a user message's content is a string or a non-empty list of blocks", True)
    blocks: list[ContentBlock] = []
    for block in content:
        parsed = _block(block)
        if isinstance(parsed, BadInput):
            return parsed
        blocks.append(parsed)
    if not any(not isinstance(b, TextBlock) or b.text.strip() for b in blocks):
        return BadInput("the user message is empty; say what to do", True)
    return UserInput(tuple(blocks), uuid)


def _block(block: object) -> ContentBlock | BadInput:
    if not isinstance(block, Mapping) or block.get("type") not in PROMPT_BLOCKS:
        kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
        return BadInput(
            f"a user message block of type {kind!r} is not taken: send text and image blocks",
            True,
        )
    source = block.get("source")
    if block["type"] == "image" and not (
        isinstance(source, Mapping) and source.get("type") == "base64"
    ):
        return BadInput("an image block needs a base64 source (type, media_type, data)", True)
    try:
        parsed = block_from_wire(block)
    except ValueError as error:
        return BadInput(f"a user message block is malformed: {error}", True)
    if isinstance(parsed, ImageBlock):
        return _image(parsed)
    return parsed


def _image(image: ImageBlock) -> ImageBlock | BadInput:
    """`image` when a model API would take it (a type it reads, base64 of an image of that
    type), else why not: a message the API refuses would stay in the history and fail every
    request after it."""
    from stayer.tools.builtin.read_image import IMAGE_TYPES, sniff_image

    if not (image.media_type and image.data):
        return BadInput("an image block needs its media_type and data", True)
    if image.media_type not in IMAGE_TYPES.values():
        return BadInput(
            f"an image block's media_type {image.media_type[:40]!r} is not taken: send "
            "image/png, image/jpeg, image/gif or image/webp",
            True,
        )
    try:
        head = base64.b64decode(image.data[:64], validate=True)
        base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        return BadInput(
            "an image block's data is not base64 (one unbroken run of A-Z, a-z, 0-9, + and /, "
            "= padded); send the image's bytes so",
            True,
        )
    found = sniff_image(head)
    if found != image.media_type:
        return BadInput(
            f"an image block says {image.media_type} but its data is "
            f"{found or 'no image of those types'}; give its real media_type",
            True,
        )
    return image
