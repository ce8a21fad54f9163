"""Where each value of a JSON document starts, so a problem found after decoding (a known key
with the wrong type) can be reported at its line and column in the file; and which keys are
given twice in one object, since `json` silently keeps only the last of them.

The document is decoded once more, by a small walker that records the offset of every value
under its path (`("permissions", "deny", 2)`); scalars and keys are read by the standard
decoder. A key given twice is found where its last value is, the one `json` keeps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from msgspec import Struct

Path = tuple[str | int, ...]

_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


class Layout(Struct, frozen=True):
    """Where a document's values are, by path, and the keys it gives twice."""

    offsets: dict[Path, int]
    repeated: tuple[Path, ...]
    """Each key given again in the same object, at its later place (the value `json` keeps)."""


def layout(text: str) -> Layout:
    """The layout of `text` (valid JSON); the root's path is `()`."""
    found: dict[Path, int] = {}
    repeated: list[Path] = []
    _value(text, _skip(text, 0), (), found, repeated)
    return Layout(found, tuple(repeated))


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset`."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def position(text: str, offsets: dict[Path, int], path: Sequence[str | int]) -> tuple[int, int]:
    """Line and column of the value at `path`, or of its nearest enclosing value that exists
    (a missing key is reported where the object that lacks it starts)."""
    key = tuple(path)
    while key and key not in offsets:
        key = key[:-1]
    return line_col(text, offsets.get(key, 0))


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _SPACE:
        index += 1
    return index


def _value(text: str, index: int, path: Path, found: dict[Path, int], repeated: list[Path]) -> int:
    """Record the value starting at `index` and those inside it; returns where it ends."""
    found[path] = index
    opener = text[index]
    if opener not in "{[":
        _, end = _DECODER.raw_decode(text, index)
        return end
    closer = "}" if opener == "{" else "]"
    index = _skip(text, index + 1)
    count = 0
    keys: set[str] = set()
    while text[index] != closer:
        if opener == "{":
            key, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index) + 1  # past the colon
            child: Path = (*path, str(key))
            if key in keys:
                repeated.append(child)
            keys.add(key)
        else:
            child = (*path, count)
            count += 1
        index = _skip(text, _value(text, _skip(text, index), child, found, repeated))
        if text[index] == ",":
            index = _skip(text, index + 1)
    return index + 1
