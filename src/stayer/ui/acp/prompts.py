"""An ACP prompt's content blocks as the blocks of a stayer prompt.

Text is text; an image is an image; a resource the editor embedded (a file or a selection it
attached: `embeddedContext`) is its text, marked with where it came from; a link to a resource
is its address, for the model to read with its tools. Audio, which stayer does not advertise,
and binary resources are refused in one line.
"""

from __future__ import annotations

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
        return ImageBlock(media_type=block.mime_type, data=block.data)
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
