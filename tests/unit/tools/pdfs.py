"""Small real PDFs for tests, written with pypdf itself: one line of Helvetica text a page."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import ContentStream, DictionaryObject, NameObject


def write_pdf(path: Path, texts: list[str], *, password: str | None = None) -> Path:
    """A PDF at `path` with one page per text (an empty text makes a page with no text)."""
    writer = PdfWriter()
    for text in texts:
        page = writer.add_blank_page(width=612, height=792)
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = ContentStream(None, None)
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1"))
        page.replace_contents(stream)
    if password is not None:
        writer.encrypt(password)
    with path.open("wb") as stream_out:
        writer.write(stream_out)
    return path
