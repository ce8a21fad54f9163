"""Read on real notebooks: cells with ids, types and outputs; images; paging by cells."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from stayer.messages import ImageBlock, TextBlock
from stayer.tools.base import ToolContext, ToolFailure, ToolOutput
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.read_notebook import MAX_OUTPUT_CHARS
from tests.unit.tools.helpers import run_tool, text_of

PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


class SmallRead(ReadTool):
    max_result_chars = 1000


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def write(ctx: ToolContext, cells: list[dict[str, Any]], *, minor: int = 5) -> str:
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}
    (ctx.cwd / "a.ipynb").write_text(json.dumps(notebook, indent=1))
    return "a.ipynb"


def code(
    source: str, *outputs: dict[str, Any], count: int | None = 1, **extra: Any
) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "source": source.splitlines(keepends=True),
        "outputs": list(outputs),
        **extra,
    }


def parts(output: ToolOutput) -> tuple[str, list[ImageBlock]]:
    assert isinstance(output.content, tuple)
    text, *images = output.content
    assert isinstance(text, TextBlock)
    assert all(isinstance(image, ImageBlock) for image in images)
    return text.text, [image for image in images if isinstance(image, ImageBlock)]


async def test_cells_are_shown_with_ids_types_and_outputs(ctx: ToolContext) -> None:
    name = write(
        ctx,
        [
            {
                "cell_type": "markdown",
                "id": "intro",
                "metadata": {},
                "source": ["# Title\n", "Words"],
            },
            code(
                "print('hi')\n1 + 1",
                {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
                {
                    "output_type": "execute_result",
                    "execution_count": 3,
                    "data": {"text/plain": ["2"], "text/html": ["<b>2</b>"]},
                    "metadata": {},
                },
                id="calc",
                count=3,
            ),
            code(
                "1/0",
                {
                    "output_type": "error",
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                },
                id="oops",
                count=4,
            ),
            code("", count=None, id="empty"),
        ],
    )
    output = await run_tool(ReadTool(), ctx, file_path=name)
    text, images = parts(output)
    assert text == (
        '<cell n="1" id="intro" type="markdown">\n# Title\nWords\n</cell>\n\n'
        '<cell n="2" id="calc" type="code" execution_count="3">\nprint(\'hi\')\n1 + 1\n'
        '<output type="stream" name="stdout">\nhi\n</output>\n'
        '<output type="execute_result">\n2\n</output>\n</cell>\n\n'
        '<cell n="3" id="oops" type="code" execution_count="4">\n1/0\n'
        '<output type="error">\nZeroDivisionError: division by zero\n'
        "ZeroDivisionError: division by zero\n</output>\n</cell>\n\n"
        '<cell n="4" id="empty" type="code">\n\n</cell>'
    )
    assert images == []
    assert output.data == {
        "type": "notebook",
        "file_path": str(ctx.cwd / name),
        "num_cells": 4,
        "start_cell": 1,
        "end_cell": 4,
    }


async def test_cells_without_ids_are_named_as_notebook_edit_names_them(ctx: ToolContext) -> None:
    name = write(ctx, [code("a = 1"), code("b = 2")], minor=4)
    text, _ = parts(await run_tool(ReadTool(), ctx, file_path=name))
    assert '<cell n="1" id="cell-0" type="code"' in text
    assert '<cell n="2" id="cell-1" type="code"' in text


async def test_images_in_outputs_are_returned_after_the_text(ctx: ToolContext) -> None:
    wrapped = [PNG_1X1[:40] + "\n", PNG_1X1[40:]]  # nbformat may split base64 into lines
    name = write(
        ctx,
        [
            code(
                "plot()",
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"image/png": wrapped, "text/plain": ["<Figure>"]},
                },
                id="p",
            ),
            code(
                "widget",
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"application/vnd.jupyter.widget-view+json": {}},
                },
                id="w",
            ),
        ],
    )
    text, images = parts(await run_tool(ReadTool(), ctx, file_path=name))
    assert images == [ImageBlock(media_type="image/png", data=PNG_1X1)]
    assert base64.b64decode(images[0].data).startswith(b"\x89PNG")
    assert (
        '<output type="display_data">\n(image/png image 1, shown after the cells)\n<Figure>\n'
        "</output>" in text
    )
    assert (
        '<output type="display_data">\n(an output of '
        "application/vnd.jupyter.widget-view+json, not shown)\n</output>" in text
    )


async def test_a_long_output_keeps_its_start(ctx: ToolContext) -> None:
    long = "x" * (MAX_OUTPUT_CHARS + 5)
    name = write(ctx, [code("spam()", {"output_type": "stream", "name": "stdout", "text": long})])
    text, _ = parts(await run_tool(ReadTool(), ctx, file_path=name))
    assert f"\n{'x' * MAX_OUTPUT_CHARS}\n[... 5 more characters not shown]\n</output>" in text


async def test_a_large_notebook_is_read_a_few_cells_at_a_time(ctx: ToolContext) -> None:
    name = write(ctx, [code(f"cell_{n} = '{'y' * 200}'", id=f"c{n}") for n in range(1, 11)])
    text, _ = parts(await run_tool(SmallRead(), ctx, file_path=name))
    assert len(text) <= 1000
    assert '<cell n="2" id="c2"' in text
    assert '<cell n="3"' not in text
    assert text.endswith(
        "(Showing cells 1-2 of 10. Read again with offset=3 to continue (for a notebook, "
        "offset and limit count cells).)"
    )
    text, _ = parts(await run_tool(ReadTool(), ctx, file_path=name, offset=9, limit=1))
    assert text.startswith('<cell n="9" id="c9"')
    assert text.endswith(
        "(Showing cells 9-9 of 10. Read again with offset=10 to continue "
        "(for a notebook, offset and limit count cells).)"
    )
    assert '<cell n="10"' not in text


async def test_an_image_of_a_cell_left_for_the_next_read_is_not_sent(ctx: ToolContext) -> None:
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG_1X1}}
    name = write(ctx, [code("z" * 700, id="big"), code("plot()", image, id="later")])
    text, images = parts(await run_tool(SmallRead(), ctx, file_path=name))
    assert '<cell n="2"' not in text
    assert images == []


async def test_offset_past_the_last_cell_says_how_many_there_are(ctx: ToolContext) -> None:
    name = write(ctx, [code("a")])
    with pytest.raises(ToolFailure, match="has only 1 cell, so there is nothing at offset 5"):
        await run_tool(ReadTool(), ctx, file_path=name, offset=5)


async def test_a_file_named_ipynb_that_is_no_notebook_is_shown_as_text(ctx: ToolContext) -> None:
    (ctx.cwd / "bad.ipynb").write_text('{"cells": oops}\n')
    output = await run_tool(ReadTool(), ctx, file_path="bad.ipynb")
    assert text_of(output) == '     1\t{"cells": oops}'
