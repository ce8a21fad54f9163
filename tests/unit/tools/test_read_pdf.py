"""Read on real PDFs written with pypdf: text per page, the `pages` field, its limits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.read_pdf import MAX_PAGES
from tests.unit.tools.helpers import run_tool, text_of
from tests.unit.tools.pdfs import write_pdf


class SmallRead(ReadTool):
    max_result_chars = 1000


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_a_pdf_is_shown_as_the_text_of_each_page(ctx: ToolContext) -> None:
    write_pdf(ctx.cwd / "a.pdf", ["First page (intro)", "", "Third page"])
    output = await run_tool(ReadTool(), ctx, file_path="a.pdf")
    assert text_of(output) == (
        '<page n="1">\nFirst page (intro)\n</page>\n\n'
        '<page n="2">\n(no text on this page: it may be a scanned image)\n</page>\n\n'
        '<page n="3">\nThird page\n</page>'
    )
    assert output.data == {
        "type": "pdf",
        "file_path": str(ctx.cwd / "a.pdf"),
        "num_pages": 3,
        "start_page": 1,
        "end_page": 3,
    }


@pytest.mark.parametrize(("pages", "shown"), [("2", [2]), ("2-3", [2, 3]), (" 3 - 9 ", [3, 4])])
async def test_pages_picks_one_page_or_a_range(
    ctx: ToolContext, pages: str, shown: list[int]
) -> None:
    write_pdf(ctx.cwd / "a.pdf", [f"text {n}" for n in range(1, 5)])
    text = text_of(await run_tool(ReadTool(), ctx, file_path="a.pdf", pages=pages))
    assert text == "\n\n".join(f'<page n="{n}">\ntext {n}\n</page>' for n in shown) + (
        ""
        if shown[-1] == 4
        else f"\n\n(Showing pages {shown[0]}-{shown[-1]} of 4. Read again "
        f'with pages="{shown[-1] + 1}-4" to continue.)'
    )


async def test_without_pages_a_long_pdf_shows_its_first_pages_and_says_how_to_go_on(
    ctx: ToolContext,
) -> None:
    write_pdf(ctx.cwd / "long.pdf", [f"page {n}" for n in range(1, 31)])
    text = text_of(await run_tool(ReadTool(), ctx, file_path="long.pdf"))
    assert f'<page n="{MAX_PAGES}">' in text
    assert f'<page n="{MAX_PAGES + 1}">' not in text
    assert text.endswith(
        f'(Showing pages 1-{MAX_PAGES} of 30. Read again with pages="{MAX_PAGES + 1}-30" '
        "to continue.)"
    )


async def test_pages_that_fill_the_result_cap_stop_at_a_page_boundary(ctx: ToolContext) -> None:
    write_pdf(ctx.cwd / "a.pdf", ["x" * 300, "y" * 300, "z" * 300])
    text = text_of(await run_tool(SmallRead(), ctx, file_path="a.pdf"))
    assert len(text) <= 1000
    assert text == (
        f'<page n="1">\n{"x" * 300}\n</page>\n\n<page n="2">\n{"y" * 300}\n</page>\n\n'
        '(Showing pages 1-2 of 3. Read again with pages="3-3" to continue.)'
    )


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ("0", "pages must be one page or a range of pages counting from 1"),
        ("5-2", "pages must be one page or a range"),
        ("one", "pages must be one page or a range"),
        ("1-21", 'names 21 pages; one read shows at most 20. Ask for fewer, such as "1-20"'),
        ("9", "has only 2 pages, so there is no page 9"),
    ],
)
async def test_bad_pages_say_what_to_ask_for(ctx: ToolContext, pages: str, message: str) -> None:
    write_pdf(ctx.cwd / "a.pdf", ["a", "b"])
    with pytest.raises(ToolFailure, match=message):
        await run_tool(ReadTool(), ctx, file_path="a.pdf", pages=pages)


async def test_pages_on_a_file_that_is_no_pdf_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("x")
    with pytest.raises(ToolFailure, match=r"pages is only for PDF files, .* leave it out"):
        await run_tool(ReadTool(), ctx, file_path="a.txt", pages="1")


async def test_a_broken_or_locked_pdf_is_a_clear_error(ctx: ToolContext) -> None:
    (ctx.cwd / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really\n")
    with pytest.raises(ToolFailure, match=r"Could not read .*broken\.pdf as a PDF"):
        await run_tool(ReadTool(), ctx, file_path="broken.pdf")
    write_pdf(ctx.cwd / "locked.pdf", ["secret"], password="pw")
    with pytest.raises(ToolFailure, match="protected by a password"):
        await run_tool(ReadTool(), ctx, file_path="locked.pdf")


async def test_reading_a_pdf_records_it_as_read(ctx: ToolContext) -> None:
    path = write_pdf(ctx.cwd / "a.pdf", ["a"])
    await run_tool(ReadTool(), ctx, file_path="a.pdf")
    assert ctx.read_files == {path.resolve(): path.stat().st_mtime_ns}


def test_pypdf_and_pillow_load_only_when_a_file_needs_them(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    write_pdf(tmp_path / "a.pdf", ["x"])
    Image.new("RGB", (3000, 10)).save(tmp_path / "wide.png")
    code = (
        "import asyncio, sys; from pathlib import Path; "
        "from stayer.tools.base import ToolContext; "
        "from stayer.tools.builtin.read import ReadInput, ReadTool; "
        f"ctx = ToolContext(cwd=Path({str(tmp_path)!r})); "
        "read = lambda name: asyncio.run(ReadTool().call(ReadInput(file_path=name), ctx)); "
        "loaded = lambda: print('pypdf' in sys.modules, 'PIL' in sys.modules); "
        "read('a.txt'); loaded(); read('wide.png'); loaded(); read('a.pdf'); loaded()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False", "False", "True", "True", "True"]
