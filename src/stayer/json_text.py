"""JSON text that always encodes as UTF-8, for every writer of model, tool or user text.

Python strings can hold a lone UTF-16 surrogate (U+D800-U+DFFF not in a pair): JSON's
`"\\ud800"` escape reads as one, and a model or a tool may send it. `json.dumps` with
`ensure_ascii=False` keeps it as is, and encoding that text as UTF-8 then fails: the line is
lost with a traceback. `dumps` writes what `json.dumps` would, with each lone surrogate
replaced by U+FFFD, the replacement character, as a UTF-8 decoder does for bytes it cannot read.
"""

from __future__ import annotations

import json
import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""One UTF-16 surrogate: in a Python string (where a pair read from JSON is one character
already) it is always a lone one."""

COMPACT = (",", ":")


def dumps(
    value: Any,
    *,
    separators: tuple[str, str] | None = COMPACT,
    indent: int | None = None,
    allow_nan: bool = True,
) -> str:
    """`value` as JSON text, non-ASCII kept as is, lone surrogates replaced (see the module)."""
    text = json.dumps(
        value, ensure_ascii=False, separators=separators, indent=indent, allow_nan=allow_nan
    )
    return encodable(text)


def encodable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: it always encodes as UTF-8."""
    return text if text.isascii() else LONE_SURROGATE.sub("\ufffd", text)


def has_lone_surrogate(value: object) -> bool:
    """Whether any string in `value` (JSON as read: keys included) holds a lone surrogate;
    walks without recursion, so no nesting `json` could read makes it fail."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False
