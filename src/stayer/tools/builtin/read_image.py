"""Images for the Read tool: sent as they are when within the API's limits, else made smaller.

The API takes at most 5 MB of base64 per image, and when a request holds many images each may be
at most 2,000 pixels on its long edge; Claude Code keeps every image within 2,000 pixels for that
reason, and so do we. Pillow is imported only when an image has to be measured or re-encoded, so
start-up never pays for it.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.messages import ImageBlock, TextBlock, ToolResultContent
from stayer.tools.base import ToolFailure, ToolOutput

if TYPE_CHECKING:
    from PIL.Image import Image

MAX_IMAGE_BYTES = 3_750_000
"""The largest image sent: base64 makes it about 5 MB, the API's limit per image."""

MAX_IMAGE_EDGE = 2000
"""The longest side, in pixels, of an image sent (the API's limit when a request has many)."""

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

_JPEG_QUALITIES = (85, 70, 50)


def image_output(path: Path, suffix: str) -> ToolOutput:
    """The image at `path` as an image block, made smaller first when it is over a limit."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}") from None
    media_type = sniff_image(data) or IMAGE_TYPES[suffix]
    content: tuple[ToolResultContent, ...] = ()
    size = image_size(data)
    if size is None and len(data) > MAX_IMAGE_BYTES:
        raise ToolFailure(
            f"{path} is {len(data) / 1_000_000:.1f} MB and not an image that can be decoded "
            "(it may be damaged), so it cannot be made small enough to send."
        )
    if size is not None and (len(data) > MAX_IMAGE_BYTES or max(size) > MAX_IMAGE_EDGE):
        data, media_type, new_size = fit_image(data, path, png=media_type == "image/png")
        content = (TextBlock(text=_resized_note(size, new_size)),)
    block = ImageBlock(media_type=media_type, data=base64.b64encode(data).decode("ascii"))
    return ToolOutput(
        content=(block, *content),
        data={"type": "image", "file_path": str(path), "media_type": media_type},
    )


def _resized_note(old: tuple[int, int], new: tuple[int, int]) -> str:
    return (
        f"(The image is {old[0]}x{old[1]} pixels; it was scaled to {new[0]}x{new[1]} to fit the "
        "API's limits, so multiply coordinates read from it by "
        f"{old[0] / new[0]:.3g} to get the original's.)"
    )


def sniff_image(data: bytes) -> str | None:
    """The real image type from its magic bytes (the API rejects a mislabelled image)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height of the image in `data` (read from its header alone), or None."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    return width, height


def fit_image(data: bytes, path: Path, *, png: bool) -> tuple[bytes, str, tuple[int, int]]:
    """`data` re-encoded within both limits, keeping its aspect ratio: as PNG when it was one or
    has transparency and that is small enough (PNG keeps text sharp), else as JPEG at falling
    quality and size."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.seek(0)  # an animated GIF or WebP becomes its first frame
            image = opened.copy()
    except (OSError, ValueError) as exc:
        raise ToolFailure(f"Could not open the image {path} to make it smaller: {exc}") from None
    edge = MAX_IMAGE_EDGE
    while edge >= 64:
        image.thumbnail((edge, edge))
        lossless = png or image.mode in ("RGBA", "LA", "P", "PA")
        encoded = _encode(image, "PNG") if lossless else None
        if encoded is not None and len(encoded) <= MAX_IMAGE_BYTES:
            return encoded, "image/png", image.size
        rgb = image.convert("RGB")
        for quality in _JPEG_QUALITIES:
            encoded = _encode(rgb, "JPEG", quality=quality)
            if len(encoded) <= MAX_IMAGE_BYTES:
                return encoded, "image/jpeg", image.size
        edge = edge * 3 // 4
    raise ToolFailure(f"Could not make the image {path} small enough to send.")


def _encode(image: Image, image_format: str, *, quality: int = 0) -> bytes:
    buffer = io.BytesIO()
    if image_format == "JPEG":
        image.save(buffer, format="JPEG", quality=quality, optimize=True)
    else:
        image.save(buffer, format=image_format, optimize=True)
    return buffer.getvalue()
