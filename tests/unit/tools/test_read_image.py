"""Read on real images made with Pillow: sent as they are when small, else scaled to fit."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest
from PIL import Image

from stayer.messages import ImageBlock, TextBlock
from stayer.tools.base import ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.read_image import MAX_IMAGE_BYTES, MAX_IMAGE_EDGE
from tests.unit.tools.helpers import run_tool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def sent(output: ToolOutput) -> tuple[Image.Image, ImageBlock, str | None]:
    """The image the model gets, decoded, its block, and the note beside it (if any)."""
    assert isinstance(output.content, tuple)
    block, *rest = output.content
    assert isinstance(block, ImageBlock)
    data = base64.b64decode(block.data)
    note = None
    if rest:
        assert len(rest) == 1 and isinstance(rest[0], TextBlock)
        note = rest[0].text
    return Image.open(io.BytesIO(data)), block, note


async def test_a_small_image_is_sent_byte_for_byte(ctx: ToolContext) -> None:
    path = ctx.cwd / "small.png"
    Image.new("RGB", (300, 200), "red").save(path)
    _, block, note = sent(await run_tool(ReadTool(), ctx, file_path="small.png"))
    assert base64.b64decode(block.data) == path.read_bytes()
    assert note is None


async def test_an_image_wider_than_the_limit_is_scaled_keeping_its_aspect(
    ctx: ToolContext,
) -> None:
    Image.new("RGBA", (4000, 1000), (0, 0, 255, 128)).save(ctx.cwd / "wide.png")
    image, block, note = sent(await run_tool(ReadTool(), ctx, file_path="wide.png"))
    assert (block.media_type, image.format, image.size) == ("image/png", "PNG", (2000, 500))
    assert image.getpixel((10, 10)) == (0, 0, 255, 128)
    assert note == (
        "(The image is 4000x1000 pixels; it was scaled to 2000x500 to fit the API's limits, so "
        "multiply coordinates read from it by 2 to get the original's.)"
    )


async def test_a_tall_jpeg_is_scaled_on_its_long_edge(ctx: ToolContext) -> None:
    Image.new("RGB", (900, 3000), "green").save(ctx.cwd / "tall.jpg", quality=90)
    image, block, _ = sent(await run_tool(ReadTool(), ctx, file_path="tall.jpg"))
    assert (block.media_type, image.size) == ("image/jpeg", (600, MAX_IMAGE_EDGE))


async def test_an_image_over_the_byte_limit_is_re_encoded_under_it(ctx: ToolContext) -> None:
    side = 1400  # within the edge limit: only its bytes are too many
    noise = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    path = ctx.cwd / "noise.png"
    noise.save(path)
    assert path.stat().st_size > MAX_IMAGE_BYTES
    image, block, note = sent(await run_tool(ReadTool(), ctx, file_path="noise.png"))
    assert len(base64.b64decode(block.data)) <= MAX_IMAGE_BYTES
    assert len(block.data) <= 5_000_000
    assert (block.media_type, image.format) == ("image/jpeg", "JPEG")
    assert image.size[0] / image.size[1] == 1
    assert note is not None and note.startswith(f"(The image is {side}x{side} pixels; it was")


async def test_a_large_file_that_is_no_image_is_refused_clearly(ctx: ToolContext) -> None:
    (ctx.cwd / "fake.png").write_bytes(b"\0" * (MAX_IMAGE_BYTES + 1))
    with pytest.raises(
        ToolFailure, match=r"is 3\.8 MB and not an image that can be decoded \(it may be damaged\)"
    ):
        await run_tool(ReadTool(), ctx, file_path="fake.png")
