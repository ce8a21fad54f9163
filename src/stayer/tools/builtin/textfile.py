"""How a text file's bytes become the text the tools show, and go back to the same bytes.

UTF-8 is the rule. A byte-order mark names the encoding outright (UTF-8, UTF-16, UTF-32, either
byte order); any other file that is not UTF-8 is decoded with a guess from charset-normalizer,
imported only then, so start-up and ordinary files never pay for it. Read, Edit and Write all
decide from the same first `SAMPLE_BYTES` of the file, so they agree: Read says which encoding it
used, and Edit and Write write the file back in it (or refuse), so a file never silently becomes
UTF-8 or loses a byte (Claude Code, too, keeps a file's encoding when it edits it).
"""

from __future__ import annotations

import codecs
import io
from pathlib import Path
from typing import TextIO

from msgspec import Struct

from stayer.tools.base import ToolFailure

SAMPLE_BYTES = 1 << 20
"""How much of a file decides its encoding."""

UNDECODABLE = "\udcff"
"""What a byte that does not decode turns into while reading (no decoder yields a lone
surrogate, so it cannot be mistaken for text); Read counts these and shows them as U+FFFD."""

BYTE_ORDER_MARK = "\ufeff"
"""The character a byte-order mark decodes to; past the file's own mark it is text like any."""

_ERRORS = "stayer.undecodable"

# fmt: off
BINARY_EXTENSIONS = frozenset({
    ".7z", ".a", ".avi", ".bin", ".bmp", ".bz2", ".class", ".dat", ".db", ".dll", ".dmg",
    ".doc", ".docx", ".dylib", ".eot", ".exe", ".flac", ".gz", ".ico", ".iso", ".jar", ".lz4",
    ".mkv", ".mov", ".mp3", ".mp4", ".o", ".obj", ".ogg", ".otf", ".parquet", ".pdf", ".pkl",
    ".ppt", ".pptx", ".pyc", ".pyd", ".pyo", ".so", ".sqlite", ".sqlite3", ".tar", ".tgz",
    ".tif", ".tiff", ".ttf", ".wasm", ".wav", ".webm", ".whl", ".woff", ".woff2", ".xls",
    ".xlsx", ".xz", ".zip", ".zst",
})
# fmt: on
"""Extensions of files that hold no text, whatever their first bytes look like (Read refuses
them; an editor never gets them)."""


def _mark_undecodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return UNDECODABLE * (error.end - error.start), error.end


codecs.register_error(_ERRORS, _mark_undecodable)


class TextEncoding(Struct, frozen=True):
    """How one file's text is stored: a codec, and the byte-order mark before it, if any."""

    codec: str
    name: str
    bom: bytes = b""
    guessed: bool = False

    @property
    def is_plain_utf8(self) -> bool:
        """UTF-8 without a byte-order mark: nothing worth telling the model."""
        return self.codec == "utf-8" and not self.bom

    @property
    def described(self) -> str:
        """The encoding as a message names it."""
        return f"{self.name} with a byte-order mark" if self.bom else self.name

    def decode(self, data: bytes) -> str:
        """The whole file's text; raises `UnicodeDecodeError` for a byte that does not fit."""
        return data[len(self.bom) :].decode(self.codec)

    def encode(self, text: str) -> bytes:
        """The file's bytes for `text`, the exact inverse of `decode`; raises
        `UnicodeEncodeError` for a character that does not fit."""
        return self.bom + text.encode(self.codec)


UTF8 = TextEncoding("utf-8", "UTF-8")

# UTF-32 LE first: its mark begins with UTF-16 LE's.
_MARKED = (
    TextEncoding("utf-32-le", "UTF-32 LE", codecs.BOM_UTF32_LE),
    TextEncoding("utf-32-be", "UTF-32 BE", codecs.BOM_UTF32_BE),
    TextEncoding("utf-8", "UTF-8", codecs.BOM_UTF8),
    TextEncoding("utf-16-le", "UTF-16 LE", codecs.BOM_UTF16_LE),
    TextEncoding("utf-16-be", "UTF-16 BE", codecs.BOM_UTF16_BE),
)


def marked_encoding(sample: bytes) -> TextEncoding | None:
    """The encoding a byte-order mark at the start of `sample` names, if there is one."""
    return next((encoding for encoding in _MARKED if sample.startswith(encoding.bom)), None)


def read_sample(path: Path) -> bytes:
    """The start of the file that decides its encoding (raises `OSError`)."""
    with path.open("rb") as stream:
        return stream.read(SAMPLE_BYTES)


def encoding_of(sample: bytes) -> TextEncoding:
    """The encoding of a file whose first `SAMPLE_BYTES` (or all, if shorter) are `sample`."""
    marked = marked_encoding(sample)
    if marked is not None:
        return marked
    whole = len(sample) < SAMPLE_BYTES
    if _decodes(sample, "utf-8", whole=whole) or _mostly_utf8(sample):
        return UTF8
    return _guess(sample, whole=whole)


