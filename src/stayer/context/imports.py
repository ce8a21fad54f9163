"""The `@path` imports a memory file names, read as Claude Code reads them.

An import is `@` at the start of a line or after white space, then a path up to the next white
space (`\\ ` keeps a space in it). A `#fragment` is dropped. Text in code is never an import, so
a file can show the syntax: fenced blocks (``` or ~~~), indented code blocks and inline code
spans are skipped, as Claude Code's Markdown lexer skips them. Only a path that can be a path
counts (`./`, `~/`, `/x`, or a letter, digit, `.`, `_` or `-` first), so `@@` or `@#` is prose.
"""

from __future__ import annotations

import bisect
import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_BACKTICKS = re.compile(r"`+")
_PATH_START = re.compile(r"[A-Za-z0-9._-]")


def import_paths(text: str) -> list[str]:
    """The paths `text` imports, in the order written, as written (not yet resolved)."""
    found: list[str] = []
    for paragraph in _prose_paragraphs(text):
        for match in _IMPORT.finditer(_without_code_spans(paragraph)):
            path = match.group(1).replace("\\ ", " ").split("#", 1)[0]
            if _can_be_path(path):
                found.append(path)
    return found


def _can_be_path(path: str) -> bool:
    if path.startswith(("./", "~/")):
        return True
    if path.startswith("/"):
        return path != "/"
    return bool(_PATH_START.match(path))


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _prose_paragraphs(text: str) -> list[str]:
    """The paragraphs of `text` outside fenced and indented code blocks."""
    paragraphs: list[list[str]] = [[]]
    fence: str | None = None
    in_indented = False
    in_list = False
    previous_blank = True
    for line in text.splitlines():
        blank = not line.strip()
        if fence is not None:
            fence = None if _closes(line, fence) else fence
        elif opened := _FENCE.match(line):
            if not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
                fence = opened.group(1)
                paragraphs.append([])
            else:
                paragraphs[-1].append(line)
        elif in_indented and (blank or _indent(line) >= 4):
            pass
        elif not blank and _indent(line) >= 4 and previous_blank and not in_list:
            in_indented = True
            paragraphs.append([])
        elif blank:
            in_indented = False
            paragraphs.append([])
        else:
            in_indented = False
            if _indent(line) < 4:
                in_list = bool(_LIST_ITEM.match(line)) or (in_list and not previous_blank)
            paragraphs[-1].append(line)
        previous_blank = blank
    return ["\n".join(lines) for lines in paragraphs if lines]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        _indent(line) < 4 and len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)
    )


def _without_code_spans(paragraph: str) -> str:
    """`paragraph` with each inline code span blanked out: a run of n backticks up to the next
    run of exactly n; a run with no partner is literal text."""
    runs = list(_BACKTICKS.finditer(paragraph))
    by_length: dict[int, list[int]] = {}
    for index, run in enumerate(runs):
        by_length.setdefault(len(run.group()), []).append(index)
    kept: list[str] = []
    position = index = 0
    while index < len(runs):
        same = by_length[len(runs[index].group())]
        later = bisect.bisect_right(same, index)
        if later == len(same):
            index += 1
            continue
        closer = same[later]
        kept.append(paragraph[position : runs[index].start()] + " ")
        position = runs[closer].end()
        index = closer + 1
    kept.append(paragraph[position:])
    return "".join(kept)
