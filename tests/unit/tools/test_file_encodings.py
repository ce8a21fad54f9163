"""Files that are not plain UTF-8: Read says how it decoded them, Edit and Write keep them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stayer.tools.base import ToolContext, ToolFailure
from stayer.tools.builtin.edit import EditTool
from stayer.tools.builtin.read import ReadTool
from stayer.tools.builtin.textfile import SAMPLE_BYTES
from stayer.tools.builtin.write import WriteTool
from tests.unit.tools.helpers import run_tool, text_of

GERMAN = "# Grüße aus München\nname = 'Jürgen Müller'\nprice = '12 €'\n"
CP1252_NOTE = (
    "(This file is not UTF-8. It was decoded as windows-1252, a guess from its bytes, so some "
    "characters may show wrongly. Edit and Write keep it in windows-1252.)"
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_a_windows_1252_file_is_decoded_and_the_guess_is_named(ctx: ToolContext) -> None:
    (ctx.cwd / "de.py").write_bytes(GERMAN.encode("cp1252"))
    text = text_of(await run_tool(ReadTool(), ctx, file_path="de.py"))
    assert text == (
        "     1\t# Grüße aus München\n     2\tname = 'Jürgen Müller'\n     3\tprice = '12 €'"
        f"\n\n{CP1252_NOTE}"
    )


async def test_a_short_latin_1_file_reads_as_windows_1252(ctx: ToolContext) -> None:
    (ctx.cwd / "menu.txt").write_bytes("café\n".encode("latin-1"))
    text = text_of(await run_tool(ReadTool(), ctx, file_path="menu.txt"))
    assert text == f"     1\tcafé\n\n{CP1252_NOTE}"


@pytest.mark.parametrize(
    ("codec", "bom", "name"),
    [
        ("utf-8", b"\xef\xbb\xbf", "UTF-8"),
        ("utf-16-le", b"\xff\xfe", "UTF-16 LE"),
        ("utf-16-be", b"\xfe\xff", "UTF-16 BE"),
        ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32 LE"),
        ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32 BE"),
    ],
)
async def test_a_byte_order_mark_names_the_encoding(
    ctx: ToolContext, codec: str, bom: bytes, name: str
) -> None:
    (ctx.cwd / "marked.txt").write_bytes(bom + "héllo\r\nwörld €\r\n".encode(codec))
    text = text_of(await run_tool(ReadTool(), ctx, file_path="marked.txt"))
    assert text == (
        "     1\théllo\n     2\twörld €\n\n"
        f"(This file is {name} with a byte-order mark; Edit and Write keep it that way.)"
    )


async def test_bytes_past_the_sample_that_do_not_decode_are_counted(ctx: ToolContext) -> None:
    filler = "a" * 99 + "\n"
    lines = SAMPLE_BYTES // len(filler) + 10
    path = ctx.cwd / "log.txt"
    path.write_bytes(filler.encode() * lines + b"bad \xff\xfe here\n")
    text = text_of(await run_tool(ReadTool(), ctx, file_path="log.txt", offset=lines + 1))
    assert text == (
        f"{lines + 1:>6}\tbad \ufffd\ufffd here\n\n"
        "(2 bytes shown as \ufffd on this page are not valid UTF-8, so Edit will not change "
        "this file (it would lose them); Write can still replace it whole.)"
    )
    with pytest.raises(ToolFailure) as failure:
        await run_tool(EditTool(), ctx, file_path="log.txt", old_string="bad", new_string="ok")
    assert str(failure.value) == (
        f"{path} is not valid UTF-8 throughout (the byte at offset {len(filler) * lines + 4} "
        "does not decode), so Edit cannot change it without losing bytes. Use Bash for this "
        "file, or Write to replace it whole."
    )


async def test_a_utf_8_file_with_a_stray_byte_stays_utf_8(ctx: ToolContext) -> None:
    (ctx.cwd / "notes.txt").write_bytes("café, déjà vu\n".encode() + b"odd \xe9 byte\n")
    text = text_of(await run_tool(ReadTool(), ctx, file_path="notes.txt"))
    assert text == (
        "     1\tcafé, déjà vu\n     2\todd \ufffd byte\n\n"
        "(1 byte shown as \ufffd on this page is not valid UTF-8, so Edit will not change "
        "this file (it would lose it); Write can still replace it whole.)"
    )


async def test_an_edit_keeps_a_windows_1252_file_and_its_other_bytes(ctx: ToolContext) -> None:
    path = ctx.cwd / "de.py"
    more = "".join(f"zeile_{n} = 'Überprüfung der Größe Nr. {n} für Straße'\n" for n in range(5))
    original = (GERMAN + more).encode("cp1252")
    path.write_bytes(original)
    await run_tool(ReadTool(), ctx, file_path="de.py")
    output = await run_tool(
        EditTool(), ctx, file_path="de.py", old_string="Jürgen", new_string="Jörg"
    )
    assert path.read_bytes() == original.replace(b"J\xfcrgen", b"J\xf6rg")
    assert text_of(output).startswith(
        f"Edited {path}: replaced 1 occurrence. It stays windows-1252. The region now reads:\n"
    )
    assert "     2\tname = 'Jörg Müller'" in text_of(output)


async def test_an_edit_needing_a_character_the_encoding_lacks_is_refused(
    ctx: ToolContext,
) -> None:
    path = ctx.cwd / "de.py"
    path.write_bytes(GERMAN.encode("cp1252"))
    await run_tool(ReadTool(), ctx, file_path="de.py")
    with pytest.raises(ToolFailure) as failure:
        await run_tool(EditTool(), ctx, file_path="de.py", old_string="12 €", new_string="12 → €")
    assert str(failure.value) == (
        f"Could not write {path}: '→' cannot be stored in windows-1252, the file's encoding, so "
        "nothing was written. Use only characters windows-1252 has, or first convert the file "
        "to UTF-8 through Bash (for example with iconv)."
    )
    assert path.read_bytes() == GERMAN.encode("cp1252")


async def test_an_edit_of_a_utf_16_file_keeps_its_mark_and_encoding(ctx: ToolContext) -> None:
    path = ctx.cwd / "notes.txt"
    path.write_bytes(b"\xff\xfe" + "one\r\ntwo\r\n".encode("utf-16-le"))
    await run_tool(ReadTool(), ctx, file_path="notes.txt")
    output = await run_tool(
        EditTool(), ctx, file_path="notes.txt", old_string="two", new_string="zwei"
    )
    assert path.read_bytes() == b"\xff\xfe" + "one\r\nzwei\r\n".encode("utf-16-le")
    assert "It stays UTF-16 LE with a byte-order mark." in text_of(output)


async def test_write_keeps_the_encoding_of_the_file_it_replaces(ctx: ToolContext) -> None:
    path = ctx.cwd / "de.py"
    path.write_bytes(GERMAN.encode("cp1252"))
    await run_tool(ReadTool(), ctx, file_path="de.py")
    output = await run_tool(WriteTool(), ctx, file_path="de.py", content="größe = 1\n")
    assert path.read_bytes() == "größe = 1\n".encode("cp1252")
    assert text_of(output) == f"Updated {path} (1 line). It stays windows-1252."


def test_the_encoding_guesser_loads_only_for_a_file_that_is_not_utf_8(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("héllo\n")
    (tmp_path / "legacy.txt").write_bytes("héllo\n".encode("cp1252"))
    code = (
        "import asyncio, sys; from pathlib import Path; "
        "from stayer.tools.base import ToolContext; "
        "from stayer.tools.builtin.read import ReadInput, ReadTool; "
        f"ctx = ToolContext(cwd=Path({str(tmp_path)!r})); "
        "read = lambda name: asyncio.run(ReadTool().call(ReadInput(file_path=name), ctx)); "
        "read('plain.txt'); print('charset_normalizer' in sys.modules); "
        "read('legacy.txt'); print('charset_normalizer' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


@pytest.mark.parametrize(("codec", "bom"), [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe")])
async def test_an_edit_keeps_a_second_mark_after_the_file_s_own(
    ctx: ToolContext, codec: str, bom: bytes
) -> None:
    # Past the file's own mark, U+FEFF is text like any other, and an unrelated edit keeps it.
    path = ctx.cwd / "twice.txt"
    path.write_bytes(bom + bom + "hello\nworld\n".encode(codec))
    await run_tool(ReadTool(), ctx, file_path="twice.txt")
    output = await run_tool(
        EditTool(), ctx, file_path="twice.txt", old_string="world", new_string="there"
    )
    assert path.read_bytes() == bom + bom + "hello\nthere\n".encode(codec)
    assert text_of(output).startswith(f"Edited {path}: replaced 1 occurrence.")


async def test_write_to_a_marked_file_writes_its_mark_once(ctx: ToolContext) -> None:
    path = ctx.cwd / "marked.txt"
    path.write_bytes(b"\xef\xbb\xbfold\n")
    await run_tool(ReadTool(), ctx, file_path="marked.txt")
    output = await run_tool(WriteTool(), ctx, file_path="marked.txt", content="\ufeffnew\n")
    assert path.read_bytes() == b"\xef\xbb\xbfnew\n"
    assert text_of(output) == (f"Updated {path} (1 line). It stays UTF-8 with a byte-order mark.")
