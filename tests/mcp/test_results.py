"""What each kind of MCP result content becomes for the model, from a real SDK server: text,
images (within Read's limits), audio, embedded and linked resources, structured content, errors
and nothing at all; and that a result's texts are held to the limit together."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolRequestParams,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from PIL import Image

from stayer.mcp.results import NOTHING_TEXT
from stayer.mcp.tools import McpTool, result_chars
from stayer.messages import ImageBlock, TextBlock
from stayer.providers.scripted import ScriptedProvider, text, tool_call
from stayer.tools.base import ToolContext, ToolOutput
from stayer.tools.builtin.read_image import MAX_IMAGE_EDGE
from stayer.tools.saved import RESULTS_DIR
from tests.fakes.loop_harness import make_params, results_in, run
from tests.mcp.inproc import connected


def png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def answering(result: CallToolResult) -> Server[Any]:
    """A low-level server with one tool, `answer`, that returns `result` as it is."""

    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return ListToolsResult(tools=[Tool(name="answer", input_schema=schema)])

    async def call_tool(_ctx: Any, _params: CallToolRequestParams) -> CallToolResult:
        return result

    return Server("answering", on_list_tools=list_tools, on_call_tool=call_tool)


async def called(result: CallToolResult, tmp_path: Path) -> ToolOutput:
    """What the MCP tool returns when its server answers `result`."""
    async with connected(answering(result)) as handle:
        (definition,) = handle.tool_defs
        return await McpTool(handle, definition).call({}, ToolContext(cwd=tmp_path))


async def content_of(blocks: list[ContentBlock], tmp_path: Path) -> tuple[Any, ...]:
    output = await called(CallToolResult(content=blocks), tmp_path)
    assert not output.is_error and output.data == {}
    assert isinstance(output.content, tuple)
    return output.content


async def test_text_stays_text_and_adjacent_texts_are_one(tmp_path: Path) -> None:
    blocks: list[ContentBlock] = [TextContent(text="one"), TextContent(text="two")]
    assert await content_of(blocks, tmp_path) == (TextBlock("one\ntwo"),)
    image = ImageContent(data=b64(png(4, 4)), mime_type="image/png")
    blocks = [TextContent(text="a"), TextContent(text="b"), image, TextContent(text="c")]
    assert await content_of(blocks, tmp_path) == (
        TextBlock("a\nb"),
        ImageBlock(media_type="image/png", data=image.data),
        TextBlock("c"),
    )


async def test_forty_texts_each_under_the_limit_are_saved_and_cut_as_one(tmp_path: Path) -> None:
    # Each text is under the 100,000 characters a result may hold; all of them are 3.7 M.
    texts: list[ContentBlock] = [TextContent(text=f"{n:02d}" + "x" * 92_998) for n in range(40)]
    session = tmp_path / "session"
    async with connected(answering(CallToolResult(content=texts))) as handle:
        (definition,) = handle.tool_defs
        answer_tool = McpTool(handle, definition, max_result_chars=result_chars({}))
        model = ScriptedProvider([tool_call(answer_tool.name, {}, id="toolu_many"), text("ok")])
        await run(make_params(model, [answer_tool], tmp_path, session_dir=session))
    (answer,) = results_in(model.requests[1].messages[-1])
    assert len(answer.content) == 1 and len(answer.text) < 4_000
    whole = (session / RESULTS_DIR / "toolu_many.txt").read_text(encoding="utf-8")
    assert len(whole) == 40 * 93_000 + 39
    assert whole.startswith("00xxx") and "\n39xxx" in whole


async def test_an_image_within_the_limits_is_sent_as_it_is(tmp_path: Path) -> None:
    data = b64(png(40, 30))
    content = await content_of([ImageContent(data=data, mime_type="image/png")], tmp_path)
    assert content == (ImageBlock(media_type="image/png", data=data),)


async def test_a_mislabelled_image_goes_with_its_real_type(tmp_path: Path) -> None:
    data = b64(png(10, 10))
    content = await content_of([ImageContent(data=data, mime_type="image/jpeg")], tmp_path)
    assert content == (ImageBlock(media_type="image/png", data=data),)


async def test_an_image_over_reads_limits_is_scaled_down_with_a_note(tmp_path: Path) -> None:
    data = b64(png(3_000, 1_500))
    image, note = await content_of([ImageContent(data=data, mime_type="image/png")], tmp_path)
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as scaled:
        assert scaled.size == (MAX_IMAGE_EDGE, 1_000)
    assert note == TextBlock(
        "(The image was scaled to 2000x1000 pixels to fit the providers' limits.)"
    )


async def test_an_image_of_a_kind_no_model_takes_becomes_a_note(tmp_path: Path) -> None:
    blocks: list[ContentBlock] = [ImageContent(data=b64(b"BM" + bytes(98)), mime_type="image/bmp")]
    assert await content_of(blocks, tmp_path) == (
        TextBlock("[an image (image/bmp, 100 bytes) left out: not PNG, JPEG, GIF or WebP, "
                  "which is all a model is shown]"),
    )  # fmt: skip


async def test_audio_becomes_a_note_of_its_kind_and_size(tmp_path: Path) -> None:
    blocks: list[ContentBlock] = [AudioContent(data=b64(bytes(3_000)), mime_type="audio/wav")]
    assert await content_of(blocks, tmp_path) == (
        TextBlock("[audio (audio/wav, 3000 bytes) left out: it cannot be shown]"),
    )


async def test_an_embedded_text_resource_comes_after_its_address(tmp_path: Path) -> None:
    resource = TextResourceContents(uri="file:///notes.md", text="# Notes\nhello")
    assert await content_of([EmbeddedResource(resource=resource)], tmp_path) == (
        TextBlock("[resource file:///notes.md]\n# Notes\nhello"),
    )


async def test_an_embedded_binary_resource_is_described_never_sent(tmp_path: Path) -> None:
    blob = b64(bytes(range(256)) * 100)
    resource = BlobResourceContents(uri="db://dump", mime_type="application/x-sqlite3", blob=blob)
    content = await content_of([EmbeddedResource(resource=resource)], tmp_path)
    assert content == (
        TextBlock("[resource db://dump (application/x-sqlite3, 26 kB) is binary; not shown]"),
    )


async def test_a_resource_link_is_one_line(tmp_path: Path) -> None:
    links: list[ContentBlock] = [
        ResourceLink(uri="file:///a.txt", name="a", description="The first file"),
        ResourceLink(uri="file:///b.txt", name="b"),
    ]
    assert await content_of(links, tmp_path) == (
        TextBlock(
            "[resource link file:///a.txt (a): The first file]\n[resource link file:///b.txt (b)]"
        ),
    )


async def test_structured_content_is_shown_as_json_when_no_text_carries_it(tmp_path: Path) -> None:
    structured = {"city": "Oslo", "temperature": -3}
    output = await called(CallToolResult(content=[], structured_content=structured), tmp_path)
    assert output.content == (TextBlock(json.dumps(structured, indent=2)),)
    assert output.data == {"structuredContent": structured}

    said: list[ContentBlock] = [TextContent(text="It is cold.")]
    output = await called(CallToolResult(content=said, structured_content=structured), tmp_path)
    assert output.content == (TextBlock("It is cold.\n" + json.dumps(structured, indent=2)),)


async def test_structured_content_a_text_already_carries_is_not_repeated(tmp_path: Path) -> None:
    structured = {"city": "Oslo", "temperature": -3}
    for said, given in (
        (json.dumps(structured), structured),  # the whole of it, as JSON
        ("42", {"result": 42}),  # a plain value the server's SDK wrapped
        ("plain words", {"result": "plain words"}),
    ):
        result = CallToolResult(content=[TextContent(text=said)], structured_content=given)
        output = await called(result, tmp_path)
        assert output.content == (TextBlock(said),)
        assert output.data == {"structuredContent": given}


async def test_is_error_marks_the_result_an_error(tmp_path: Path) -> None:
    result = CallToolResult(content=[TextContent(text="no such city")], is_error=True)
    output = await called(result, tmp_path)
    assert output.is_error
    assert output.content == (TextBlock("no such city"),)


async def test_an_empty_result_says_so(tmp_path: Path) -> None:
    assert await content_of([], tmp_path) == (TextBlock(NOTHING_TEXT),)


async def test_an_image_whose_data_is_not_base64_becomes_a_note(tmp_path: Path) -> None:
    blocks: list[ContentBlock] = [ImageContent(data="not base64!", mime_type="image/png")]
    assert await content_of(blocks, tmp_path) == (
        TextBlock("[an image (image/png) left out: its data is not valid base64]"),
    )


async def test_a_large_image_that_cannot_be_decoded_becomes_a_note(tmp_path: Path) -> None:
    broken = b"\x89PNG\r\n\x1a\n" + bytes(4_000_000)  # a PNG's signature, then nothing sound
    blocks: list[ContentBlock] = [ImageContent(data=b64(broken), mime_type="image/png")]
    assert await content_of(blocks, tmp_path) == (
        TextBlock("[an image (4000 kB) left out: too large to send, and it could not be made "
                  "smaller]"),
    )  # fmt: skip
