"""An ACP prompt's content blocks as the blocks of a stayer prompt.

Text is text; an image is an image; a resource the editor embedded (a file or a selection it
attached: `embeddedContext`) is its text, marked with where it came from; a link to a resource
is its address, for the model to read with its tools. Audio, which stayer does not advertise,
binary resources, and an image the model could not take (not png, jpeg, gif or webp, or its
data not base64) are refused in one line, before anything is sent or kept.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from collections.abc import Sequence

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from stayer.messages import ContentBlock, ImageBlock, TextBlock
from stayer.tools.builtin.read_image import IMAGE_TYPES

IMAGE_MEDIA = frozenset(IMAGE_TYPES.values())
"""The image types the model takes."""

AcpBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def prompt_blocks(prompt: Sequence[AcpBlock]) -> tuple[ContentBlock, ...]:
    """The stayer blocks of an ACP prompt; raises `RequestError` (invalid params) for a block
    stayer cannot take."""
    return tuple(_block(block) for block in prompt)


def _block(block: AcpBlock) -> ContentBlock:
    if isinstance(block, TextContentBlock):
        return TextBlock(block.text)
    if isinstance(block, ImageContentBlock):
        return _image(block)
    if isinstance(block, ResourceContentBlock):
        return TextBlock(f"[{block.name}]({block.uri})")
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return TextBlock(f'<context source="{resource.uri}">\n{resource.text}\n</context>')
        raise RequestError.invalid_params(
            {"details": f"the resource {resource.uri} is binary; stayer takes text resources only"}
        )
    raise RequestError.invalid_params(
        {"details": "stayer does not take audio in a prompt; give text or an image"}
    )


def _image(block: ImageContentBlock) -> ImageBlock:
    """The image, checked as the model would: one it refuses would stay in the history and
    fail every later prompt."""
    if block.mime_type not in IMAGE_MEDIA:
        kinds = ", ".join(sorted(IMAGE_MEDIA))
        raise RequestError.invalid_params(
            {"details": f"an image of type {block.mime_type!r} cannot be sent; give {kinds}"}
        )
    try:
        decoded = b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if not decoded:
        raise RequestError.invalid_params(
            {"details": "the image's data is not base64 (or is empty); send it base64-encoded"}
        )
    return ImageBlock(media_type=block.mime_type, data=block.data)
