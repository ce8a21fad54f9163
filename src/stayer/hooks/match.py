"""Which handlers an event's matcher selects, by Claude Code's rules.

Empty or `*` selects every subject; a matcher of letters, digits, `_` and `|` is a list of
exact names (`Edit|Write`); anything else is a regular expression searched in the subject
(`mcp__.*`, `Notebook.*`). A pattern that does not compile is refused where the hook is
given (`stayer.config.model.matcher_problem`: a settings file, the SDK's `initialize`), and
selects nothing should one get here all the same. A tool's
old name and its new one are the same tool (`Task` and `Agent`): either selects a call made
by either.
"""

from __future__ import annotations

import re
from functools import lru_cache

from stayer.tools.names import TOOL_ALIASES

_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def matches(matcher: str, subject: str | None) -> bool:
    """Whether `matcher` selects `subject`; an event with no subject (Stop, UserPromptSubmit)
    runs every handler, whatever its matcher says, as in Claude Code."""
    matcher = matcher.strip()
    if subject is None or matcher in ("", "*"):
        return True
    subjects = {subject, TOOL_ALIASES.get(subject, subject)}
    if _NAMES.fullmatch(matcher):
        named = {TOOL_ALIASES.get(name, name) for name in matcher.split("|")}
        return bool(subjects & named)
    pattern = _compiled(matcher)
    return pattern is not None and any(pattern.search(each) for each in subjects)


@lru_cache(maxsize=128)
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None
