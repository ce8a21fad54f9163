"""What an MCP server's answer to a tool call becomes for the model: a `ToolOutput`.

Text stays text (adjacent texts joined into one, so the result limit holds for all of them
together) and images stay images (made smaller first when over the limits Read keeps
to, since a provider rejects the whole request for one image too large). What a model cannot
take in a tool result (audio, binary resources) becomes a line saying what was there, never
its bytes. `structuredContent` is always kept for programs (`ToolOutput.data`) and shown to
the model as JSON when no text block already says the same. A result is never empty: an
empty one says so, so the model does not wait for more.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stayer.messages import JSON, ImageBlock, TextBlock, ToolResultContent
from stayer.tools.base import ToolFailure, ToolOutput
from stayer.tools.builtin.read_image import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_EDGE,
    fit_image,
    image_size,
    sniff_image,
)

if TYPE_CHECKING:
    from mcp.types import (
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        TextResourceContents,
    )

NOTHING_TEXT = "(the tool returned nothing)"

_IMAGE_MEDIA_TYPES = frozenset(IMAGE_TYPES.values())


def to_output(result: CallToolResult) -> ToolOutput:
    """The model's view of `result` (and its structured part, for programs, in `data`)."""
    content: list[ToolResultContent] = []
    for block in result.content:
        content.extend(_block(block))
    data: dict[str, JSON] = {}
    structured = result.structured_content
    if structured is not None:
        data["structuredContent"] = structured
        if not any(_carries(part, structured) for part in content):
            content.append(TextBlock(json.dumps(structured, ensure_ascii=False, indent=2)))
    if not content:
        content.append(TextBlock(NOTHING_TEXT))
    return ToolOutput(_joined(content), is_error=result.is_error, data=data)


def _joined(content: list[ToolResultContent]) -> tuple[ToolResultContent, ...]:
    """`content` with each run of adjacent texts made one text (images stay between).

    The executor holds each text of a result to the tool's limit; a server sending its answer
    as forty texts, each under the limit, would otherwise reach the model forty times over it.
    One text is saved and cut whole."""
    joined: list[ToolResultContent] = []
    run: list[str] = []  # the texts since the last image, joined once (a join per text is slow)
    for part in content:
        if isinstance(part, TextBlock):
            run.append(part.text)
            continue
        if run:
            joined.append(TextBlock("\n".join(run)))
            run = []
        joined.append(part)
    if run:
        joined.append(TextBlock("\n".join(run)))
    return tuple(joined)


def _block(block: ContentBlock) -> tuple[ToolResultContent, ...]:
    from mcp.types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    if isinstance(block, TextContent):
        return (TextBlock(block.text),)
    if isinstance(block, ImageContent):
        return image_blocks(block.data, block.mime_type)
    if isinstance(block, AudioContent):
        size = _decoded_size(block.data)
        return (TextBlock(f"[audio ({block.mime_type}, {size}) left out: it cannot be shown]"),)
    if isinstance(block, EmbeddedResource):
        return (resource_text(block.resource),)
    if isinstance(block, ResourceLink):
        return (TextBlock(link_text(block.uri, block.name, block.description)),)
    raise ToolFailure(f"the server answered with content of an unknown kind ({block.type!r})")


def resource_text(resource: TextResourceContents | BlobResourceContents) -> TextBlock:
    """A resource's contents as text: its text after its address, or a note for binary data."""
    from mcp.types import TextResourceContents

    if isinstance(resource, TextResourceContents):
        return TextBlock(f"[resource {resource.uri}]\n{resource.text}")
    mime = resource.mime_type or "unknown type"
    size = _decoded_size(resource.blob)
    return TextBlock(f"[resource {resource.uri} ({mime}, {size}) is binary; not shown]")


def link_text(uri: str, name: str, description: str | None) -> str:
    """One line for a resource the server points at rather than sends."""
    about = f": {description}" if description else ""
    return f"[resource link {uri} ({name}){about}]"


def image_blocks(data: str, mime_type: str) -> tuple[ToolResultContent, ...]:
    """An image as the model can take it: as sent when within the limits, else made smaller
    (with a note saying so), or a note when it is no image a provider accepts."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return (TextBlock(f"[an image ({mime_type}) left out: its data is not valid base64]"),)
    media_type = sniff_image(raw)
    if media_type is None:
        if mime_type not in _IMAGE_MEDIA_TYPES:
            return (TextBlock(f"[an image ({mime_type}, {_size(len(raw))}) left out: not PNG, "
                              "JPEG, GIF or WebP, which is all a model is shown]"),)  # fmt: skip
        media_type = mime_type
    if len(raw) <= MAX_IMAGE_BYTES and _within_edge(raw):
        return (ImageBlock(media_type=media_type, data=data),)
    try:
        smaller, media_type, new = fit_image(raw, Path("image"), png=media_type == "image/png")
    except ToolFailure:
        return (TextBlock(f"[an image ({_size(len(raw))}) left out: too large to send, and it "
                          "could not be made smaller]"),)  # fmt: skip
    encoded = base64.b64encode(smaller).decode("ascii")
    note = f"(The image was scaled to {new[0]}x{new[1]} pixels to fit the providers' limits.)"
    return ImageBlock(media_type=media_type, data=encoded), TextBlock(note)


def _within_edge(raw: bytes) -> bool:
    size = image_size(raw)
    return size is None or max(size) <= MAX_IMAGE_EDGE


def _carries(part: ToolResultContent, structured: Any) -> bool:
    """Whether a text block already holds the structured result, as the servers' SDKs write
    it: the whole of it as JSON, or the plain value they wrap as ``{"result": value}`` (as
    JSON, or as the string itself)."""
    if not isinstance(part, TextBlock):
        return False
    wrapped = _wrapped(structured)
    if isinstance(wrapped, str) and wrapped == part.text:
        return True
    try:
        said = json.loads(part.text)
    except ValueError:
        return False
    return bool(said == structured or (wrapped is not _NOT_WRAPPED and said == wrapped))


_NOT_WRAPPED = object()


def _wrapped(structured: Any) -> Any:
    """The value a ``{"result": value}`` wrapper holds, else `_NOT_WRAPPED`."""
    if isinstance(structured, dict) and list(structured) == ["result"]:
        return structured["result"]
    return _NOT_WRAPPED


def _decoded_size(data: str) -> str:
    """The size of base64 `data` once decoded, for a note (without decoding it)."""
    return _size(len(data) * 3 // 4 - data[-2:].count("="))


def _size(count: int) -> str:
    if count < 10_000:
        return f"{count} bytes"
    if count < 10_000_000:
        return f"{count / 1000:.0f} kB"
    return f"{count / 1_000_000:.0f} MB"
