"""Writing a literal path into a glob pattern, so the path's own `*`, `?`, `[` or `\\` is no
part of the pattern (a project folder named `proj[1]` is no character class)."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([*?\[\\])")


def glob_literal(text: str) -> str:
    """`text` as a pattern that matches just itself (gitignore and ripgrep escapes)."""
    return _SPECIAL.sub(r"\\\1", text)
