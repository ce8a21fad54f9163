"""PDFs for the Read tool: the text of each page, a range of pages at a time.

Text comes from pypdf, imported only when a PDF is read so start-up never pays for it. As in
Claude Code, the `pages` field picks pages ("3", "1-5") and one read shows at most
`MAX_PAGES`; a PDF read without it starts at page 1 and says where to go on.
"""

from __future__ import annotations

import re
from pathlib import Path

from stayer.tools.base import ToolFailure, ToolOutput
from stayer.tools.builtin import plural

MAX_PAGES = 20
"""The most pages one read shows."""

_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_pages(spec: str) -> tuple[int, int]:
    """The first and last page (1-based, inclusive) that `spec` ("3", "1-5") names."""
    match = _RANGE.fullmatch(spec)
    first = int(match.group(1)) if match else 0
    last = int(match.group(2) or first) if match else 0
    if first < 1 or last < first:
        raise ToolFailure(
            f'pages must be one page or a range of pages counting from 1, such as "3" or '
            f'"1-5"; got {spec!r}.'
        )
    if last - first + 1 > MAX_PAGES:
        raise ToolFailure(
            f"pages {spec!r} names {last - first + 1} pages; one read shows at most "
            f'{MAX_PAGES}. Ask for fewer, such as "{first}-{first + MAX_PAGES - 1}".'
        )
    return first, last


def pdf_output(path: Path, pages: str | None, max_chars: int) -> ToolOutput:
    """The text of the pages `pages` names (the first `MAX_PAGES` without it), within
    `max_chars`."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    first, last = parse_pages(pages) if pages is not None else (1, MAX_PAGES)
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolFailure(f"{path} is a PDF protected by a password; Read cannot open it.")
        total = len(reader.pages)
        if first > total:
            raise ToolFailure(
                f"{path} has only {plural(total, 'page')}, so there is no page {first}."
            )
        last = min(last, total)
        texts = [
            (number, reader.pages[number - 1].extract_text()) for number in range(first, last + 1)
        ]
    except (PyPdfError, OSError, ValueError, KeyError) as exc:
        raise ToolFailure(f"Could not read {path} as a PDF: {exc}") from None
    return _pages_output(path, texts, total, max_chars)


def _pages_output(
    path: Path, texts: list[tuple[int, str]], total: int, max_chars: int
) -> ToolOutput:
    room = max_chars - 300  # the closing note and a cut's marker
    parts: list[str] = []
    size = 0
    shown = texts[0][0] - 1
    for number, text in texts:
        body = text.strip() or "(no text on this page: it may be a scanned image)"
        part = f'<page n="{number}">\n{body}\n</page>'
        if parts and size + len(part) + 2 > room:
            break
        if len(part) > room:
            cut = len(part) - room
            part = f"{part[:room]}\n[... {cut} more characters of page {number} not shown]"
        parts.append(part)
        size += len(part) + 2
        shown = number
    first = texts[0][0]
    text = "\n\n".join(parts)
    if shown < total:
        end = min(total, shown + MAX_PAGES)
        text += (
            f'\n\n(Showing pages {first}-{shown} of {total}. Read again with pages="{shown + 1}-'
            f'{end}" to continue.)'
        )
    data = {"type": "pdf", "file_path": str(path), "num_pages": total, "start_page": first}
    return ToolOutput(content=text, data={**data, "end_page": shown})
