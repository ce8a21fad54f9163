"""Which handlers an event's matcher selects, by Claude Code's rules.

Empty or `*` selects every subject; a matcher of letters, digits, `_` and `|` is a list of
exact names (`Edit|Write`); anything else is a regular expression searched in the subject
(`mcp__.*`, `Notebook.*`). A pattern that does not compile selects nothing (the settings
loader cannot know which strings are meant as patterns, so it is not an error there).
"""

from __future__ import annotations

import re
from functools import lru_cache

_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def matches(matcher: str, subject: str | None) -> bool:
    """Whether `matcher` selects `subject`; an event with no subject (Stop, UserPromptSubmit)
    runs every handler, whatever its matcher says, as in Claude Code."""
    matcher = matcher.strip()
    if subject is None or matcher in ("", "*"):
        return True
    if _NAMES.fullmatch(matcher):
        return subject in matcher.split("|")
    pattern = _compiled(matcher)
    return pattern is not None and pattern.search(subject) is not None


@lru_cache(maxsize=128)
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None
