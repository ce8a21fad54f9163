"""Streamed markdown cut into blocks that can be shown for good as soon as they are complete.

Text arrives from the model a few characters at a time. A block (a paragraph, a heading, a run
of list items, a fenced code block, a table, a quote, a rule) is complete once something after
it shows it cannot grow any more: a blank line ends a paragraph, a closing fence ends a code
block (blank lines inside it do not), a line of another kind ends the block before it. The view
prints a complete block once, into the scrollback, and keeps only the block still growing (and
the line still being written) on screen to redraw.
"""

from __future__ import annotations

import re
from typing import Literal

BlockKind = Literal["paragraph", "heading", "list", "code", "table", "quote", "rule"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])(\s|$)")
_RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_TABLE_ROW = re.compile(r"^ {0,3}\|")
_QUOTE = re.compile(r"^ {0,3}>")
_SPLITTABLE = ("paragraph", "list", "code", "quote")


class MarkdownStream:
    """Takes text as it streams and hands back each block once it is complete."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._kind: BlockKind | None = None
        self._fence = ""
        self._blank_in_list = False
        self._partial = ""

    def feed(self, text: str) -> list[str]:
        """Add streamed text; the blocks it completed, as markdown source, in order."""
        done: list[str] = []
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            done.extend(self._line(line))
        return done

    def pending(self) -> str:
        """The block still growing and the line being written, as markdown source."""
        lines = [*self._lines, self._partial] if self._partial else self._lines
        return "\n".join(lines).strip("\n")

    def pending_shown(self) -> str:
        """`pending()` with an emphasis or inline code left open closed, so a half-streamed
        `**bold` is drawn bold at once rather than as asterisks that vanish later."""
        source = self.pending()
        if self._kind == "code" or not source:
            return source
        for marker in ("`", "**"):
            if source.count(marker) % 2:
                source = source.rstrip() + marker
        return source

    def split(self, keep: int) -> str | None:
        """Cut the growing block in two when it can be, so its head can be printed for good:
        the head as markdown that renders on its own (a code block's head gets a closing fence,
        its tail the opening one again), and all but the last `keep` complete lines of it.
        None when the block is too short or of a kind that cannot be cut (a table, whose rows
        need its header)."""
        cut = len(self._lines) - keep
        if self._kind == "list":  # only before an item, so no item is torn from its marker
            while cut > 0 and not _LIST_ITEM.match(self._lines[cut]):
                cut -= 1
        if cut <= (1 if self._kind == "code" else 0) or self._kind not in _SPLITTABLE:
            return None
        head, tail = self._lines[:cut], self._lines[cut:]
        if self._kind == "code":
            opening = head[0]
            head = [*head, opening.strip()[0] * len(self._fence)]
            tail = [opening, *tail]
        self._lines = tail
        self._blank_in_list = False
        return "\n".join(head).strip("\n")

    def split_at(self, offset: int) -> str | None:
        """Cut a growing paragraph at `offset` into its pending text (a word boundary the
        caller found, where its rendering wraps anyway): the head, to be printed for good, is
        returned and the rest goes on growing. None for any other kind of block."""
        if not self.in_paragraph:
            return None
        whole = "\n".join([*self._lines, self._partial])
        head, rest = whole[:offset], whole[offset:].lstrip(" \n")
        parts = rest.split("\n")
        self._lines, self._partial = parts[:-1], parts[-1]
        self._kind = "paragraph" if self._lines else None
        return head.strip("\n")

    @property
    def in_paragraph(self) -> bool:
        """Whether the growing block is a paragraph (or a line of one being written)."""
        if self._kind is not None or not self._partial:
            return self._kind == "paragraph"
        return _kind_of(self._partial) == "paragraph" and not _starts_block(self._partial)

    def pending_lines(self) -> list[str]:
        """The growing block's lines, the one being written last (for measuring it)."""
        return [*self._lines, self._partial] if self._partial else list(self._lines)

    @property
    def kind(self) -> BlockKind | None:
        """What the growing block is, if one has begun."""
        return self._kind

    def close(self) -> list[str]:
        """The stream ended: what is left, as a final block (none if only blanks are left)."""
        if self._partial:
            self._lines.append(self._partial)
            self._partial = ""
        return self._finish()

    def _finish(self) -> list[str]:
        source = "\n".join(self._lines).strip("\n")
        self._lines, self._kind, self._fence, self._blank_in_list = [], None, "", False
        return [source] if source.strip() else []

    def _start(self, kind: BlockKind, line: str) -> list[str]:
        done = self._finish()
        self._kind = kind
        self._lines = [line]
        return done

    def _line(self, line: str) -> list[str]:
        if self._kind == "code":
            return self._code_line(line)
        if not line.strip():
            return self._blank(line)
        if self._kind == "list" and self._continues_list(line):
            self._blank_in_list = False
            self._lines.append(line)
            return []
        return self._new_line(line)

    def _code_line(self, line: str) -> list[str]:
        self._lines.append(line)
        stripped = line.strip()
        closes = stripped.startswith(self._fence) and not stripped.strip(self._fence[0])
        return self._finish() if closes else []

    def _blank(self, line: str) -> list[str]:
        if self._kind == "list":  # a list may go on after a blank line (a loose list)
            self._blank_in_list = True
            self._lines.append(line)
            return []
        return self._finish()

    def _continues_list(self, line: str) -> bool:
        if _LIST_ITEM.match(line) or line.startswith(("  ", "\t")):
            return True
        return not self._blank_in_list and not _starts_block(line)  # a lazy continuation

    def _new_line(self, line: str) -> list[str]:
        fence = _FENCE.match(line)
        if fence:
            done = self._start("code", line)
            self._fence = fence.group(1)
            return done
        if self._kind == "paragraph" and _SETEXT.match(line):
            self._lines.append(line)  # the paragraph was a heading, underlined
            return self._finish()
        if _HEADING.match(line) or _RULE.match(line):
            kind: BlockKind = "heading" if _HEADING.match(line) else "rule"
            return self._start(kind, line) + self._finish()
        kind = _kind_of(line)
        if kind == self._kind and kind != "heading":
            self._lines.append(line)
            return []
        return self._start(kind, line)


def _kind_of(line: str) -> BlockKind:
    if _LIST_ITEM.match(line):
        return "list"
    if _TABLE_ROW.match(line):
        return "table"
    if _QUOTE.match(line):
        return "quote"
    return "paragraph"


def _starts_block(line: str) -> bool:
    return bool(
        _FENCE.match(line)
        or _HEADING.match(line)
        or _RULE.match(line)
        or _TABLE_ROW.match(line)
        or _QUOTE.match(line)
    )