def _mostly_utf8(sample: bytes) -> bool:
    """Whether `sample` is UTF-8 with a few stray bytes: more characters decode as UTF-8
    beyond ASCII than bytes fail to. Text in a legacy encoding almost never holds a valid
    multi-byte UTF-8 sequence, while a UTF-8 file with one bad byte is best shown as UTF-8
    (the bad byte marked) rather than as mojibake in a guessed code page."""
    text = sample.decode("utf-8", errors=_ERRORS)
    bad = text.count(UNDECODABLE)
    beyond_ascii = len(text) - len(text.encode("ascii", errors="ignore"))
    return beyond_ascii - bad > bad


def decodes_throughout(sample: bytes, encoding: TextEncoding) -> bool:
    """Whether `sample` is the whole file and every byte of it decodes."""
    whole = len(sample) < SAMPLE_BYTES
    return whole and _decodes(sample[len(encoding.bom) :], encoding.codec, whole=True)


def _decodes(sample: bytes, codec: str, *, whole: bool) -> bool:
    # A sample that stops early may end inside a character; only a whole file must not.
    try:
        codecs.getincrementaldecoder(codec)().decode(sample, final=whole)
    except UnicodeDecodeError:
        return False
    return True


def _guess(sample: bytes, *, whole: bool) -> TextEncoding:
    """charset-normalizer's best reading of `sample`, preferring windows-1252 on a tie.

    Short samples leave many code pages equally clean (``café`` reads without a flaw in a dozen
    of them); windows-1252 is by far the most common non-UTF-8 encoding of such files, so it
    wins whenever it reads at least as cleanly. ISO-8859-1, which decodes any byte, is the last
    resort.
    """
    from charset_normalizer import from_bytes  # only for files that are not UTF-8

    best = from_bytes(sample).best()
    western = from_bytes(sample, cp_isolation=["cp1252"]).best()
    if western is not None and (best is None or western.chaos <= best.chaos):
        best = western
    codec = best.encoding if best is not None else "latin-1"
    if not _decodes(sample, codec, whole=whole):
        codec = "latin-1"
    return TextEncoding(codec, _common_name(codec), guessed=True)


def _common_name(codec: str) -> str:
    name = codecs.lookup(codec).name
    if name.startswith("cp125"):
        return f"windows-{name[2:]}"
    if name.startswith("iso8859-"):
        return f"ISO-8859-{name.removeprefix('iso8859-')}"
    return name


def open_text(path: Path, encoding: TextEncoding) -> TextIO:
    """The file as text after its byte-order mark, with newlines made ``\\n``; a byte that
    does not decode reads as `UNDECODABLE` (raises `OSError`)."""
    raw = path.open("rb")
    try:
        raw.seek(len(encoding.bom))
        return io.TextIOWrapper(raw, encoding=encoding.codec, errors=_ERRORS)
    except BaseException:
        raw.close()
        raise


def load_text(path: Path) -> tuple[str, TextEncoding]:
    """A file's whole text and its encoding, for changing it; `ToolFailure` unless the text
    would be written back as the very same bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolFailure(f"Could not read {path}: {exc.strerror or exc}.") from None
    encoding = encoding_of(data[:SAMPLE_BYTES])
    try:
        text = encoding.decode(data)
    except UnicodeDecodeError as exc:
        raise ToolFailure(
            f"{path} is not valid {encoding.described} throughout (the byte at offset "
            f"{exc.start + len(encoding.bom)} does not decode), so Edit cannot change it without "
            "losing bytes. Use Bash for this file, or Write to replace it whole."
        ) from None
    if encoding.guessed and encoding.encode(text) != data:
        raise ToolFailure(
            f"{path} would not be written back byte for byte in {encoding.name} (the encoding "
            "guessed for it), so Edit will not change it. Use Bash for this file."
        )
    return text, encoding


def encode_for(path: Path, text: str, encoding: TextEncoding) -> bytes:
    """`text` as the bytes of `path` in `encoding`; `ToolFailure` naming a character that
    does not fit."""
    try:
        return encoding.encode(text)
    except UnicodeEncodeError as exc:
        if encoding.codec.startswith("utf-"):  # only a lone surrogate fails here
            raise ToolFailure(
                f"Could not write {path}: the text is not valid Unicode ({exc})."
            ) from None
        bad = exc.object[exc.start : exc.end][:10]
        raise ToolFailure(
            f"Could not write {path}: {bad!r} cannot be stored in {encoding.name}, the file's "
            f"encoding, so nothing was written. Use only characters {encoding.name} has, or "
            "first convert the file to UTF-8 through Bash (for example with iconv)."
        ) from None


def kept_note(encoding: TextEncoding) -> str:
    """The sentence an Edit or Write result adds when the file keeps an encoding worth naming."""
    return "" if encoding.is_plain_utf8 else f" It stays {encoding.described}."
